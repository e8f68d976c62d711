package org.jiwarp.capture.pcap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Map;
import java.util.List;
import java.util.TreeMap;

/**
 * Puts one direction's segments back into the byte stream as they are captured, handing each
 * stretch on as a {@link StreamChunk} as soon as it is in order: the reassembly described in
 * {@link TcpDirection} (RFC 9293 section 3.4 sequence arithmetic, first copy wins, RST data left
 * out, the same start of a stream without SYN), which {@link TcpDirection} runs over its segments
 * and a capture too large to keep runs as the segments come.
 *
 * <p>Memory is bounded: data held back behind a hole spans at most {@code holdLimit} octets of
 * sequence space. Past that the hole is taken for octets the capture missed, and the stream goes
 * on after it (where {@link TcpDirection} would keep everything after the hole until the end). A
 * capture whose holes are all filled, or that ends within the limit of one, gives the same chunks
 * as {@link TcpDirection#capturedChunks()}: the data still held behind a hole at the end comes out
 * of {@link #finish()}, each piece with the frame that carried it.
 *
 * <p>Before the stream's start is known (no SYN yet) up to {@value TcpDirection#START_SEGMENTS}
 * data-bearing segments wait. Not thread-safe.
 */
public final class StreamReassembler {

    private static final long SEQUENCE_MASK = 0xFFFF_FFFFL;

    private final List<StreamChunk> out;
    private final long holdLimit;
    private final List<TcpSegment> waiting = new ArrayList<>();
    private int waitingWithData;
    private boolean started;
    private long base;
    private long next;
    private long finOffset = -1;
    private boolean skippedHole;
    private final TreeMap<Long, Piece> pending = new TreeMap<>();

    /**
     * @param out       where chunks go, in stream order; the caller takes them out as it likes
     * @param holdLimit the most sequence space held behind a hole before it is given up on
     */
    public StreamReassembler(List<StreamChunk> out, long holdLimit) {
        this.out = out;
        this.holdLimit = holdLimit;
    }

    /** A reassembler whose stream starts at sequence number {@code base}, found by the caller. */
    StreamReassembler(List<StreamChunk> out, long holdLimit, long base) {
        this(out, holdLimit);
        this.base = base;
        this.started = true;
    }

    /** The octets handed on in order so far: the stream offset just past the last in-order chunk. */
    long inOrderOctets() {
        return next;
    }

    /** Adds the direction's next captured segment. */
    public void add(TcpSegment segment) {
        if (started) {
            place(segment);
            return;
        }
        waiting.add(segment);
        if (!segment.rst() && (segment.payload().length > 0 || segment.fin())) {
            waitingWithData++;
        }
        if (segment.syn() || waitingWithData >= TcpDirection.START_SEGMENTS) {
            start();
        }
    }

    /** The end of the capture: what is held behind holes comes out, each piece with its own frame. */
    public void finish() {
        if (!started) {
            start();
        }
        for (Piece piece : pending.values()) {
            out.add(piece.toChunk(piece.frameNumber, piece.start));
        }
    }

    /**
     * After {@link #finish()}: {@code true} when the capture misses octets of this stream (a hole no
     * segment filled, or data the FIN says came before it), as {@link TcpDirection#hasGap()}.
     */
    public boolean gap() {
        return skippedHole || !pending.isEmpty() || finOffset > next;
    }

    /**
     * The lowest frame number among the data not handed on yet (held behind a hole, or waiting for
     * the stream's start to be known), or {@code Integer.MAX_VALUE}.
     */
    public int lowestHeldFrame() {
        int lowest = Integer.MAX_VALUE;
        for (TcpSegment segment : waiting) {
            lowest = Math.min(lowest, segment.frameNumber());
        }
        for (Piece piece : pending.values()) {
            lowest = Math.min(lowest, piece.frameNumber);
        }
        return lowest;
    }

