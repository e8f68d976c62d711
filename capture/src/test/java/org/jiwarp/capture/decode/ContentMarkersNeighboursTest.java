package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The header checks that tell a marker from a look-alike inside a header: each rule of
 * {@link ContentMarkers.Neighbours} on its own, a header breaking exactly it counting one.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ContentMarkersNeighboursTest {

    @Test
    void anUntaggedHeaderFollowsItsQueuesMsnAndMo() {
        ContentMarkers.Neighbours neighbours = new ContentMarkers.Neighbours();
        follow(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 5, 0, 20));
        assertEquals(0, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 6, 0, 20)));
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 7, 0, 20)), "MSN");
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 6, 4, 20)), "MO");
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_READ_REQUEST, 6, 0, 20)),
                "a Send's queue");
        // MSN 0 is never sent (RFC 5041 section 5.1) and is not the next one either.
        assertEquals(2, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 0, 0, 20)), "MSN 0");
        // Another opcode on the Send queue takes the next MSN too.
        assertEquals(0, count(neighbours, untagged(RdmapOpcode.IMMEDIATE_DATA, true, DdpHeaders.QN_SEND, 6, 0, 8)));
        assertEquals(1, count(new ContentMarkers.Neighbours(),
                untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 0, 0, 20)), "MSN 0 on a fresh queue");
    }

    @Test
    void aMessagesNextSegmentKeepsItsMsnAndContinuesItsMo() {
        ContentMarkers.Neighbours neighbours = new ContentMarkers.Neighbours();
        follow(neighbours, untagged(RdmapOpcode.SEND, false, DdpHeaders.QN_SEND, 3, 0, 100));
        assertEquals(0, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 3, 100, 20)));
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 3, 0, 20)), "MO");
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.SEND, true, DdpHeaders.QN_SEND, 4, 100, 20)), "MSN");
    }

    @Test
    void aReadRequestOrTerminateOnAQueueWithoutHistoryHasMo0() {
        ContentMarkers.Neighbours neighbours = new ContentMarkers.Neighbours();
        assertEquals(0, count(neighbours, untagged(RdmapOpcode.RDMA_READ_REQUEST, true, 1, 7, 0, 28)));
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.RDMA_READ_REQUEST, true, 1, 7, 5120, 28)), "MO");
        assertEquals(1, count(neighbours, untagged(RdmapOpcode.TERMINATE, true, 2, 1, 20, 4)), "MO");
        assertEquals(0, count(neighbours, untagged(RdmapOpcode.SEND, true, 0, 9, 5120, 4)), "a Send may be mid-message");
    }

    @Test
    void aTaggedSegmentContinuesTheStagAndToOfAnUnfinishedMessage() {
        ContentMarkers.Neighbours neighbours = new ContentMarkers.Neighbours();
        follow(neighbours, tagged(false, 0x11, 0x1000, 64));
        assertEquals(0, count(neighbours, tagged(true, 0x11, 0x1040, 8)));
        assertEquals(1, count(neighbours, tagged(true, 0x12, 0x1040, 8)), "STag");
        assertEquals(1, count(neighbours, tagged(true, 0x11, 0x1000, 8)), "TO");
        follow(neighbours, tagged(true, 0x11, 0x1040, 8));
        assertEquals(0, count(neighbours, tagged(true, 0x12, 0x9000, 8)), "a new message");
    }

    private static int count(ContentMarkers.Neighbours neighbours, byte[] fpdu) {
        return neighbours.inconsistencies(fpdu, Math.min(fpdu.length, ContentMarkers.Neighbours.PREFIX));
    }

    private static void follow(ContentMarkers.Neighbours neighbours, byte[] fpdu) {
        neighbours.follow(fpdu, fpdu.length);
    }

    /** ULPDU_LENGTH and an untagged ULPDU with {@code body} octets after its DDP header. */
    private static byte[] untagged(RdmapOpcode opcode, boolean last, long qn, long msn, long mo, int body) {
        ByteBuf out = Unpooled.buffer();
        out.writeShort(DdpHeaders.UNTAGGED_HEADER_LENGTH + body);
        DdpHeaders.writeUntagged(out, last, RdmapHeaders.controlByte(opcode), 0, qn, msn, mo);
        out.writeZero(body);
        return drain(out);
    }

    private static byte[] tagged(boolean last, int stag, long to, int payload) {
        ByteBuf out = Unpooled.buffer();
        out.writeShort(DdpHeaders.TAGGED_HEADER_LENGTH + payload);
        DdpHeaders.writeTagged(out, last, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), stag, to);
        out.writeZero(payload);
        return drain(out);
    }

    private static byte[] drain(ByteBuf out) {
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }
}
