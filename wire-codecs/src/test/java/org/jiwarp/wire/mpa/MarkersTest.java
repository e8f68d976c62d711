package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/**
 * MPA markers (RFC 5044 section 4.3): the position arithmetic against a plain model, and the
 * writer's output checked by walking its bytes without any jiwarp code.
 */
class MarkersTest {

    @Test
    void markerLayout() {
        ByteBuf out = Unpooled.buffer(8);
        try {
            Markers.write(out, 0x1234);
            Markers.write(out, 0x1_FFFF);
            assertEquals("00001234" + "0000ffff", ByteBufUtil.hexDump(out));
            assertEquals(0, Markers.reserved(out, 0));
            assertEquals(0x1234, Markers.fpduPtr(out, 0));
            out.setShort(4, 0xABCD);
            assertEquals(0xABCD, Markers.reserved(out, 4));
            assertEquals(0xFFFF, Markers.fpduPtr(out, 4));
        } finally {
            out.release();
        }
    }

    @Test
    void positions() {
        long[] bases = {0, 512, 1L << 31, 1L << 32, (1L << 40) + 512 * 7, Long.MAX_VALUE - 511 - 4096};
        for (long base : bases) {
            for (long p = base; p < base + 2048; p++) {
                boolean expected = p % 512 == 0;
                assertEquals(expected, Markers.isMarkerPosition(p), "position " + p);
                long next = (p + 511) / 512 * 512;
                assertEquals(next - p, Markers.untilNextMarker(p), "until next from " + p);
            }
        }
    }

    @Test
    void countAndMarkedLengthMatchTheModel() {
        Property.forAll("marker count model", random -> {
            long anywhere = random.nextInt(4) == 0 ? random.nextInt(4096) : random.nextLong(1L << 48);
            long start = random.nextBoolean() ? anywhere & ~3L : anywhere;
            int unmarked = random.nextInt(8) == 0 ? random.nextInt(Fpdu.length(Fpdu.MAX_ULPDU_LENGTH) + 1)
                    : random.nextInt(3000);
            int wire = FpduStreams.wireLength(start, unmarked, true);
            int count = (wire - unmarked) / 4;
            assertEquals(count, Markers.count(start, unmarked), () -> "count from " + start + " len " + unmarked);
            assertEquals(wire, Markers.markedLength(start, unmarked));
        });
    }

    @Test
    void countEdges() {
        assertEquals(0, Markers.count(0, 0));
        assertEquals(1, Markers.count(0, 8));
        assertEquals(1, Markers.count(0, 508));
        // 508 data octets after the leading marker end exactly at 512: the next marker belongs to the next FPDU.
        assertEquals(512, Markers.markedLength(0, 508));
        assertEquals(2, Markers.count(0, 509));
        assertEquals(0, Markers.count(4, 508));
        assertEquals(1, Markers.count(4, 509));
        assertEquals(1, Markers.count(508, 4 + 1));
        assertEquals(0, Markers.count(508, 4));
        assertEquals(2, Markers.count(508, 4 + 508 + 1));
    }

    /**
     * Every 512th octet of a marked stream is a marker whose FPDUPTR points back at the ULPDU_LENGTH
     * field of the FPDU it sits in (0 for a marker leading an FPDU); stripping the markers leaves
     * exactly the unmarked FPDUs, each with a little-endian CRC-32C over its marked bytes.
     */
    @Test
    void writerOutputHasMarkersWhereTheRfcPutsThem() {
        Property.forAll("markers in writer output", random -> {
            byte[][] ulpdus = FpduStreams.randomUlpdus(random, 20, true);
            boolean crc = random.nextBoolean();
            int lead = random.nextInt(8);
            ByteBuf out = FpduStreams.newBuffer(FpduStreams.capacity(ulpdus, lead));
            try {
                out.writeZero(lead);
                long[] starts = FpduStreams.write(new FpduWriter(crc, true), ulpdus, out);
                byte[] wire = ByteBufUtil.getBytes(out, lead, out.writerIndex() - lead);
                assertEquals(starts[ulpdus.length], wire.length);
                verifyMarkers(wire, starts, ulpdus);
                verifyUnmarkedContent(wire, starts, ulpdus, crc);
            } finally {
                out.release();
            }
        });
    }

