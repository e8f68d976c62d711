package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduWriter;

/** Shared pieces of the FPDU framer and deframer tests. */
final class FpduTestSupport {

    /**
     * The longest ULPDU whose FPDU can start at any stream position with markers on and still have
     * every FPDUPTR fit in 16 bits (FpduWriter and FpduFramer refuse longer ones where they overflow).
     */
    static final int MAX_MARKED_ULPDU_LENGTH = 65022;

    private FpduTestSupport() {
    }

    /**
     * 1..{@code maxCount} ULPDUs, mostly 0..{@code maxSmall} octets, about one in {@code bigOneIn} up to
     * 65535 octets (up to {@link #MAX_MARKED_ULPDU_LENGTH} with markers).
     */
    static byte[][] randomUlpdus(SplittableRandom random, int maxCount, int maxSmall, int bigOneIn, boolean markers) {
        int max = markers ? MAX_MARKED_ULPDU_LENGTH : Fpdu.MAX_ULPDU_LENGTH;
        byte[][] ulpdus = new byte[1 + random.nextInt(maxCount)][];
        for (int i = 0; i < ulpdus.length; i++) {
            int length = random.nextInt(bigOneIn) == 0 ? random.nextInt(max + 1) : random.nextInt(maxSmall + 1);
            ulpdus[i] = Property.bytes(random, length);
        }
        return ulpdus;
    }



    /** The FPDUs {@link FpduWriter} writes for {@code ulpdus}, from stream position 0. */
    static byte[] writeWithFpduWriter(boolean crc, boolean markers, byte[]... ulpdus) {
        FpduWriter writer = new FpduWriter(crc, markers);
        long unmarked = 0;
        for (byte[] ulpdu : ulpdus) {
            unmarked += Fpdu.length(ulpdu.length);
        }
        // Heap-wrapped, so the paranoid leak detector does not trace every access; still released.
        ByteBuf out = Unpooled.wrappedBuffer(new byte[(int) (unmarked + 4 * (unmarked / 508 + 2 * ulpdus.length + 2))]);
        out.clear();
        try {
            for (byte[] ulpdu : ulpdus) {
                ByteBuf in = Unpooled.wrappedBuffer(ulpdu);
                try {
                    writer.write(in, out);
                } finally {
                    in.release();
                }
            }
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            out.release();
        }
    }

    /**
     * Frames {@code ulpdus} with the {@link FpduFramer} in {@code channel}'s pipeline (one write each,
     * from a buffer of the channel's allocator, one flush at the end) and returns the octets it wrote.
     * Checks that each ULPDU's write succeeded once flushed (its promise rides on the FPDU's last piece).
     */
    static byte[] frame(EmbeddedChannel channel, byte[]... ulpdus) {
        io.netty.channel.ChannelFuture[] writes = new io.netty.channel.ChannelFuture[ulpdus.length];
        for (int i = 0; i < ulpdus.length; i++) {
            ByteBuf buf = channel.alloc().buffer(ulpdus[i].length).writeBytes(ulpdus[i]);
            writes[i] = channel.write(buf);
            org.junit.jupiter.api.Assertions.assertFalse(writes[i].isDone(), "FPDU " + i + " done before the flush");
        }
        channel.flush();
        channel.checkException();
        for (int i = 0; i < ulpdus.length; i++) {
            org.junit.jupiter.api.Assertions.assertTrue(writes[i].isSuccess(), "FPDU " + i + " written");
        }
        return drainOutbound(channel, ulpdus.length);
    }

    /** Reads and releases the outbound buffers of {@code expected} FPDUs and returns their octets in order. */
    static byte[] drainOutbound(EmbeddedChannel channel, int expected) {
        List<ByteBuf> written = new ArrayList<>();
        int total = 0;
        try {
            for (Object o; (o = channel.readOutbound()) != null; ) {
                written.add((ByteBuf) o);
                total += ((ByteBuf) o).readableBytes();
            }
            // An FPDU goes as several buffers (overhead, ULPDU pieces cut at markers, pad and CRC).
            org.junit.jupiter.api.Assertions.assertTrue(written.size() >= expected,
                    "outbound buffers, at least one per FPDU: " + written.size());
            byte[] bytes = new byte[total];
            int at = 0;
            for (ByteBuf buf : written) {
                int n = buf.readableBytes();
                buf.getBytes(buf.readerIndex(), bytes, at, n);
                at += n;
            }
            return bytes;
        } finally {
            for (ByteBuf buf : written) {
                buf.release();
            }
        }
    }

    /**
     * Feeds {@code wire} to the deframer in {@code channel} in chunks of the given lengths (the chunks
     * cover all of it) and returns the ULPDUs it emitted, released.
     */
    static List<byte[]> deframe(EmbeddedChannel channel, byte[] wire, int[] chunks) {
        List<byte[]> ulpdus = new ArrayList<>();
        int at = 0;
        for (int chunk : chunks) {
            channel.writeInbound(Unpooled.wrappedBuffer(wire, at, chunk));
            at += chunk;
            drainInbound(channel, ulpdus);
        }
        assertEquals(wire.length, at, "chunks cover the stream");
        return ulpdus;
    }

    /** Moves every inbound ULPDU of {@code channel} into {@code into} as arrays, releasing each. */
    static void drainInbound(EmbeddedChannel channel, List<byte[]> into) {
        for (Object o; (o = channel.readInbound()) != null; ) {
            ByteBuf buf = (ByteBuf) o;
            try {
                into.add(bytes(buf));
            } finally {
                buf.release();
            }
        }
    }

    /** The readable octets of {@code buf}, not consumed. */
    static byte[] bytes(ByteBuf buf) {
        byte[] bytes = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), bytes);
        return bytes;
    }

    /** Closes the channel, asserting nothing is left in it. */
    static void finish(EmbeddedChannel channel) {
        boolean left = channel.finishAndReleaseAll();
        assertTrue(!left, "messages left in the channel");
        assertNull(channel.readInbound());
    }

    /** Fixed-size chunks (the last one shorter). */
    static int[] fixedChunks(int total, int size) {
        int count = (total + size - 1) / size;
        int[] chunks = new int[count];
        for (int i = 0; i < count; i++) {
            chunks[i] = Math.min(size, total - i * size);
        }
        return chunks;
    }
}
