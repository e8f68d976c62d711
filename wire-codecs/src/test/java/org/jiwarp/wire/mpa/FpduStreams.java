package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;

/**
 * Random FPDU streams for the marker and writer/reader properties, and a plain model of where
 * markers go, written from RFC 5044 section 4.3 without using {@link Markers}.
 */
final class FpduStreams {

    private FpduStreams() {
    }

    /**
     * The longest ULPDU whose FPDU, at any stream position, has every marker within 65535 octets of
     * its ULPDU_LENGTH field, so that FPDUPTR can hold the distance. From 65023 octets on, a marker
     * near the end of the FPDU needs a 17-bit FPDUPTR (see
     * {@code FpduWriterReaderTest#fpduPtrOverflowIsNotCaught}).
     */
    static final int MAX_MARKED_ULPDU_LENGTH = 65022;

    /**
     * 1..{@code maxCount} ULPDUs of 0..3000 octets, about one in 50 up to 65535 (up to
     * {@link #MAX_MARKED_ULPDU_LENGTH} with markers).
     */
    static byte[][] randomUlpdus(SplittableRandom random, int maxCount, boolean markers) {
        int max = markers ? MAX_MARKED_ULPDU_LENGTH : Fpdu.MAX_ULPDU_LENGTH;
        byte[][] ulpdus = new byte[1 + random.nextInt(maxCount)][];
        for (int i = 0; i < ulpdus.length; i++) {
            int length = random.nextInt(50) == 0 ? random.nextInt(max + 1) : random.nextInt(3001);
            ulpdus[i] = Property.bytes(random, length);
        }
        return ulpdus;
    }

    /** Room for the FPDUs of {@code ulpdus}, markers included, after {@code lead} octets. */
    static int capacity(byte[][] ulpdus, int lead) {
        long unmarked = 0;
        for (byte[] ulpdu : ulpdus) {
            unmarked += 2 + ulpdu.length + 3 + 4;
        }
        return (int) (lead + unmarked + 4 * (unmarked / 508 + ulpdus.length + 2));
    }

    /**
     * An output buffer. Heap-wrapped so Netty's paranoid leak detector does not record a stack trace
     * on each of the thousands of accesses per case; it is still released by the caller.
     */
    static ByteBuf newBuffer(int capacity) {
        return Unpooled.wrappedBuffer(new byte[capacity]).clear();
    }

    /**
     * Writes every ULPDU with {@code writer} into {@code out} and returns the stream position (counted
     * from the writer's first octet) of each FPDU, with the end of the last one as the extra last
     * element. Checks the writer's bookkeeping on the way.
     */
    static long[] write(FpduWriter writer, byte[][] ulpdus, ByteBuf out) {
        long[] starts = new long[ulpdus.length + 1];
        int base = out.writerIndex() - (int) writer.streamPosition();
        for (int i = 0; i < ulpdus.length; i++) {
            starts[i] = writer.streamPosition();
            ByteBuf ulpdu = Unpooled.wrappedBuffer(ulpdus[i]);
            try {
                int before = out.writerIndex();
                int written = writer.write(ulpdu, out);
                assertEquals(out.writerIndex() - before, written, "write() return value");
                assertEquals(0, ulpdu.readerIndex(), "write() consumed the ULPDU");
                assertEquals(ulpdus[i].length, ulpdu.readableBytes());
                assertEquals(starts[i] + written, writer.streamPosition(), "writer stream position");
                assertEquals(base + writer.streamPosition(), out.writerIndex());
            } finally {
                ulpdu.release();
            }
        }
        starts[ulpdus.length] = writer.streamPosition();
        return starts;
    }

    /** Where the ULPDU_LENGTH field of an FPDU that starts at {@code start} sits. */
    static long headerPosition(long start, boolean markers) {
        return markers && start % 512 == 0 ? start + 4 : start;
    }

    /** Octets on the wire of an FPDU of {@code unmarked} octets starting at {@code start}. */
    static int wireLength(long start, int unmarked, boolean markers) {
        if (!markers) {
            return unmarked;
        }
        long position = start;
        int remaining = unmarked;
        int wire = 0;
        while (remaining > 0) {
            if (position % 512 == 0) {
                position += 4;
                wire += 4;
                continue;
            }
            int take = (int) Math.min(remaining, 512 - position % 512);
            position += take;
            wire += take;
            remaining -= take;
        }
        return wire;
    }
}
