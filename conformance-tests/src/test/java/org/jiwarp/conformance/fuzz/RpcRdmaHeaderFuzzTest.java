package org.jiwarp.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import org.jiwarp.rpcrdma.RpcRdmaHeader;
import org.jiwarp.rpcrdma.XdrException;

/**
 * Fuzzes {@link RpcRdmaHeader#decode} (RFC 8166 sections 4.2 and 4.3), the decoder jiwarp's
 * requester runs on every octet a server sends: any input either decodes or ends in an
 * {@link XdrException} (nothing else, and never a read past the end), and a version 1 RDMA_MSG,
 * RDMA_NOMSG or RDMA_ERROR header encodes back to exactly the octets it was decoded from. CI
 * replays the seeds under {@code RpcRdmaHeaderFuzzTestInputs/} (headers svcrdma and jiwarp sent in
 * SiwNfsInteropTest's capture); see FUZZING.md.
 */
class RpcRdmaHeaderFuzzTest {

    /** Input: the octets of a Send's payload. */
    @FuzzTest(maxDuration = "20s")
    void decode(byte[] bytes) {
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        RpcRdmaHeader header;
        try {
            header = RpcRdmaHeader.decode(in);
        } catch (XdrException rejected) {
            require(rejected.getMessage() != null && !rejected.getMessage().isEmpty(), "an error without words");
            return;
        }
        int consumed = in.readerIndex();
        require(consumed <= bytes.length, "read past the end");
        boolean reencodes = header.version() == RpcRdmaHeader.VERSION
                && (header.procedure() == RpcRdmaHeader.RDMA_MSG || header.procedure() == RpcRdmaHeader.RDMA_NOMSG
                        || header.procedure() == RpcRdmaHeader.RDMA_ERROR);
        if (!reencodes) {
            return;
        }
        ByteBuf out = Unpooled.buffer();
        header.encode(out);
        require(out.readableBytes() == header.encodedLength(), "encodedLength " + header.encodedLength()
                + " for " + out.readableBytes() + " octets");
        byte[] again = ByteBufUtil.getBytes(out);
        require(Arrays.equals(again, Arrays.copyOf(bytes, consumed)), header + " re-encodes as "
                + ByteBufUtil.hexDump(again) + ", decoded from " + ByteBufUtil.hexDump(bytes, 0, consumed));
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
