package org.jiwarp.mpa;

import static org.jiwarp.mpa.FpduFramerTest.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/** {@link FpduDeframer}: every error with its Terminate code, what it ignores, and its zero-copy output. */
class FpduDeframerTest {

    /** Three FPDUs: 100, 30 and 50 octets of ULPDU; the victim is the second. */
    private static final byte[][] THREE = {pattern(100), pattern(30), pattern(50)};

    @Test
    void crcBitFlipAnywhereIsACrcError() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, false, THREE);
        int second = Fpdu.length(100);
        int secondLength = Fpdu.length(30);
        // Header: 30 = 0b11110, flipping bit 0x04 gives 26, a shorter FPDU whose "CRC" is ULPDU octets.
        assertBadFpdu(true, false, flip(wire, second + 1, 0x04), TerminateError.LLP_CRC_ERROR);
        // Payload, first and last octet.
        assertBadFpdu(true, false, flip(wire, second + 2, 0x01), TerminateError.LLP_CRC_ERROR);
        assertBadFpdu(true, false, flip(wire, second + 2 + 29, 0x80), TerminateError.LLP_CRC_ERROR);
        // Pad: a 29-octet ULPDU has one pad octet.
        byte[] padded = FpduTestSupport.writeWithFpduWriter(true, false, pattern(100), pattern(29), pattern(50));
        assertEquals(1, Fpdu.padLength(29));
        assertBadFpdu(true, false, flip(padded, second + 2 + 29, 0x10), TerminateError.LLP_CRC_ERROR);
        // Each octet of the CRC field.
        for (int i = 0; i < 4; i++) {
            assertBadFpdu(true, false, flip(wire, second + secondLength - 4 + i, 0x01 << i),
                    TerminateError.LLP_CRC_ERROR);
        }
    }

    @Test
    void crcBitFlipWithMarkersIsACrcError() {
        // Three FPDUs of 600 octets: each holds a marker inside its ULPDU.
        byte[][] ulpdus = {pattern(600), pattern(600), pattern(600)};
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, true, ulpdus);
        int second = 4 + Fpdu.length(600) + 4; // leading marker, FPDU, one marker inside
        assertBadFpdu(true, true, flip(wire, second + 100, 0x02), TerminateError.LLP_CRC_ERROR);
        assertBadFpdu(true, true, flip(wire, second + Fpdu.length(600) + 4 - 1, 0x40), TerminateError.LLP_CRC_ERROR);
    }

    @Test
    void wrongFpduPtrIsAMarkerMismatch() {
        byte[][] ulpdus = {pattern(600), pattern(600), pattern(600)};
        for (boolean crc : new boolean[] {false, true}) {
            byte[] wire = FpduTestSupport.writeWithFpduWriter(crc, true, ulpdus);
            // FPDUs of 616 octets (leading or inner marker included): the marker at 1024 lies inside
            // the second one, which starts at 616.
            assertEquals(1024 - 616, getShort(wire, 1026));
            assertBadFpdu(crc, true, flip(wire, 1027, 0x04), TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH);
            assertBadFpdu(crc, true, flip(wire, 1026, 0x80), TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH);
        }
    }

    @Test
    void wrongLeadingMarkerIsAMarkerMismatch() {
        // The second FPDU starts exactly at 512: its leading marker must carry FPDUPTR 0.
        int first = 502; // leading marker 4 + length 2 + 502 + no pad + CRC 4 = 512
        assertEquals(512, FpduTestSupport.writeWithFpduWriter(true, true, pattern(first)).length);
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, true, pattern(first), pattern(30), pattern(8));
        assertEquals(0, getShort(wire, 514));
        assertEquals(30, getShort(wire, 516));
        // Bits 0 and 1 are taken as zero (fpduPtrLowBitsAreTakenAsZero).
        for (int bit = 2; bit < 16; bit++) {
            assertBadFpdu(true, true, flip(wire, 514 + (bit < 8 ? 1 : 0), 1 << (bit % 8)),
                    TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH);
        }
        // The very first marker of the stream, too.
        assertBadFpdu(false, true, flip(wire, 3, 0x04), TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH,
                List.of());
    }

    /**
     * RFC 5044 section 4.2: a receiver treats the two low bits of FPDUPTR as zero, in the stream's
     * first marker, a leading marker and a marker inside an FPDU (they still count in the CRC).
     */
    @Test
    void fpduPtrLowBitsAreTakenAsZero() {
        byte[][] ulpdus = {pattern(600), pattern(600), pattern(600)};
        byte[] plain = FpduTestSupport.writeWithFpduWriter(false, true, ulpdus);
        assertEquals(1024 - 616, getShort(plain, 1026));
        plain[3] |= 0x03;
        plain[1027] |= 0x01;
        assertUlpdus(ulpdus, deframeWhole(false, true, plain));
        byte[] withCrc = FpduTestSupport.writeWithFpduWriter(true, true, ulpdus);
        withCrc[1027] |= 0x02;
        int second = 4 + Fpdu.length(600) + 4;
        patchCrc(withCrc, second, second + Fpdu.length(600) + 4);
        assertUlpdus(ulpdus, deframeWhole(true, true, withCrc));
    }

    /** RFC 5044 section 4.2: RESERVED is ignored on receive (it still counts in the CRC). */
    @Test
    void markerReservedFieldIsIgnored() {
        byte[][] ulpdus = {pattern(600), pattern(600), pattern(600)};
        byte[] plain = FpduTestSupport.writeWithFpduWriter(false, true, ulpdus);
        plain[1024] = (byte) 0xAB;
        plain[1025] = 0x01;
        plain[0] = 0x7F;
        assertUlpdus(ulpdus, deframeWhole(false, true, plain));

        byte[] withCrc = FpduTestSupport.writeWithFpduWriter(true, true, ulpdus);
        withCrc[1024] = (byte) 0xAB;
        // Fix the CRC of the second FPDU, wire octets 616..1228 (see wrongFpduPtrIsAMarkerMismatch).
        int second = 4 + Fpdu.length(600) + 4;
        int end = second + Fpdu.length(600) + 4;
        patchCrc(withCrc, second, end);
        assertUlpdus(ulpdus, deframeWhole(true, true, withCrc));
        // Without the fix, the CRC catches the change.
        withCrc[1025] = 0x02;
        assertBadFpdu(true, true, withCrc, TerminateError.LLP_CRC_ERROR);
    }

    @Test
    void ulpduLengthOverTheLimitFailsAsSoonAsTheLengthArrives() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, false, pattern(100), pattern(101), pattern(5));
        FpduDeframer deframer = new FpduDeframer(true, false, 100);
        CloseCatcher closes = new CloseCatcher();
        EmbeddedChannel channel = new EmbeddedChannel(closes, deframer);
        try {
            List<byte[]> got = new ArrayList<>();
            int second = Fpdu.length(100);
            channel.writeInbound(Unpooled.wrappedBuffer(wire, 0, second + 1));
            FpduTestSupport.drainInbound(channel, got);
            assertEquals(1, got.size());
            MpaException e = assertThrows(MpaException.class,
                    () -> channel.writeInbound(Unpooled.wrappedBuffer(wire, second + 1, 1)));
            assertSame(TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, e.error());
            assertTrue(deframer.failed());
            assertEquals(0, closes.requested, "MPA leaves the close to the ULP (RFC 5044 section 8)");
            assertNothingMore(channel, Unpooled.wrappedBuffer(wire, second + 2, wire.length - second - 2));
        } finally {
            closes.hold = false;
            FpduTestSupport.finish(channel);
        }
        // Exactly at the limit is fine.
        assertUlpdus(new byte[][] {pattern(100)}, deframeWhole(true, false,
                FpduTestSupport.writeWithFpduWriter(true, false, pattern(100)), 100));
        assertThrows(IllegalArgumentException.class, () -> new FpduDeframer(true, true, 0));
        assertThrows(IllegalArgumentException.class, () -> new FpduDeframer(true, true, 65536));
    }

    @Test
    void crcOffIgnoresTheCrcFieldAndThePad() {
        byte[][] ulpdus = {pattern(29), pattern(600), pattern(0)};
        byte[] wire = FpduTestSupport.writeWithFpduWriter(false, true, ulpdus);
        // First FPDU: marker, length, 29 octets, 1 pad octet, CRC at 36.
        wire[4 + 2 + 29] = 0x55;
        wire[36] = 1;
        wire[37] = 2;
        wire[38] = 3;
        wire[39] = 4;
        wire[wire.length - 1] = (byte) 0xEE;
        assertUlpdus(ulpdus, deframeWhole(false, true, wire));
    }

    /** With CRC on, a garbage pad is fine as long as the CRC covers it (siw does this). */
    @Test
    void garbagePadCoveredByTheCrcIsAccepted() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, false, pattern(29));
        wire[2 + 29] = 0x40;
        patchCrc(wire, 0, wire.length);
        assertUlpdus(new byte[][] {pattern(29)}, deframeWhole(true, false, wire));
    }

    @Test
    void anIncompleteFpduGoesNowhereThoughItsOctetsAreConsumed() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, true, pattern(1000), pattern(3));
        FpduDeframer deframer = new FpduDeframer(true, true);
        EmbeddedChannel channel = new EmbeddedChannel(deframer);
        try {
            // The second FPDU (at 1016) has a marker at 1024, right before its CRC.
            int first = FpduTestSupport.writeWithFpduWriter(true, true, pattern(1000)).length;
            assertEquals(1016, first);
            assertEquals(first + 16, wire.length);
            for (int cut = 0; cut < first; cut += 97) {
                // A fresh prefix each time: nothing goes up, every octet is taken as it comes (streaming).
                EmbeddedChannel probe = new EmbeddedChannel(new FpduDeframer(true, true));
                try {
                    probe.writeInbound(Unpooled.wrappedBuffer(wire, 0, cut));
                    assertNull(probe.readInbound(), "cut at " + cut);
                    assertEquals(cut, ((FpduDeframer) probe.pipeline().first()).streamPosition());
                } finally {
                    FpduTestSupport.finish(probe);
                }
            }
            channel.writeInbound(Unpooled.wrappedBuffer(wire, 0, first - 1));
            assertNull(channel.readInbound());
            assertEquals(first - 1, deframer.streamPosition());
            channel.writeInbound(Unpooled.wrappedBuffer(wire, first - 1, 1));
            List<byte[]> got = new ArrayList<>();
            FpduTestSupport.drainInbound(channel, got);
            assertUlpdus(new byte[][] {pattern(1000)}, got);
            assertEquals(first, deframer.streamPosition());
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    /** A ULPDU without a marker inside comes up as a slice of the received buffer itself. */
    @Test
    void ulpduIsASliceOfTheInput() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, false, pattern(100), pattern(200));
        EmbeddedChannel channel = new EmbeddedChannel(new FpduDeframer(true, false));
        ByteBuf first = null;
        ByteBuf second = null;
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(wire));
            first = channel.readInbound();
            second = channel.readInbound();
            assertSame(wire, first.array(), "a view of the received array, not a copy");
            assertEquals(2, first.arrayOffset() + first.readerIndex());
            assertSame(wire, second.array());
            assertEquals(Fpdu.length(100) + 2, second.arrayOffset() + second.readerIndex());
            wire[2] ^= (byte) 0xFF;
            assertEquals((byte) (pattern(100)[0] ^ 0xFF), first.getByte(first.readerIndex()));
        } finally {
            release(first, second);
            FpduTestSupport.finish(channel);
        }
    }

    /**
     * Up the pipeline, a ULPDU with markers inside comes up gathered into one buffer without them
     * (no composite). A sink without CRC gets it in the pieces between the markers, as they arrive;
     * with CRC, in one piece, once its CRC is verified (RFC 5044 section 8).
     */
    @Test
    void ulpduAroundMarkersIsGatheredWithoutThem() {
        byte[] wire = FpduTestSupport.writeWithFpduWriter(true, true, pattern(3000));
        EmbeddedChannel channel = new EmbeddedChannel(new FpduDeframer(true, true));
        ByteBuf ulpdu = null;
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(wire));
            ulpdu = channel.readInbound();
            assertFalse(ulpdu instanceof CompositeByteBuf, "one buffer, not a composite");
            assertEquals(1, ulpdu.nioBufferCount());
            assertArrayEquals(pattern(3000), FpduTestSupport.bytes(ulpdu));
        } finally {
            release(ulpdu);
            FpduTestSupport.finish(channel);
        }
        // Octets 6..3026 of the stream, cut by the markers at 512, 1024, ..., 2560: a header of up to
        // 32 octets, then the payload in the pieces between the markers.
        assertEquals(6, piecesToSink(false, FpduTestSupport.writeWithFpduWriter(false, true, pattern(3000))),
                "without CRC, one piece per gap between markers");
        assertEquals(1, piecesToSink(true, wire), "with CRC, the verified ULPDU in one piece");
    }

    /** Deframes {@code wire} (one FPDU of {@code pattern(3000)} with markers) into a sink; returns its payload pieces. */
    private static int piecesToSink(boolean crc, byte[] wire) {
        FpduDeframer deframer = new FpduDeframer(crc, true);
        RecordingSink sink = new RecordingSink();
        deframer.deliverTo(sink);
        EmbeddedChannel streamed = new EmbeddedChannel(deframer);
        try {
            streamed.writeInbound(Unpooled.wrappedBuffer(wire));
            assertNull(streamed.readInbound(), "nothing goes up the pipeline past a sink");
            assertEquals(1, sink.ulpdus.size());
            assertArrayEquals(pattern(3000), sink.ulpdus.get(0));
            return sink.pieces;
        } finally {
            FpduTestSupport.finish(streamed);
        }
    }

    @Test
    void zeroLengthUlpdusComeUpEmpty() {
        byte[][] ulpdus = {new byte[0], pattern(1), new byte[0]};
        assertUlpdus(ulpdus, deframeWhole(true, true, FpduTestSupport.writeWithFpduWriter(true, true, ulpdus)));
    }

    /** The error reaches the next handler, which may still send a Terminate; closing is its job, not MPA's. */
    @Test
    void errorGoesUpAndTheUlpCloses() {
        byte[] wire = flip(FpduTestSupport.writeWithFpduWriter(true, false, pattern(10)), 5, 1);
        List<String> events = new ArrayList<>();
        EmbeddedChannel channel = new EmbeddedChannel(new FpduDeframer(true, false), new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                events.add("exception open=" + ctx.channel().isOpen() + " "
                        + ((MpaException) cause).error());
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                events.add("inactive");
            }
        });
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(wire));
            channel.runPendingTasks();
            // RFC 5044 section 8: MPA does not close the connection itself for errors 2 and 3; DDP's ULP does.
            assertEquals(List.of("exception open=true LLP_CRC_ERROR"), events);
            assertTrue(channel.isOpen(), "MPA closed the connection itself");
            // Whatever follows is discarded, good FPDUs included.
            channel.writeInbound(Unpooled.wrappedBuffer(FpduTestSupport.writeWithFpduWriter(true, false, pattern(10))));
            assertNull(channel.readInbound(), "nothing after the error goes up");
            channel.close();
            assertEquals(List.of("exception open=true LLP_CRC_ERROR", "inactive"), events, "the ULP's close");
        } finally {
            FpduTestSupport.finish(channel);
        }
    }

    // --- helpers ---

    /** {@link #assertBadFpdu(boolean, boolean, byte[], TerminateError, List)} with one good FPDU first. */
    private static void assertBadFpdu(boolean crc, boolean markers, byte[] wire, TerminateError expected) {
        assertBadFpdu(crc, markers, wire, expected, List.of(firstUlpdu(markers, wire)));
    }

    /**
     * Feeds {@code wire} whole, in 1-octet and in 7-octet pieces: the {@code good} ULPDUs come up, then
     * the error with its code and a close; octets that still arrive before the close takes effect
     * (held back here) give nothing.
     */
    private static void assertBadFpdu(boolean crc, boolean markers, byte[] wire, TerminateError expected,
            List<byte[]> good) {
        for (int piece : new int[] {wire.length, 1, 7}) {
            FpduDeframer deframer = new FpduDeframer(crc, markers);
            CloseCatcher closes = new CloseCatcher();
            EmbeddedChannel channel = new EmbeddedChannel(closes, deframer);
            try {
                List<byte[]> got = new ArrayList<>();
                MpaException error = null;
                int at = 0;
                while (at < wire.length && error == null) {
                    int n = Math.min(piece, wire.length - at);
                    try {
                        channel.writeInbound(Unpooled.wrappedBuffer(wire, at, n));
                    } catch (MpaException e) {
                        error = e;
                    }
                    at += n;
                    FpduTestSupport.drainInbound(channel, got);
                }
                String what = "pieces of " + piece + ", crc=" + crc + " markers=" + markers;
                assertTrue(error != null, "no error, " + what);
                assertSame(expected, error.error(), what + ": " + error.getMessage());
                // RFC 5044 section 8: layer LLP (2), error type 0, code 0x02 (CRC) or 0x03 (marker/length).
                assertEquals(2, error.error().layer().code());
                assertEquals(0, error.error().errorType());
                assertEquals(expected == TerminateError.LLP_CRC_ERROR ? 0x02 : 0x03, error.error().errorCode());
                assertUlpdus(good.toArray(new byte[0][]), got);
                assertTrue(deframer.failed());
                assertEquals(0, closes.requested, "MPA closed the connection itself (RFC 5044 section 8), " + what);
                if (at < wire.length) {
                    assertNothingMore(channel, Unpooled.wrappedBuffer(wire, at, wire.length - at));
                }
                assertNothingMore(channel, Unpooled.wrappedBuffer(
                        FpduTestSupport.writeWithFpduWriter(crc, markers, pattern(4))));
            } finally {
                closes.hold = false;
                FpduTestSupport.finish(channel);
            }
        }
    }

    /** Octets that arrive after the error are dropped and released; nothing comes up. */
    private static void assertNothingMore(EmbeddedChannel channel, ByteBuf more) {
        channel.writeInbound(more);
        assertNull(channel.readInbound(), "nothing after the error");
        assertEquals(0, more.refCnt(), "dropped octets are released");
    }

    /** Counts close requests and holds them back (while {@code hold}), as if the close were still under way. */
    private static final class CloseCatcher extends ChannelOutboundHandlerAdapter {
        int requested;
        boolean hold = true;

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
            requested++;
            if (!hold) {
                ctx.close(promise);
            }
        }
    }

    private static List<byte[]> deframeWhole(boolean crc, boolean markers, byte[] wire) {
        return deframeWhole(crc, markers, wire, Fpdu.MAX_ULPDU_LENGTH);
    }

    /** Deframes {@code wire} whole and one octet at a time; both must give the same ULPDUs. */
    private static List<byte[]> deframeWhole(boolean crc, boolean markers, byte[] wire, int max) {
        List<List<byte[]>> results = new ArrayList<>();
        for (int[] chunks : new int[][] {{wire.length}, FpduTestSupport.fixedChunks(wire.length, 1)}) {
            FpduDeframer deframer = new FpduDeframer(crc, markers, max);
            EmbeddedChannel channel = new EmbeddedChannel(deframer);
            try {
                results.add(FpduTestSupport.deframe(channel, wire, chunks));
                assertEquals(wire.length, deframer.streamPosition());
            } finally {
                FpduTestSupport.finish(channel);
            }
        }
        assertUlpdus(results.get(0).toArray(new byte[0][]), results.get(1));
        return results.get(0);
    }

    private static byte[] flip(byte[] wire, int at, int bits) {
        byte[] copy = wire.clone();
        copy[at] ^= (byte) bits;
        return copy;
    }

    /** Recomputes the CRC of the FPDU in {@code wire[start, end)} (CRC field last) after an edit. */
    private static void patchCrc(byte[] wire, int start, int end) {
        CRC32C crc = new CRC32C();
        crc.update(wire, start, end - start - 4);
        int value = (int) crc.getValue();
        for (int i = 0; i < 4; i++) {
            wire[end - 4 + i] = (byte) (value >>> (8 * i));
        }
    }

    private static int getShort(byte[] wire, int at) {
        return (wire[at] & 0xFF) << 8 | (wire[at + 1] & 0xFF);
    }

    private static void release(ByteBuf... buffers) {
        for (ByteBuf buf : buffers) {
            if (buf != null) {
                buf.release();
            }
        }
    }

    /** The ULPDU of the first FPDU in {@code wire}, as the reference {@link FpduReader} reads it. */
    private static byte[] firstUlpdu(boolean markers, byte[] wire) {
        ByteBuf buf = Unpooled.wrappedBuffer(wire);
        try {
            return new FpduReader(markers).read(buf).ulpdu;
        } finally {
            buf.release();
        }
    }

    static void assertUlpdus(byte[][] expected, List<byte[]> actual) {
        assertEquals(expected.length, actual.size(), "ULPDU count");
        for (int i = 0; i < expected.length; i++) {
            assertArrayEquals(expected[i], actual.get(i), "ULPDU " + i);
        }
    }
}
