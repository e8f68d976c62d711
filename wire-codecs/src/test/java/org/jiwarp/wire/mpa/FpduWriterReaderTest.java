package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** {@link FpduWriter} and {@link FpduReader} against each other and against corrupted input. */
class FpduWriterReaderTest {

    @Test
    void roundTrip() {
        Property.forAll("fpdu write/read round trip", random -> {
            boolean crc = random.nextBoolean();
            boolean markers = random.nextBoolean();
            byte[][] ulpdus = FpduStreams.randomUlpdus(random, 20, markers);
            int lead = random.nextInt(8);
            ByteBuf out = FpduStreams.newBuffer(FpduStreams.capacity(ulpdus, lead));
            try {
                out.writeZero(lead);
                long[] starts = FpduStreams.write(new FpduWriter(crc, markers), ulpdus, out);
                out.readerIndex(lead);
                FpduReader reader = new FpduReader(markers);
                long wireTotal = 0;
                for (int i = 0; i < ulpdus.length; i++) {
                    assertEquals(starts[i], reader.streamPosition());
                    FpduReader.Frame frame = reader.read(out);
                    assertNotNull(frame, "FPDU " + i);
                    assertFrame(frame, ulpdus[i], starts[i], starts[i + 1], crc, markers);
                    assertEquals(lead + starts[i + 1], out.readerIndex(), "reader index after FPDU " + i);
                    wireTotal += frame.wireLength;
                }
                assertEquals(out.writerIndex() - lead, wireTotal);
                assertEquals(starts[ulpdus.length], reader.streamPosition());
                assertFalse(out.isReadable());
                assertNull(reader.read(out), "read past the end");
                assertEquals(out.writerIndex(), out.readerIndex());
            } finally {
                out.release();
            }
        });
    }

    static void assertFrame(FpduReader.Frame frame, byte[] ulpdu, long start, long end, boolean crc,
            boolean markers) {
        assertEquals(start, frame.streamPosition);
        assertEquals(end - start, frame.wireLength);
        assertEquals(FpduStreams.wireLength(start, Fpdu.length(ulpdu.length), markers), frame.wireLength);
        assertEquals(ulpdu.length, frame.ulpduLength);
        assertArrayEquals(ulpdu, frame.ulpdu);
        assertArrayEquals(new byte[Fpdu.padLength(ulpdu.length)], frame.pad);
        if (crc) {
            assertTrue(frame.crcGood(), "CRC");
            assertEquals(frame.crcComputed, frame.crcField);
        } else {
            assertEquals(0, frame.crcField, "CRC field with CRC off");
        }
        assertTrue(frame.markersValid, "markers valid");
        int expectedMarkers = (frame.wireLength - Fpdu.length(ulpdu.length)) / 4;
        assertEquals(expectedMarkers, frame.markerPointers.length);
        assertEquals(expectedMarkers, frame.markerPositions.length);
        assertEquals(expectedMarkers, frame.markerReserved.length);
        long header = FpduStreams.headerPosition(start, markers);
        for (int m = 0; m < expectedMarkers; m++) {
            long position = frame.markerPositions[m];
            assertEquals(0, position % 512, "marker position");
            assertTrue(position >= start && position < end);
            assertEquals(position == start ? 0 : position - header, frame.markerPointers[m]);
            assertEquals(0, frame.markerReserved[m]);
        }
    }

    @Test
    void strictPrefixesReturnNullAndConsumeNothing() {
        Property.forAll("fpdu prefixes", random -> {
            boolean crc = random.nextBoolean();
            boolean markers = random.nextBoolean();
            byte[][] ulpdus = FpduStreams.randomUlpdus(random, 8, markers);
            int lead = random.nextInt(8);
            ByteBuf out = FpduStreams.newBuffer(FpduStreams.capacity(ulpdus, lead));
            try {
                out.writeZero(lead);
                long[] starts = FpduStreams.write(new FpduWriter(crc, markers), ulpdus, out);
                int end = out.writerIndex();
                out.readerIndex(lead);
                FpduReader reader = new FpduReader(markers);
                for (int i = 0; i < ulpdus.length; i++) {
                    int wire = (int) (starts[i + 1] - starts[i]);
                    int from = lead + (int) starts[i];
                    int[] cuts = {0, 1, 2, 3, 4, 5, 6, 7, wire / 2, wire - 5, wire - 4, wire - 1,
                        random.nextInt(wire)};
                    for (int cut : cuts) {
                        if (cut < 0 || cut >= wire) {
                            continue;
                        }
                        out.writerIndex(from + cut);
                        assertNull(reader.read(out), "FPDU " + i + " cut at " + cut + " of " + wire);
                        assertEquals(from, out.readerIndex(), "consumed on a prefix");
                        assertEquals(starts[i], reader.streamPosition(), "stream position moved on a prefix");
                    }
                    // Exactly the FPDU, nothing after it: complete.
                    out.writerIndex(from + wire);
                    FpduReader.Frame frame = reader.read(out);
                    assertNotNull(frame);
                    assertFrame(frame, ulpdus[i], starts[i], starts[i + 1], crc, markers);
                    out.writerIndex(end);
                }
            } finally {
                out.release();
            }
        });
    }