    @Test
    void noMarkersWhenDisabled() {
        Property.forAll("no markers when disabled", random -> {
            byte[][] ulpdus = FpduStreams.randomUlpdus(random, 20, false);
            boolean crc = random.nextBoolean();
            ByteBuf out = FpduStreams.newBuffer(FpduStreams.capacity(ulpdus, 0));
            try {
                long[] starts = FpduStreams.write(new FpduWriter(crc, false), ulpdus, out);
                byte[] wire = ByteBufUtil.getBytes(out);
                for (int i = 0; i < ulpdus.length; i++) {
                    assertEquals(Fpdu.length(ulpdus[i].length), starts[i + 1] - starts[i], "FPDU " + i);
                }
                long[] unmarkedStarts = starts.clone();
                verifyUnmarkedContentOf(wire, wire, starts, unmarkedStarts, ulpdus, crc);
            } finally {
                out.release();
            }
        });
    }

    @Test
    void firstMarkerLeadsTheFirstFpdu() {
        ByteBuf out = Unpooled.buffer();
        ByteBuf ulpdu = Unpooled.buffer().writeBytes(new byte[] {1, 2, 3, 4});
        try {
            new FpduWriter(false, true).write(ulpdu, out);
            assertEquals("00000000" + "0004" + "01020304" + "0000" + "00000000", ByteBufUtil.hexDump(out));
        } finally {
            out.release();
            ulpdu.release();
        }
    }

    @Test
    void markerInsideAnFpduPointsBackToItsLengthField() {
        // First FPDU: leading marker + 2 + 502 + 0 pad + 4 CRC = 512 octets; the second starts at 512
        // with a leading marker. A 600-octet third ULPDU starting at 512 + 12 = 524 has a marker at
        // 1024, 1024 - 524 = 500 octets after its length field.
        ByteBuf out = Unpooled.buffer();
        ByteBuf a = Unpooled.buffer().writeZero(502);
        ByteBuf b = Unpooled.buffer().writeZero(2);
        ByteBuf c = Unpooled.buffer().writeZero(600);
        try {
            FpduWriter writer = new FpduWriter(false, true);
            assertEquals(512, writer.write(a, out));
            assertEquals(4 + 8, writer.write(b, out));
            assertEquals(Fpdu.length(600) + 4, writer.write(c, out));
            assertEquals(0, out.getInt(512), "leading marker of the second FPDU");
            assertEquals(2, out.getUnsignedShort(516));
            assertEquals(500, out.getInt(1024), "marker inside the third FPDU");
            assertEquals(600, out.getUnsignedShort(1024 - 500));
        } finally {
            out.release();
            a.release();
            b.release();
            c.release();
        }
    }

    private static int u16(byte[] bytes, long index) {
        int i = (int) index;
        return (bytes[i] & 0xFF) << 8 | (bytes[i + 1] & 0xFF);
    }

    private static int fpduAt(long[] starts, long position) {
        for (int i = 0; i + 1 < starts.length; i++) {
            if (position >= starts[i] && position < starts[i + 1]) {
                return i;
            }
        }
        throw new AssertionError("position " + position + " outside every FPDU");
    }

    private static void verifyMarkers(byte[] wire, long[] starts, byte[][] ulpdus) {
        for (int i = 0; i < ulpdus.length; i++) {
            int inside = 0;
            for (long k = (starts[i] + 511) / 512 * 512; k < starts[i + 1]; k += 512) {
                inside++;
            }
            if (Fpdu.length(ulpdus[i].length) + 4 * inside != starts[i + 1] - starts[i]) {
                throw new AssertionError("FPDU " + i + " wire length " + (starts[i + 1] - starts[i]) + " with "
                        + inside + " markers");
            }
        }
        for (long k = 0; k < wire.length; k += 512) {
            long at = k;
            assertTrue(k + 4 <= wire.length, () -> "marker at " + at + " cut off");
            assertEquals(0, u16(wire, k), () -> "marker reserved field at " + at);
            int pointer = u16(wire, k + 2);
            int i = fpduAt(starts, k);
            if (k == starts[i]) {
                assertEquals(0, pointer, () -> "leading marker at " + at);
                assertEquals(ulpdus[i].length, u16(wire, k + 4), () -> "length field after leading marker at " + at);
            } else {
                long header = starts[i] % 512 == 0 ? starts[i] + 4 : starts[i];
                assertEquals(k - header, pointer, () -> "FPDUPTR of marker at " + at + " in FPDU " + i);
                assertEquals(ulpdus[i].length, u16(wire, k - pointer),
                        () -> "FPDUPTR at " + at + " misses the length field");
            }
        }
    }

