package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduWriter;
import org.junit.jupiter.api.Test;

/** {@link FpduFramer} against {@link FpduWriter}, the copying reference, and its zero-copy promise. */
class FpduFramerTest {

    @Test
    void sameBytesAsFpduWriter() {
        Property.onShallowStack(() -> Property.forAll("FpduFramer == FpduWriter", random -> {
            boolean crc = random.nextBoolean();
            boolean markers = random.nextBoolean();
            byte[][] ulpdus = FpduTestSupport.randomUlpdus(random, 6, 3000, 100, markers);
            assertSameAsWriter(crc, markers, ulpdus);
        }));
    }

    /** Every combination of CRC and markers over hand-picked streams. */
    @Test
    void chosenStreams() {
        for (boolean crc : new boolean[] {false, true}) {
            for (boolean markers : new boolean[] {false, true}) {
                // Zero-length ULPDUs, alone and between others (a marker can then fall before the CRC).
                assertSameAsWriter(crc, markers, new byte[0]);
                assertSameAsWriter(crc, markers, new byte[0], new byte[0], pattern(1), new byte[0], pattern(2));
                // ULPDUs crossing several marker positions, at every pad length.
                assertSameAsWriter(crc, markers, pattern(3000), pattern(2999), pattern(2998), pattern(2997));
                // ULPDUs that end one octet before, at, and after a marker position.
                for (int length = 500; length < 520; length++) {
                    assertSameAsWriter(crc, markers, pattern(length), pattern(length), pattern(7));
                }
                // The largest ULPDU every stream position allows.
                assertSameAsWriter(crc, markers, pattern(markers ? FpduTestSupport.MAX_MARKED_ULPDU_LENGTH
                        : Fpdu.MAX_ULPDU_LENGTH), pattern(100));
            }
        }
    }

    @Test
    void maximalUlpduWithoutMarkers() {
        byte[] wire = assertSameAsWriter(true, false, pattern(Fpdu.MAX_ULPDU_LENGTH), pattern(Fpdu.MAX_ULPDU_LENGTH));
        assertEquals(2 * Fpdu.length(Fpdu.MAX_ULPDU_LENGTH), wire.length);
        assertSameAsWriter(false, false, pattern(Fpdu.MAX_ULPDU_LENGTH));
    }

    /**
     * A marker falls right before the CRC field: the pad of the first FPDU ends at stream position
     * 512, so the marker goes between the pad and the CRC, inside the FPDU and its CRC.
     */
    @Test
    void markerRightBeforeTheCrc() {
        // From position 0: leading marker (4), length field (2), 504 ULPDU octets and 2 pad octets end
        // at 512, a marker position, where the CRC field would start.
        int length = 504;
        assertEquals(512, 4 + 2 + length + Fpdu.padLength(length));
        for (boolean crc : new boolean[] {false, true}) {
            byte[] wire = assertSameAsWriter(crc, true, pattern(length), pattern(10));
            // The marker at 512 sits between the pad and the CRC and points back 508 octets.
            assertEquals(0, getShort(wire, 512));
            assertEquals(512 - 4, getShort(wire, 514));
            if (crc) {
                CRC32C expected = new CRC32C();
                expected.update(wire, 0, 516);
                assertEquals((int) expected.getValue(), intLE(wire, 516));
            } else {
                assertEquals(0, intLE(wire, 516));
            }
            // The FPDU ends after that marker and the CRC: the next one starts at 520.
            assertEquals(10, getShort(wire, 520));
            assertEquals(520 + Fpdu.length(10), wire.length);
        }
    }