    @Test
    void flippedBitIsDetected() {
        Property.forAll("fpdu bit flip", random -> {
            boolean markers = random.nextBoolean();
            byte[][] ulpdus = FpduStreams.randomUlpdus(random, 6, markers);
            ByteBuf out = FpduStreams.newBuffer(FpduStreams.capacity(ulpdus, 0));
            try {
                long[] starts = FpduStreams.write(new FpduWriter(true, markers), ulpdus, out);
                int victim = random.nextInt(ulpdus.length);
                int wire = (int) (starts[victim + 1] - starts[victim]);
                int at = (int) starts[victim] + pickOctet(random, wire, starts[victim], markers, ulpdus[victim].length);
                int bit = 1 << random.nextInt(8);
                out.setByte(at, out.getByte(at) ^ bit);

                FpduReader reader = new FpduReader(markers);
                for (int i = 0; i < victim; i++) {
                    assertFrame(reader.read(out), ulpdus[i], starts[i], starts[i + 1], true, markers);
                }
                FpduReader.Frame frame = reader.read(out);
                long header = FpduStreams.headerPosition(starts[victim], markers);
                boolean inLength = at == header || at == header + 1;
                boolean inMarker = markers && at % 512 < 4;
                if (inLength) {
                    assertTrue(frame == null || frame.ulpduLength != ulpdus[victim].length,
                            "flip in the length field went unnoticed");
                    return;
                }
                assertNotNull(frame);
                assertEquals(ulpdus[victim].length, frame.ulpduLength);
                assertEquals(wire, frame.wireLength);
                assertFalse(frame.crcGood(), () -> "flip at octet " + (at - starts[victim]) + " of " + wire
                        + " passed the CRC");
                if (inMarker && at % 512 >= 2) {
                    assertFalse(frame.markersValid, "flip in FPDUPTR");
                } else {
                    assertTrue(frame.markersValid);
                }
            } finally {
                out.release();
            }
        });
    }

    /** An octet of the FPDU, biased towards the length field, markers, pad and CRC. */
    private static int pickOctet(SplittableRandom random, int wire, long start, boolean markers, int ulpduLength) {
        switch (random.nextInt(6)) {
            case 0:
                return (int) (FpduStreams.headerPosition(start, markers) - start) + random.nextInt(2);
            case 1:
                return wire - 1 - random.nextInt(4 + Fpdu.padLength(ulpduLength));
            case 2: {
                if (markers) {
                    long first = (start + 511) / 512 * 512;
                    if (first < start + wire) {
                        long count = (start + wire - first + 511) / 512;
                        long marker = first + 512 * random.nextLong(count);
                        return (int) (marker - start) + random.nextInt(4);
                    }
                }
                return random.nextInt(wire);
            }
            default:
                return random.nextInt(wire);
        }
    }

    @Test
    void everyBitOfASmallFpduIsCovered() {
        ByteBuf out = Unpooled.buffer();
        ByteBuf ulpdu = Unpooled.buffer().writeBytes(new byte[] {10, 20, 30, 40, 50});
        try {
            new FpduWriter(true, false).write(ulpdu, out);
            int wire = out.writerIndex();
            for (int i = 0; i < wire; i++) {
                for (int bit = 0; bit < 8; bit++) {
                    out.setByte(i, out.getByte(i) ^ (1 << bit));
                    out.readerIndex(0);
                    FpduReader.Frame frame = new FpduReader(false).read(out);
                    if (i < 2) {
                        assertTrue(frame == null || frame.ulpduLength != 5);
                    } else {
                        assertNotNull(frame);
                        assertFalse(frame.crcGood(), "octet " + i + " bit " + bit);
                    }
                    out.setByte(i, out.getByte(i) ^ (1 << bit));
                }
            }
        } finally {
            out.release();
            ulpdu.release();
        }
    }

