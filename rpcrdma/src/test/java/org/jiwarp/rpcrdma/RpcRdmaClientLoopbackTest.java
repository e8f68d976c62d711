package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.Random;
import org.jiwarp.rnic.Rnic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The requester over loopback TCP against {@link LoopbackResponder} on a second RNIC: chunks go
 * where RFC 8166 puts them, long calls and long replies take the RDMA_NOMSG paths, credits
 * follow the grant, and a responder's error or a wrong answer ends the call with a clear error.
 */
class RpcRdmaClientLoopbackTest {

    private static final int PROGRAM = 400017;

    private LoopbackResponder responder;
    private Rnic rnic;
    private RpcRdmaClient client;

    @BeforeEach
    void connect() {
        responder = new LoopbackResponder();
        rnic = Rnic.open();
        client = RpcRdmaClient.connect(rnic, responder.address(), new RpcRdmaClient.Options(8, 4096, true,
                Duration.ZERO, Duration.ofSeconds(20)));
    }

    @AfterEach
    void close() {
        client.close();
        rnic.close();
        responder.close();
    }

    @Test
    void privateDataBothWaysAndCreditsFollowTheGrant() {
        assertEquals(new PrivateData(1, true, 4096, 4096), responder.clientPrivateData());
        assertEquals(new PrivateData(1, false, 4096, 4096), client.serverPrivateData());
        assertEquals(1, client.granted(), "one call before any grant");
        echo(RpcRdmaCall.inline(PROGRAM, 1, 1, out -> Xdr.putInt(out, 7))).release();
        assertEquals(LoopbackResponder.CREDITS, client.granted());
    }

    @Test
    void readChunkDataIsPulledAtItsPositionAndWriteChunkDataPushed() {
        byte[] data = new byte[100_000];
        new Random(5).nextBytes(data);
        ByteBuf chunk = Unpooled.directBuffer(data.length).writeBytes(data);
        RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, 2, out -> Xdr.putInt(out, data.length))
                .withReadChunk(chunk).withWriteChunk(data.length), AuthSys.root("t"));
        try {
            ByteBuf echoed = results(reply);
            byte[] call = new byte[echoed.readableBytes()];
            echoed.readBytes(call);
            assertEquals(data.length, Unpooled.wrappedBuffer(call).getInt(call.length - 4),
                    "the Read chunk's position is the end of the inline arguments");
            assertEquals(data.length, ByteBufUtil.getBytes(reply.writeChunkData()).length);
            assertArrayEquals(data, ByteBufUtil.getBytes(reply.writeChunkData()), "the Write chunk");
            assertTrue(reply.invalidatedStag() != 0, "Send with Invalidate of the Write chunk's handle");
            assertEquals(1, client.remoteInvalidations());
        } finally {
            reply.release();
            chunk.release();
        }
    }

    @Test
    void aLongCallGoesInAPositionZeroReadChunkAndALongReplyInTheReplyChunk() {
        byte[] big = new byte[10_000];
        new Random(6).nextBytes(big);
        RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, 3, out -> Xdr.putOpaque(out, big))
                .withReplyChunk(16_384), AuthSys.root("t"));
        try {
            assertEquals(RpcRdmaHeader.RDMA_NOMSG, reply.header().procedure(), reply.header()::toString);
            ByteBuf echoed = results(reply);
            byte[] call = new byte[echoed.readableBytes()];
            echoed.readBytes(call);
            assertArrayEquals(big, java.util.Arrays.copyOfRange(call, call.length - big.length, call.length));
        } finally {
            reply.release();
        }
    }

    @Test
    void responderErrorsAreSaidInWords() {
        responder.misbehave(LoopbackResponder.Misbehaviour.ERR_VERS);
        RpcException vers = assertThrows(RpcException.class, () -> echo(RpcRdmaCall.inline(PROGRAM, 1, 4, out -> { })));
        assertTrue(vers.getMessage().contains("version 1"), vers.getMessage());
        responder.misbehave(LoopbackResponder.Misbehaviour.ERR_CHUNK);
        RpcException chunk = assertThrows(RpcException.class, () -> echo(RpcRdmaCall.inline(PROGRAM, 1, 4, out -> { })));
        assertTrue(chunk.getMessage().contains("ERR_CHUNK"), chunk.getMessage());
    }

    /** RFC 8166 sections 4.6.1 and 4.6.2: RDMA_MSGP and RDMA_DONE are dropped; the real reply answers. */
    @Test
    void rdmaMsgpAndRdmaDoneAreDroppedUnread() {
        responder.misbehave(LoopbackResponder.Misbehaviour.DECOYS_FIRST);
        byte[] arguments = {1, 2, 3, 4};
        RpcRdmaReply reply = echo(RpcRdmaCall.inline(PROGRAM, 1, 4, out -> out.writeBytes(arguments)));
        try {
            assertEquals(RpcRdmaHeader.RDMA_MSG, reply.header().procedure(), reply.header()::toString);
            ByteBuf echoed = results(reply);
            byte[] call = new byte[echoed.readableBytes()];
            echoed.readBytes(call);
            assertArrayEquals(arguments, java.util.Arrays.copyOfRange(call, call.length - 4, call.length),
                    "the echo of the call, not a decoy's result");
        } finally {
            reply.release();
        }
    }

    /**
     * A Send with Invalidate of an STag that is not the requester's: the RNIC terminates the
     * connection (RFC 5040 section 7.4.1), and the call ends with that, not a hang.
     */
    @Test
    void anInvalidationOfAStagNotTheRequestersEndsTheCallClearly() {
        responder.misbehave(LoopbackResponder.Misbehaviour.INVALIDATE_A_FOREIGN_STAG);
        ByteBuf data = Unpooled.directBuffer(64).writeZero(64);
        RpcException e = assertThrows(RpcException.class, () -> echo(RpcRdmaCall.inline(PROGRAM, 1, 5, out -> { })
                .withReadChunk(data).withWriteChunk(64)));
        assertTrue(e.getMessage().contains("the connection failed"), e.getMessage());
        RpcException after = assertThrows(RpcException.class, () -> echo(RpcRdmaCall.inline(PROGRAM, 1, 5, out -> { })));
        assertTrue(after.getMessage().contains("broken"), after.getMessage());
        data.release();
    }

    @Test
    void aWriteListLongerThanTheChunkIsAnError() {
        responder.misbehave(LoopbackResponder.Misbehaviour.WRITE_LIST_TOO_LONG);
        ByteBuf data = Unpooled.directBuffer(64).writeZero(64);
        RpcException e = assertThrows(RpcException.class, () -> echo(RpcRdmaCall.inline(PROGRAM, 1, 6, out -> { })
                .withReadChunk(data).withWriteChunk(64)));
        assertTrue(e.getMessage().contains("Write chunk of 64"), e.getMessage());
        data.release();
    }

    private RpcRdmaReply echo(RpcRdmaCall call) {
        return client.call(call, AuthSys.root("t"));
    }

    private static ByteBuf results(RpcRdmaReply reply) {
        ByteBuf in = reply.message();
        Rpc.getAcceptedReply(in);
        int length = Xdr.getLength(in, 1 << 24, "the echoed call");
        return in.readSlice(length);
    }
}
