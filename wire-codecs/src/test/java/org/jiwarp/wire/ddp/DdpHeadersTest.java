package org.jiwarp.wire.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** DDP tagged and untagged headers (RFC 5041 section 4). */
class DdpHeadersTest {

    private static final long[] EXTREME_LONGS = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0xFFFFFFFFL,
        0x1_0000_0000L, 0x8000_0000L};
    private static final long[] EXTREME_U32 = {0, 1, 0x7FFF_FFFFL, 0x8000_0000L, 0xFFFF_FFFEL, 0xFFFF_FFFFL};
    private static final int[] EXTREME_INTS = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};

    private static long anyLong(SplittableRandom random) {
        return random.nextInt(4) == 0 ? EXTREME_LONGS[random.nextInt(EXTREME_LONGS.length)] : random.nextLong();
    }

    private static long anyU32(SplittableRandom random) {
        return random.nextInt(4) == 0 ? EXTREME_U32[random.nextInt(EXTREME_U32.length)]
                : random.nextLong(0x1_0000_0000L);
    }

    private static int anyInt(SplittableRandom random) {
        return random.nextInt(4) == 0 ? EXTREME_INTS[random.nextInt(EXTREME_INTS.length)] : random.nextInt();
    }

    @Test
    void layoutConstants() {
        assertEquals(14, DdpHeaders.TAGGED_HEADER_LENGTH);
        assertEquals(18, DdpHeaders.UNTAGGED_HEADER_LENGTH);
        assertEquals(2, DdpHeaders.STAG_OFFSET);
        assertEquals(6, DdpHeaders.TAGGED_OFFSET_OFFSET);
        assertEquals(6, DdpHeaders.QN_OFFSET);
        assertEquals(10, DdpHeaders.MSN_OFFSET);
        assertEquals(14, DdpHeaders.MO_OFFSET);
        assertEquals(0, DdpHeaders.QN_SEND);
        assertEquals(1, DdpHeaders.QN_READ_REQUEST);
        assertEquals(2, DdpHeaders.QN_TERMINATE);
    }

    @Test
    void knownBytes() {
        ByteBuf out = Unpooled.buffer();
        try {
            // RDMA Write, last, STag 0x00000101, TO 0x00007f0012345678.
            DdpHeaders.writeTagged(out, true, 0x40, 0x101, 0x7f0012345678L);
            assertEquals("c140" + "00000101" + "00007f0012345678", ByteBufUtil.hexDump(out));
            out.clear();
            // Send, last, QN 0, MSN 1, MO 0.
            DdpHeaders.writeUntagged(out, true, 0x43, 0, 0, 1, 0);
            assertEquals("4143" + "00000000" + "00000000" + "00000001" + "00000000", ByteBufUtil.hexDump(out));
            out.clear();
            // Read Request with L clear: QN 1, MSN 0xFFFFFFFF, MO 0xFFFFFFFF.
            DdpHeaders.writeUntagged(out, false, 0x41, 0xCAFEBABE, 1, 0xFFFFFFFFL, 0xFFFFFFFFL);
            assertEquals("0141" + "cafebabe" + "00000001" + "ffffffff" + "ffffffff", ByteBufUtil.hexDump(out));
        } finally {
            out.release();
        }
    }

    @Test
    void taggedRoundTrip() {
        Property.forAll("ddp tagged header round trip", random -> {
            boolean last = random.nextBoolean();
            int rsvdUlp = random.nextInt(256);
            int stag = anyInt(random);
            long taggedOffset = anyLong(random);
            int offset = random.nextInt(16);
            ByteBuf out = Unpooled.buffer(offset + 14 + 4);
            try {
                out.writeZero(offset);
                DdpHeaders.writeTagged(out, last, rsvdUlp, stag, taggedOffset);
                out.writeInt(0xA5A5A5A5);
                assertEquals(offset + 14 + 4, out.writerIndex());
                assertEquals(0xA5A5A5A5, out.getInt(offset + 14), "header overran 14 bytes");
                assertEquals(DdpHeaders.controlByte(true, last), DdpHeaders.control(out, offset));
                assertEquals(true, DdpHeaders.tagged(out, offset));
                assertEquals(last, DdpHeaders.last(out, offset));
                assertEquals(0, DdpHeaders.reserved(out, offset));
                assertEquals(1, DdpHeaders.version(out, offset));
                assertEquals(14, DdpHeaders.headerLength(out, offset));
                assertEquals(rsvdUlp, out.getUnsignedByte(offset + DdpHeaders.RSVD_ULP_OFFSET));
                assertEquals(stag, DdpHeaders.stag(out, offset));
                assertEquals(taggedOffset, DdpHeaders.taggedOffset(out, offset));
                assertEquals(0, out.readerIndex());
            } finally {
                out.release();
            }
        });
    }

    @Test
    void untaggedRoundTrip() {
        Property.forAll("ddp untagged header round trip", random -> {
            boolean last = random.nextBoolean();
            int rsvdUlpControl = random.nextInt(256);
            int rsvdUlpWord = anyInt(random);
            long qn = anyU32(random);
            long msn = anyU32(random);
            long mo = anyU32(random);
            int offset = random.nextInt(16);
            ByteBuf out = Unpooled.buffer(offset + 18 + 4);
            try {
                out.writeZero(offset);
                DdpHeaders.writeUntagged(out, last, rsvdUlpControl, rsvdUlpWord, qn, msn, mo);
                out.writeInt(0x5A5A5A5A);
                assertEquals(offset + 18 + 4, out.writerIndex());
                assertEquals(0x5A5A5A5A, out.getInt(offset + 18), "header overran 18 bytes");
                assertEquals(DdpHeaders.controlByte(false, last), DdpHeaders.control(out, offset));
                assertEquals(false, DdpHeaders.tagged(out, offset));
                assertEquals(last, DdpHeaders.last(out, offset));
                assertEquals(0, DdpHeaders.reserved(out, offset));
                assertEquals(1, DdpHeaders.version(out, offset));
                assertEquals(18, DdpHeaders.headerLength(out, offset));
                assertEquals(rsvdUlpControl, out.getUnsignedByte(offset + DdpHeaders.RSVD_ULP_OFFSET));
                assertEquals(rsvdUlpWord, out.getInt(offset + 2));
                assertEquals(qn, DdpHeaders.qn(out, offset));
                assertEquals(msn, DdpHeaders.msn(out, offset));
                assertEquals(mo, DdpHeaders.mo(out, offset));
            } finally {
                out.release();
            }
        });
    }

    @Test
    void everyControlByteRoundTrips() {
        ByteBuf out = Unpooled.buffer(18);
        try {
            for (int control = 0; control < 256; control++) {
                boolean tagged = (control & 0x80) != 0;
                boolean last = (control & 0x40) != 0;
                int reserved = (control >>> 2) & 0xF;
                int version = control & 3;
                assertEquals(control, DdpHeaders.controlByte(tagged, last, reserved, version), "control " + control);
                out.clear();
                if (tagged) {
                    DdpHeaders.writeTagged(out, control, 0x40, 7, 9L);
                    assertEquals(14, out.writerIndex());
                } else {
                    DdpHeaders.writeUntagged(out, control, 0x43, 0, 1, 2, 3);
                    assertEquals(18, out.writerIndex());
                }
                assertEquals(control, DdpHeaders.control(out, 0));
                assertEquals(tagged, DdpHeaders.tagged(out, 0));
                assertEquals(last, DdpHeaders.last(out, 0));
                assertEquals(reserved, DdpHeaders.reserved(out, 0));
                assertEquals(version, DdpHeaders.version(out, 0));
                assertEquals(tagged ? 14 : 18, DdpHeaders.headerLength(out, 0), "header length by the T bit");
                if (tagged) {
                    assertEquals(7, DdpHeaders.stag(out, 0));
                    assertEquals(9L, DdpHeaders.taggedOffset(out, 0));
                } else {
                    assertEquals(1, DdpHeaders.qn(out, 0));
                    assertEquals(2, DdpHeaders.msn(out, 0));
                    assertEquals(3, DdpHeaders.mo(out, 0));
                }
            }
        } finally {
            out.release();
        }
    }

    @Test
    void controlByteMasksOutOfRangeFields() {
        assertEquals(0x80 | 0x3C | 0x03, DdpHeaders.controlByte(true, false, 0xFF, 0xFF));
        assertEquals(0x40 | 0x04 | 0x02, DdpHeaders.controlByte(false, true, 0x11, 0x06));
        assertEquals(0xC1, DdpHeaders.controlByte(true, true));
        assertEquals(0x01, DdpHeaders.controlByte(false, false));
    }
}