    @Test
    void knownBytesWithCrc() {
        // "123456789" framed: 0009 | 313233343536373839 | 00 | CRC over those 12 octets, little-endian.
        ByteBuf out = Unpooled.buffer();
        ByteBuf ulpdu = Unpooled.buffer().writeBytes("123456789".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        try {
            assertEquals(16, new FpduWriter(true, false).write(ulpdu, out));
            byte[] covered = new byte[12];
            out.getBytes(0, covered);
            CRC32C crc = new CRC32C();
            crc.update(covered);
            assertEquals((int) crc.getValue(), out.getIntLE(12));
            assertEquals(9, out.getUnsignedShort(0));
            assertEquals(0, out.getByte(11));
        } finally {
            out.release();
            ulpdu.release();
        }
    }

    @Test
    void oversizedUlpduIsRejected() {
        ByteBuf out = Unpooled.buffer();
        ByteBuf ulpdu = Unpooled.buffer(Fpdu.MAX_ULPDU_LENGTH + 1).writeZero(Fpdu.MAX_ULPDU_LENGTH + 1);
        try {
            FpduWriter writer = new FpduWriter(true, true);
            assertThrows(IllegalArgumentException.class, () -> writer.write(ulpdu, out));
            assertEquals(0, out.writerIndex());
            assertEquals(0, writer.streamPosition());
        } finally {
            out.release();
            ulpdu.release();
        }
    }

    @Test
    void maximalUlpduWithoutMarkers() {
        assertMaximal(0, Fpdu.MAX_ULPDU_LENGTH, false);
    }

    /**
     * With markers, the longest ULPDU whose markers can all point back, at every stream alignment an
     * FPDU can start at (4-aligned, except 4 mod 512: octets 512..515 are a marker, so no FPDU ends there).
     */
    @Test
    void maximalUlpduWithMarkersAtEveryAlignment() {
        for (int alignment = 0; alignment < 512; alignment += 4) {
            if (alignment != 4) {
                assertMaximal(alignment, FpduStreams.MAX_MARKED_ULPDU_LENGTH, true);
            }
        }
    }

    private static void assertMaximal(int alignment, int length, boolean markers) {
        // A filler FPDU from stream position 0 whose wire length is the wanted alignment (mod 512).
        int filler = -1;
        for (int candidate = 0; candidate < 2048 && filler < 0; candidate++) {
            if (FpduStreams.wireLength(0, Fpdu.length(candidate), markers) % 512 == alignment) {
                filler = candidate;
            }
        }
        if (alignment == 0) {
            filler = -1;
        } else {
            assertTrue(filler >= 0, "no filler for alignment " + alignment);
        }
        byte[] data = new byte[length];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31);
        }
        ByteBuf out = FpduStreams.newBuffer(72_000);
        ByteBuf ulpdu = Unpooled.wrappedBuffer(data);
        ByteBuf fill = Unpooled.wrappedBuffer(new byte[Math.max(filler, 0)]);
        try {
            FpduWriter writer = new FpduWriter(true, markers);
            FpduReader reader = new FpduReader(markers);
            if (filler >= 0) {
                writer.write(fill, out);
                assertNotNull(reader.read(out));
            }
            long start = writer.streamPosition();
            assertEquals(alignment, start % 512);
            int written = writer.write(ulpdu, out);
            assertEquals(FpduStreams.wireLength(start, Fpdu.length(data.length), markers), written);
            FpduReader.Frame frame = reader.read(out);
            assertNotNull(frame);
            assertFrame(frame, data, start, start + written, true, markers);
        } finally {
            out.release();
            ulpdu.release();
            fill.release();
        }
    }

    /**
     * FPDUPTR is 16 bits (RFC 5044 section 4.3): with markers on, a ULPDU whose FPDU would put a
     * marker more than 65535 octets after the ULPDU_LENGTH field must be refused, never written with
     * a truncated pointer. Smallest cases: a 65023-octet ULPDU at stream position 508 (mod 512), a
     * 65527-octet one at 0.
     */
    @Test
    void fpduPtrOverflowIsRefused() {
        ByteBuf out = FpduStreams.newBuffer(70_000);
        ByteBuf ulpdu = Unpooled.wrappedBuffer(new byte[Fpdu.MAX_ULPDU_LENGTH]);
        try {
            FpduWriter writer = new FpduWriter(true, true);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> writer.write(ulpdu, out));
            assertEquals(0, out.writerIndex(), "nothing written");
            assertEquals(0, writer.streamPosition(), "the stream position did not move");
            // 65022 octets fit at any stream position.
            ByteBuf fits = Unpooled.wrappedBuffer(new byte[65022]);
            try {
                writer.write(fits, out);
                assertTrue(new FpduReader(true).read(out).markersValid);
            } finally {
                fits.release();
            }
        } finally {
            out.release();
            ulpdu.release();
        }
    }
}