    /** Removes every marker and checks each FPDU's plain layout and CRC. */
    private static void verifyUnmarkedContent(byte[] wire, long[] starts, byte[][] ulpdus, boolean crc) {
        int markers = (wire.length + 511) / 512;
        byte[] plain = new byte[wire.length - 4 * markers];
        long[] plainStarts = new long[starts.length];
        int p = 0;
        int s = 0;
        for (int k = 0; k < wire.length; ) {
            if (starts[s] == k) {
                plainStarts[s++] = p;
                continue;
            }
            assertTrue(starts[s] > k, "FPDU " + s + " starts inside a marker");
            if (k % 512 == 0) {
                k += 4;
                continue;
            }
            int next = (int) Math.min(Math.min(starts[s], (k / 512 + 1) * 512L), wire.length);
            System.arraycopy(wire, k, plain, p, next - k);
            p += next - k;
            k = next;
        }
        assertEquals(starts.length - 1, s);
        plainStarts[s] = p;
        assertEquals(plain.length, p);
        verifyUnmarkedContentOf(wire, plain, starts, plainStarts, ulpdus, crc);
    }

    private static void verifyUnmarkedContentOf(byte[] wire, byte[] plain, long[] starts, long[] plainStarts,
            byte[][] ulpdus, boolean crc) {
        for (int f = 0; f < ulpdus.length; f++) {
            int i = f;
            int at = (int) plainStarts[i];
            int length = ulpdus[i].length;
            int pad = (4 - (2 + length) % 4) % 4;
            assertEquals(2 + length + pad + 4, plainStarts[i + 1] - plainStarts[i], () -> "plain FPDU " + i);
            assertEquals(length, u16(plain, at), () -> "ULPDU_LENGTH of FPDU " + i);
            if (!Arrays.equals(plain, at + 2, at + 2 + length, ulpdus[i], 0, length)) {
                throw new AssertionError("FPDU " + i + " ULPDU differs");
            }
            for (int j = 0; j < pad; j++) {
                if (plain[at + 2 + length + j] != 0) {
                    throw new AssertionError("pad octet " + j + " of FPDU " + i + " is not zero");
                }
            }
            int crcAt = at + 2 + length + pad;
            int field = (plain[crcAt] & 0xFF) | (plain[crcAt + 1] & 0xFF) << 8 | (plain[crcAt + 2] & 0xFF) << 16
                    | (plain[crcAt + 3] & 0xFF) << 24;
            int expected = 0;
            if (crc) {
                // Over the marked octets: leading marker, length, ULPDU, pad and inner markers.
                CRC32C crc32c = new CRC32C();
                crc32c.update(wire, (int) starts[i], (int) (starts[i + 1] - starts[i]) - 4);
                expected = (int) crc32c.getValue();
            }
            assertEquals(expected, field, () -> "CRC field (little-endian) of FPDU " + i);
            // The CRC field is the last 4 wire octets of the FPDU: no marker falls inside or after it.
            int wireCrcAt = (int) starts[i + 1] - 4;
            int wireField = (wire[wireCrcAt] & 0xFF) | (wire[wireCrcAt + 1] & 0xFF) << 8
                    | (wire[wireCrcAt + 2] & 0xFF) << 16 | (wire[wireCrcAt + 3] & 0xFF) << 24;
            assertEquals(field, wireField, () -> "CRC field position of FPDU " + i);
        }
    }
}