    private void start() {
        long isn = -1;
        for (TcpSegment segment : waiting) {
            if (segment.syn()) {
                isn = segment.sequence();
                break;
            }
        }
        base = isn >= 0 ? (isn + 1) & SEQUENCE_MASK : TcpDirection.startWithoutSyn(waiting);
        started = true;
        for (TcpSegment segment : waiting) {
            place(segment);
        }
        waiting.clear();
    }

    private void place(TcpSegment segment) {
        if (segment.rst()) {
            return;
        }
        long dataSequence = (segment.sequence() + (segment.syn() ? 1 : 0)) & SEQUENCE_MASK;
        // RFC 9293 section 3.4: compare sequence numbers by their signed 32-bit distance
        long start = next + (int) (dataSequence - ((base + next) & SEQUENCE_MASK));
        byte[] payload = segment.payload();
        long end = start + payload.length;
        if (segment.fin() && finOffset < 0) {
            finOffset = end;
        }
        if (end <= next) {
            return; // nothing new: a retransmission, or a segment without data
        }
        long from = Math.max(start, next);
        hold(pending, from, payload, (int) (from - start), (int) (end - from), segment.frameNumber());
        next = release(pending, next, segment.frameNumber(), out);
        while (!pending.isEmpty() && pending.lastEntry().getValue().end() - next > holdLimit) {
            // The hole is too old to wait for: the capture missed it. Go on after it.
            Piece first = pending.pollFirstEntry().getValue();
            out.add(first.toChunk(first.frameNumber, first.start));
            next = release(pending, first.end(), segment.frameNumber(), out);
            skippedHole = true;
        }
    }

    /** A held-back run of bytes, {@code [start, start + length)} in stream offsets. */
    private static final class Piece {
        final long start;
        final byte[] data;
        final int offset;
        final int length;
        final int frameNumber;

        Piece(long start, byte[] data, int offset, int length, int frameNumber) {
            this.start = start;
            this.data = data;
            this.offset = offset;
            this.length = length;
            this.frameNumber = frameNumber;
        }

        StreamChunk toChunk(int frame, long from) {
            int skip = (int) (from - start);
            int from0 = offset + skip;
            int n = length - skip;
            byte[] bytes = from0 == 0 && n == data.length ? data : Arrays.copyOfRange(data, from0, from0 + n);
            return new StreamChunk(frame, from, bytes);
        }

        long end() {
            return start + length;
        }
    }

    /**
     * Adds {@code [from, from + length)} to the held-back pieces, keeping only the bytes no held
     * piece already covers (the first copy wins).
     */
    private static long hold(TreeMap<Long, Piece> pending, long from, byte[] data, int offset, int length,
            int frameNumber) {
        long end = from + length;
        long cursor = from;
        Map.Entry<Long, Piece> floor = pending.floorEntry(from);
        long scanFrom = floor != null && floor.getValue().end() > from ? floor.getKey() : from;
        List<Piece> added = new ArrayList<>(2);
        for (Piece held : pending.subMap(scanFrom, true, end, false).values()) {
            if (held.start > cursor) {
                added.add(new Piece(cursor, data, offset + (int) (cursor - from), (int) (held.start - cursor),
                        frameNumber));
            }
            cursor = Math.max(cursor, held.end());
            if (cursor >= end) {
                break;
            }
        }
        if (cursor < end) {
            added.add(new Piece(cursor, data, offset + (int) (cursor - from), (int) (end - cursor), frameNumber));
        }
        long octets = 0;
        for (Piece piece : added) {
            pending.put(piece.start, piece);
            octets += piece.length;
        }
        return octets;
    }

    /** Delivers every held piece that is now contiguous with {@code next}; returns the new next. */
    private static long release(TreeMap<Long, Piece> pending, long next, int frameNumber, List<StreamChunk> out) {
        while (!pending.isEmpty() && pending.firstKey() <= next) {
            Piece piece = pending.pollFirstEntry().getValue();
            if (piece.end() <= next) {
                continue;
            }
            out.add(piece.toChunk(frameNumber, next));
            next = piece.end();
        }
        return next;
    }
}