    @Test
    void streamPositionFollowsTheWriter() {
        FpduFramer framer = new FpduFramer(true, true);
        EmbeddedChannel channel = new EmbeddedChannel(framer);
        FpduWriter writer = new FpduWriter(true, true);
        try {
            for (int length : new int[] {0, 1, 511, 512, 2000, 65000, 3}) {
                byte[] framed = FpduTestSupport.frame(channel, pattern(length));
                ByteBuf ulpdu = Unpooled.wrappedBuffer(pattern(length));
                ByteBuf out = Unpooled.buffer();
                try {
                    writer.write(ulpdu, out);
                    assertArrayEquals(FpduTestSupport.bytes(out), framed);
                } finally {
                    ulpdu.release();
                    out.release();
                }
                assertEquals(writer.streamPosition(), framer.streamPosition());
            }
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    @Test
    void oversizedUlpduFailsThePromiseAndIsReleased() {
        FpduFramer framer = new FpduFramer(true, false);
        EmbeddedChannel channel = new EmbeddedChannel(framer);
        try {
            FpduTestSupport.frame(channel, pattern(10));
            long before = framer.streamPosition();
            ByteBuf big = channel.alloc().buffer(Fpdu.MAX_ULPDU_LENGTH + 1).writeZero(Fpdu.MAX_ULPDU_LENGTH + 1);
            ChannelFuture future = channel.writeAndFlush(big);
            assertTrue(future.isDone());
            assertInstanceOf(IllegalArgumentException.class, future.cause());
            assertEquals(0, big.refCnt(), "the oversized ULPDU was released");
            assertNull(channel.readOutbound(), "nothing written for it");
            assertEquals(before, framer.streamPosition());
            // The stream goes on as if it had not been offered.
            assertArrayEquals(FpduTestSupport.writeWithFpduWriter(true, false, pattern(10), pattern(20)),
                    concat(FpduTestSupport.writeWithFpduWriter(true, false, pattern(10)),
                            FpduTestSupport.frame(channel, pattern(20))));
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    /**
     * With markers, a 65535-octet ULPDU at stream position 0 would need a marker 66044 octets after
     * its length field, beyond the 16-bit FPDUPTR: refused, as FpduWriter refuses it.
     */
    @Test
    void fpduPtrOverflowIsRefusedLikeTheWriter() {
        ByteBuf ulpdu = Unpooled.wrappedBuffer(new byte[Fpdu.MAX_ULPDU_LENGTH]);
        ByteBuf out = Unpooled.buffer();
        try {
            assertThrows(IllegalArgumentException.class, () -> new FpduWriter(true, true).write(ulpdu, out));
        } finally {
            ulpdu.release();
            out.release();
        }
        EmbeddedChannel channel = new EmbeddedChannel(new FpduFramer(true, true));
        try {
            ByteBuf big = channel.alloc().buffer(Fpdu.MAX_ULPDU_LENGTH).writeZero(Fpdu.MAX_ULPDU_LENGTH);
            ChannelFuture future = channel.writeAndFlush(big);
            assertInstanceOf(IllegalArgumentException.class, future.cause());
            assertEquals(0, big.refCnt());
            assertNull(channel.readOutbound());
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    /**
     * The payload is not copied: the FPDU is one composite whose ULPDU components are views of the
     * very array the ULPDU was written from, so a later change to that array shows in the FPDU.
     */
    @Test
    void payloadIsNotCopied() {
        for (boolean markers : new boolean[] {false, true}) {
            byte[] data = pattern(3000);
            EmbeddedChannel channel = new EmbeddedChannel(new FpduFramer(false, markers));
            java.util.List<ByteBuf> pieces = new java.util.ArrayList<>();
            try {
                channel.writeAndFlush(Unpooled.wrappedBuffer(data));
                for (Object o; (o = channel.readOutbound()) != null; ) {
                    pieces.add((ByteBuf) o);
                }
                int payloadPieces = 0;
                int payloadOctets = 0;
                for (ByteBuf piece : pieces) {
                    if (piece.hasArray() && piece.array() == data) {
                        payloadPieces++;
                        payloadOctets += piece.readableBytes();
                    }
                }
                assertEquals(3000, payloadOctets, "every ULPDU octet is a view of the original array");
                // Markers at 512, 1024, ..., 2560 cut the ULPDU (octets 6..3006 of the stream) into 6 pieces.
                assertEquals(markers ? 6 : 1, payloadPieces);
                assertEquals(markers ? 2 * 6 + 1 : 3, pieces.size(), "overhead and ULPDU pieces, none assembled");

                byte[] before = concatenate(pieces);
                int header = markers ? 4 : 0;
                data[0] ^= (byte) 0xFF;
                data[2999] ^= (byte) 0xFF;
                byte[] after = concatenate(pieces);
                assertEquals((byte) (before[header + 2] ^ 0xFF), after[header + 2], "first ULPDU octet is shared");
                int lastAt = header + 2 + 2999 + (markers ? 4 * 5 : 0);
                assertEquals((byte) (before[lastAt] ^ 0xFF), after[lastAt], "last ULPDU octet is shared");
            } finally {
                for (ByteBuf piece : pieces) {
                    piece.release();
                }
                FpduTestSupport.finish(channel);
            }
        }
    }

    private static byte[] concatenate(java.util.List<ByteBuf> pieces) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (ByteBuf piece : pieces) {
            out.writeBytes(FpduTestSupport.bytes(piece));
        }
        return out.toByteArray();
    }

    /**
     * With CRC on, registered memory that changes after the write and before the flush (a Write
     * placed into the source of a Read Response queued in the same read batch) changes neither the
     * FPDU nor its CRC: the CRC covers the octets that go out. Both paths: a ULPDU in one buffer
     * (markers on), and a ULPDU in parts (header and a slice of registered memory).
     */
    @Test
    void crcCoversTheOctetsThatGoOutWhenMemoryChangesBeforeTheFlush() {
        for (boolean markers : new boolean[] {false, true}) {
            for (boolean parts : new boolean[] {false, true}) {
                byte[] memory = pattern(3000);
                byte[] expected = FpduTestSupport.writeWithFpduWriter(true, markers, memory.clone());
                EmbeddedChannel channel = new EmbeddedChannel(new FpduFramer(true, markers));
                try {
                    if (parts) {
                        ByteBuf header = channel.alloc().buffer(UlpduParts.HEADROOM + 100);
                        header.writerIndex(UlpduParts.HEADROOM).readerIndex(UlpduParts.HEADROOM);
                        header.writeBytes(memory, 0, 100);
                        channel.write(UlpduParts.of(header, Unpooled.wrappedBuffer(memory, 100, 2900)));
                    } else {
                        channel.write(Unpooled.wrappedBuffer(memory));
                    }
                    Arrays.fill(memory, 50, 2950, (byte) 0x5A);
                    channel.flush();
                    assertArrayEquals(expected, FpduTestSupport.drainOutbound(channel, parts && !markers ? 2 : 1),
                            "markers " + markers + ", parts " + parts);
                } finally {
                    FpduTestSupport.finish(channel);
                }
            }
        }
    }

    @Test
    void promiseCompletesWhenFlushed() {
        EmbeddedChannel channel = new EmbeddedChannel(new FpduFramer(true, true));
        try {
            ChannelFuture first = channel.write(channel.alloc().buffer().writeZero(100));
            ChannelFuture second = channel.write(channel.alloc().buffer().writeZero(700));
            assertFalse(first.isDone());
            assertFalse(second.isDone());
            channel.flush();
            assertTrue(first.isSuccess());
            assertTrue(second.isSuccess());
            FpduTestSupport.drainOutbound(channel, 2);
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    @Test
    void otherMessagesPassThrough() {
        FpduFramer framer = new FpduFramer(true, true);
        EmbeddedChannel channel = new EmbeddedChannel(framer);
        try {
            Object message = "not a ULPDU";
            channel.writeAndFlush(message);
            assertSame(message, channel.readOutbound());
            assertEquals(0, framer.streamPosition());
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    private static byte[] assertSameAsWriter(boolean crc, boolean markers, byte[]... ulpdus) {
        byte[] expected = FpduTestSupport.writeWithFpduWriter(crc, markers, ulpdus);
        FpduFramer framer = new FpduFramer(crc, markers);
        EmbeddedChannel channel = new EmbeddedChannel(framer);
        try {
            byte[] actual = FpduTestSupport.frame(channel, ulpdus);
            if (!Arrays.equals(expected, actual)) {
                assertEquals(expected.length, actual.length, "wire length, crc=" + crc + " markers=" + markers);
                assertEquals(-1, Arrays.mismatch(expected, actual), "first differing octet, crc=" + crc
                        + " markers=" + markers);
            }
            assertEquals(expected.length, framer.streamPosition());
            return actual;
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    /** {@code length} octets of a recognisable, non-zero pattern. */
    static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 7 + 1 + (i >>> 8));
        }
        return bytes;
    }

    private static int intLE(byte[] wire, int at) {
        return (wire[at] & 0xFF) | (wire[at + 1] & 0xFF) << 8 | (wire[at + 2] & 0xFF) << 16 | (wire[at + 3] & 0xFF) << 24;
    }

    private static int getShort(byte[] wire, int at) {
        return (wire[at] & 0xFF) << 8 | (wire[at + 1] & 0xFF);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
