package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The RPC-over-RDMA version 1 header codec (RFC 8166 sections 4.2 and 4.3) on headers taken from a
 * capture of jiwarp's NFSv3 client against Linux 6.1's svcrdma over siw (SiwNfsInteropTest, the
 * {@code target/nfs-captures} pcap), and on seeded random headers.
 */
class RpcRdmaHeaderTest {

    /** jiwarp's WRITE call of 4096 octets: RDMA_MSG, one Read segment at XDR position 116. */
    static final String WRITE_CALL = "0f8db9bc000000010000002000000000"
            + "00000001000000740000065f0000100000007fc6b0679ef0" + "00000000" + "00000000" + "00000000"
            + "0f8db9bc0000000000000002000186a3000000030000000700000001";

    /** svcrdma's READ reply: RDMA_MSG, 64 credits, the Write list reporting the 1 octet it wrote. */
    static final String READ_REPLY = "0f8db9ba000000010000004000000000" + "00000000"
            + "00000001000000010000052a0000000100007fc62dc3f010" + "00000000" + "00000000"
            + "0f8db9ba00000001000000000000000000000000000000000000000000000001";

    /** svcrdma's READDIR reply: RDMA_NOMSG, the RPC reply in a Reply chunk of 0x8bcc octets. */
    static final String READDIR_REPLY = "0f8dba47000000010000004000000001" + "00000000" + "00000000"
            + "000000010000000100008afe00008bcc00007fc62dc3f010";

