package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** XDR (RFC 4506) and ONC RPC headers (RFC 5531), on their own. */
class XdrRpcTest {

    @Test
    void opaqueIsLengthOctetsAndZeroPadding() {
        ByteBuf out = Unpooled.buffer();
        Xdr.putOpaque(out, new byte[] {1, 2, 3, 4, 5});
        assertEquals("00000005" + "0102030405000000", ByteBufUtil.hexDump(out));
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, Xdr.getOpaque(out, 5));
        assertEquals(0, out.readableBytes());
        Xdr.putString(out, "srv");
        assertThrows(XdrException.class, () -> Xdr.getOpaque(out.duplicate(), 2), "over its bound");
        assertEquals("srv", Xdr.getString(out, 3));
    }

    @Test
    void aShortStreamIsAnErrorNotAnOverread() {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("00000008010203"));
        XdrException e = assertThrows(XdrException.class, () -> Xdr.getOpaque(in, 64));
        assertTrue(e.getMessage().contains("ends"), e.getMessage());
        assertThrows(XdrException.class, () -> Xdr.getHyper(Unpooled.wrappedBuffer(new byte[7])));
        assertThrows(XdrException.class, () -> Xdr.getBoolean(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 2})));
    }

    /** The call header of jiwarp's WRITE in the capture (RpcRdmaHeaderTest.WRITE_CALL): AUTH_SYS, machine "jiwarp". */
    @Test
    void callHeaderWithAuthSys() {
        ByteBuf out = Unpooled.buffer();
        Rpc.putCall(out, 0x0f8db9bc, 100003, 3, 7, AuthSys.root("jiwarp"));
        assertEquals("0f8db9bc" + "00000000" + "00000002" + "000186a3" + "00000003" + "00000007"
                + "00000001" + "00000020" + "00000000" + "00000006" + "6a6977617270" + "0000" + "00000000" + "00000000"
                + "00000001" + "00000000" + "00000000" + "00000000", ByteBufUtil.hexDump(out));
        ByteBuf body = Unpooled.wrappedBuffer(AuthSys.root("jiwarp").body());
        assertEquals(new AuthSys(0, "jiwarp", 0, 0, List.of(0)), AuthSys.decode(body));
    }

    @Test
    void repliesThatAreNotSuccessSayWhy() {
        assertEquals(7, Rpc.getAcceptedReply(reply("00000000" + "00000000" + "00000000" + "00000000")));
        assertTrue(assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(
                reply("00000000" + "00000000" + "00000000" + "00000002" + "0000000200000003"))).getMessage()
                .contains("2 to 3"));
        assertTrue(assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(
                reply("00000001" + "00000001" + "00000005"))).getMessage().contains("authentication error 5"));
        assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(
                reply("00000000" + "00000000" + "00000000" + "00000003")));
        assertThrows(XdrException.class, () -> Rpc.getAcceptedReply(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("0000000700000000"))), "a CALL where a REPLY belongs");
    }

    /** The server's side of the same codec: the call header read back, and the replies it writes. */
    @Test
    void callHeaderReadsBackAndServerRepliesDecode() {
        ByteBuf out = Unpooled.buffer();
        Rpc.putCall(out, 0x0f8db9bc, 100003, 3, 7, AuthSys.root("jiwarp"));
        out.writeInt(42);
        RpcCall call = Rpc.getCall(out);
        try {
            assertEquals(0x0f8db9bc, call.xid());
            assertEquals(Rpc.RPC_VERSION, call.rpcVersion());
            assertEquals(100003, call.program());
            assertEquals(3, call.version());
            assertEquals(7, call.procedure());
            assertEquals(AuthSys.FLAVOR, call.credentialFlavor());
            assertEquals(AuthSys.root("jiwarp"), call.credential());
            assertEquals(42, call.arguments().readInt(), "the arguments follow the verifier");
        } finally {
            call.arguments().release();
            out.release();
        }
        ByteBuf accepted = Unpooled.buffer();
        Rpc.putAcceptedReply(accepted, 9, Rpc.SUCCESS);
        assertEquals(9, Rpc.getAcceptedReply(accepted));
        ByteBuf mismatch = Unpooled.buffer();
        Rpc.putRpcMismatch(mismatch, 9);
        assertTrue(assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(mismatch)).getMessage()
                .contains("2 to 2"));
        ByteBuf auth = Unpooled.buffer();
        Rpc.putAuthError(auth, 9, Rpc.AUTH_BADCRED);
        assertTrue(assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(auth)).getMessage()
                .contains("authentication error 1"));
        ByteBuf notACall = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("0000000700000001"));
        assertThrows(XdrException.class, () -> Rpc.getCall(notACall), "a REPLY where a CALL belongs");
    }

    private static ByteBuf reply(String afterType) {
        return Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("00000007" + "00000001" + afterType));
    }
}
