package org.jiwarp.capture.pcap;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Puts one direction's segments back into the byte stream as they are captured, handing each
 * stretch on as a {@link StreamChunk} as soon as it is in order: {@link TcpDirection}'s reassembly
 * (RFC 9293 section 3.4 sequence arithmetic, first copy wins, RST data left out, the same start of
 * a stream without SYN) for a capture too large to keep.
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
    private final TreeMap<Long, TcpDirection.Piece> pending = new TreeMap<>();

    /**
     * @param out       where chunks go, in stream order; the caller takes them out as it likes
     * @param holdLimit the most sequence space held behind a hole before it is given up on
     */
    public StreamReassembler(List<StreamChunk> out, long holdLimit) {
        this.out = out;
        this.holdLimit = holdLimit;
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
        for (TcpDirection.Piece piece : pending.values()) {
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

    /** The lowest frame number among the data held behind a hole, or {@code Integer.MAX_VALUE}. */
    public int lowestHeldFrame() {
        int lowest = Integer.MAX_VALUE;
        for (TcpDirection.Piece piece : pending.values()) {
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
        TcpDirection.hold(pending, from, payload, (int) (from - start), (int) (end - from), segment.frameNumber());
        next = TcpDirection.release(pending, next, segment.frameNumber(), out);
        while (!pending.isEmpty() && pending.lastEntry().getValue().end() - next > holdLimit) {
            // The hole is too old to wait for: the capture missed it. Go on after it.
            TcpDirection.Piece first = pending.pollFirstEntry().getValue();
            out.add(first.toChunk(first.frameNumber, first.start));
            next = TcpDirection.release(pending, first.end(), segment.frameNumber(), out);
            skippedHole = true;
        }
    }
}