    @Test
    void decodesJiwarpsWriteCallWithAReadChunk() {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(WRITE_CALL));
        RpcRdmaHeader h = RpcRdmaHeader.decode(in);
        assertEquals(0x0f8db9bc, h.xid());
        assertEquals(1, h.version());
        assertEquals(32, h.credits());
        assertEquals(RpcRdmaHeader.RDMA_MSG, h.procedure());
        assertEquals(List.of(new ReadSegment(116, new RdmaSegment(0x65f, 4096, 0x7fc6b0679ef0L))), h.readList());
        assertTrue(h.writeList().isEmpty());
        assertNull(h.replyChunk());
        assertEquals(0x0f8db9bc, Rpc.peekXid(in), "the reader index is left on the RPC message");
        assertReencodes(h, WRITE_CALL);
    }

    @Test
    void decodesSvcrdmasReadReplyWithItsWriteList() {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(READ_REPLY));
        RpcRdmaHeader h = RpcRdmaHeader.decode(in);
        assertEquals(64, h.credits());
        assertEquals(List.of(List.of(new RdmaSegment(0x52a, 1, 0x7fc62dc3f010L))), h.writeList());
        assertTrue(h.readList().isEmpty());
        assertNull(h.replyChunk());
        assertEquals(0x0f8db9ba, Rpc.getAcceptedReply(in));
        assertEquals(0, Xdr.getInt(in), "NFS3_OK");
        assertReencodes(h, READ_REPLY);
    }

    @Test
    void decodesSvcrdmasNomsgReplyWithAReplyChunk() {
        RpcRdmaHeader h = RpcRdmaHeader.decode(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(READDIR_REPLY)));
        assertEquals(RpcRdmaHeader.RDMA_NOMSG, h.procedure());
        assertEquals(List.of(new RdmaSegment(0x8afe, 0x8bcc, 0x7fc62dc3f010L)), h.replyChunk());
        assertReencodes(h, READDIR_REPLY);
    }

    @Test
    void errorsDecodeAndEncode() {
        String vers = "00000007000000010000000100000004" + "00000001" + "0000000100000002";
        RpcRdmaHeader h = RpcRdmaHeader.decode(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(vers)));
        assertEquals(RpcRdmaHeader.ERR_VERS, h.error());
        assertEquals(1, h.versLow());
        assertEquals(2, h.versHigh());
        assertReencodes(h, vers);
        String chunk = "00000007000000010000000100000004" + "00000002";
        assertReencodes(RpcRdmaHeader.decode(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(chunk))), chunk);
        assertThrows(XdrException.class, () -> RpcRdmaHeader.decode(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("00000007000000010000000100000004" + "00000003"))));
    }

    /** What a responder reports back of a chunk it wrote (RFC 8166 section 3.4.6). */
    @Test
    void writtenChunksReportWhatEachSegmentHolds() {
        List<RdmaSegment> chunk = List.of(new RdmaSegment(1, 100, 0x1000), new RdmaSegment(2, 50, 0x2000),
                new RdmaSegment(3, 10, 0x3000));
        assertEquals(160, RpcRdmaHeader.chunkLength(chunk));
        assertEquals(List.of(new RdmaSegment(1, 100, 0x1000), new RdmaSegment(2, 20, 0x2000),
                new RdmaSegment(3, 0, 0x3000)), RpcRdmaHeader.written(chunk, 120));
        assertEquals(0, RpcRdmaHeader.chunkLength(RpcRdmaHeader.written(chunk, 0)));
        assertEquals(0xFFFF_FFFFL, RpcRdmaHeader.chunkLength(List.of(new RdmaSegment(1, -1, 0))), "lengths are unsigned");
        RpcRdmaHeader error = RpcRdmaHeader.error(5, 2, 32, RpcRdmaHeader.ERR_VERS);
        assertEquals(2, error.version(), "the version of the call that failed (section 4.5)");
        assertEquals(1, error.versLow());
        assertEquals(1, error.versHigh());
    }

    /** Section 4.5: ERR_VERS comes back in the version the requester spoke, and decodes in it. */
    @Test
    void anErrorDecodesInAnyVersion() {
        String vers = "00000007000000020000000100000004" + "00000001" + "0000000100000001";
        RpcRdmaHeader h = RpcRdmaHeader.decode(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(vers)));
        assertEquals(2, h.version());
        assertEquals(RpcRdmaHeader.ERR_VERS, h.error());
        assertEquals(1, h.versLow());
        assertReencodes(h, vers);
    }

    @Test
    void anotherVersionDecodesItsFixedPartOnly() {
        RpcRdmaHeader h = RpcRdmaHeader.decode(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("0000000700000002000000010000000000000001")));
        assertEquals(2, h.version());
        assertTrue(h.readList().isEmpty());
    }

    @Test
    void truncatedHeadersAndBadListsAreErrorsNotOverreads() {
        byte[] whole = ByteBufUtil.decodeHexDump(READ_REPLY);
        int headerLength = 16 + 4 + 4 + 4 + 16 + 4 + 4;
        for (int cut = 0; cut < headerLength; cut++) {
            ByteBuf in = Unpooled.wrappedBuffer(whole, 0, cut);
            assertThrows(XdrException.class, () -> RpcRdmaHeader.decode(in), "cut at " + cut);
        }
        // a list discriminant of 2 is neither TRUE nor FALSE
        assertThrows(XdrException.class, () -> RpcRdmaHeader.decode(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("00000007000000010000000100000000" + "00000002"))));
        assertThrows(XdrException.class, () -> RpcRdmaHeader.decode(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("00000007000000010000000100000009"))), "unknown procedure");
        // a Write chunk claiming 2^31 segments
        assertThrows(XdrException.class, () -> RpcRdmaHeader.decode(Unpooled.wrappedBuffer(
                ByteBufUtil.decodeHexDump("00000007000000010000000100000000" + "00000000" + "00000001" + "80000000"))));
    }

    @Test
    void seededRandomHeadersRoundTrip() {
        Random random = new Random(8166);
        for (int i = 0; i < 2000; i++) {
            List<ReadSegment> reads = new ArrayList<>();
            for (int n = random.nextInt(4); n > 0; n--) {
                reads.add(new ReadSegment(random.nextInt() & ~3, segment(random)));
            }
            List<List<RdmaSegment>> writes = new ArrayList<>();
            for (int n = random.nextInt(3); n > 0; n--) {
                writes.add(segments(random));
            }
            List<RdmaSegment> reply = random.nextBoolean() ? segments(random) : null;
            RpcRdmaHeader h = RpcRdmaHeader.message(random.nextInt(), random.nextInt(256),
                    random.nextInt(2), reads, writes, reply);
            ByteBuf out = Unpooled.buffer();
            h.encode(out);
            assertEquals(h.encodedLength(), out.readableBytes(), h::toString);
            assertEquals(h, RpcRdmaHeader.decode(out), "seed 8166, header " + i);
            assertFalse(out.isReadable());
        }
    }

    private static RdmaSegment segment(Random random) {
        return new RdmaSegment(random.nextInt(), random.nextInt(), random.nextLong());
    }

    private static List<RdmaSegment> segments(Random random) {
        List<RdmaSegment> list = new ArrayList<>();
        for (int n = random.nextInt(4); n > 0; n--) {
            list.add(segment(random));
        }
        return list;
    }

    private static void assertReencodes(RpcRdmaHeader h, String hex) {
        ByteBuf out = Unpooled.buffer();
        h.encode(out);
        String expected = hex.substring(0, h.encodedLength() * 2);
        assertArrayEquals(ByteBufUtil.decodeHexDump(expected), ByteBufUtil.getBytes(out));
    }
}
