package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The inbound side of one untagged queue with posted buffers (RFC 5041 sections 3.3, 4.3, 5.3 and
 * 7.1): RDMAP's queue 0, where Sends land in posted receives.
 *
 * <pre>
 *   posted:    head                                           tail
 *              | buffer (MSN expected) | buffer (expected+1) | ... |
 *   segment:   MSN selects the buffer, MO the offset in its scatter list, L completes it
 * </pre>
 *
 * <p>Checks on each segment, in order, the first failure thrown as a {@link TerminateException} with
 * its DDP untagged buffer error (layer 1, error type 2) and nothing placed:
 *
 * <ol>
 *   <li>the MSN, by the rule in {@link MsnCounter}: {@code INVALID_MSN_RANGE} for an MSN already
 *       completed or out of sequence, {@code INVALID_MSN_NO_BUFFER} when no buffer is posted for
 *       it;</li>
 *   <li>the MO: it must equal the octets of the message placed so far, {@code INVALID_MO}
 *       otherwise. RFC 5041 section 5.3 lets a Data Source send segments out of MO order (a
 *       SHOULD); over MPA/TCP none does, and siw refuses it the same way. In-order placement keeps
 *       the copy O(1) (a cursor in the scatter list) and the message length exact. It also covers
 *       section 7.1's "MO within the buffer": the octets placed never exceed the capacity;</li>
 *   <li>MO + payload length within the capacity: {@code MESSAGE_TOO_LONG} otherwise.</li>
 * </ol>
 *
 * <p>Then the payload is copied into the buffer (the one copy), and a segment with L set completes
 * it: the buffer leaves the queue and the expected MSN moves on by one (mod 2^32). The queue number
 * itself is the caller's to check ({@link DdpHeaderChecks#checkQn}).
 *
 * <p>A queue built on {@link SharedReceives} posts nothing itself: when a message starts with the
 * expected MSN and the queue holds no buffer, it takes the oldest shared one and fills it; the
 * checks above then run as for a posted buffer, and with none to take the MSN has no buffer.
 *
 * <p>Threads: {@link #post} and {@link #posted} are safe from any thread (posts serialize on a
 * lock; a single-producer ring publishes them). {@link #place}, {@link #flush} and
 * {@link #expectedMsn} belong to one thread at a time, the one that receives the stream.
 */
public final class UntaggedQueue {

    /**
     * What one {@link #place} call did. The queue owns a single instance and refills it on every
     * call, so the per-segment path allocates nothing: read it before the next call.
     */
    public static final class Placement {

        private ReceiveBuffer buffer;
        private long msn;
        private int segmentLength;
        private long messageLength;
        private boolean completed;

        Placement() {
        }

        /** The buffer the segment went into (completed or not). */
        public ReceiveBuffer buffer() {
            return buffer;
        }

        /** The segment's MSN. */
        public long msn() {
            return msn;
        }

        /** Octets this segment placed. */
        public int segmentLength() {
            return segmentLength;
        }

        /** Whether this segment completed the message (it carried L). */
        public boolean completed() {
            return completed;
        }

        /** The message's length when {@link #completed()}; otherwise the octets placed so far. */
        public long messageLength() {
            return messageLength;
        }

        void set(ReceiveBuffer buffer, long msn, int segmentLength, long messageLength, boolean completed) {
            this.buffer = buffer;
            this.msn = msn;
            this.segmentLength = segmentLength;
            this.messageLength = messageLength;
            this.completed = completed;
        }

        @Override
        public String toString() {
            return "Placement[MSN " + msn + ", " + segmentLength + " octets, " + (completed ? "completed " : "")
                    + messageLength + ", " + buffer + "]";
        }
    }

    /** The ring's first length: a receive queue's usual working set. */
    private static final int INITIAL_RING = 16;

    private final int qn;
    private final int maxPosted;
    /** Where a message finds its buffer when none is posted here; {@code null}: only posted ones. */
    private final SharedReceives shared;
    /**
     * Posted buffers at positions [head, tail), position p in slot p % ring.length. It starts small
     * and doubles, up to {@code maxPosted}, when a post finds it full (so that an idle queue pair of
     * a deep receive queue holds little): replaced under postLock before the tail that needs it is
     * published, so the placing thread, which reads the tail before the ring, finds every position
     * below the tail in the ring it reads.
     */
    private volatile ReceiveBuffer[] ring;
    private final Object postLock = new Object();
    /** Written by the placing thread only. */
    private volatile long head;
    /** Written under postLock only; the volatile write publishes the slot. */
    private volatile long tail;
    /** Written by the placing thread only. */
    private volatile long expectedMsn;
    private final Placement placement = new Placement();
    /** The segment between {@link #begin} and {@link #end}: its buffer, octets placed before it, its length. */
    private ReceiveBuffer current;
    private long currentPlaced;
    private int currentLength;

    /**
     * @param qn the queue number, for messages
     * @param maxPosted the most buffers posted at once
     */
    public UntaggedQueue(int qn, int maxPosted) {
        this(qn, maxPosted, 1, null);
    }

    /**
     * A queue that takes each message's buffer from {@code shared} when it starts: it holds one
     * buffer at most, the one being filled.
     */
    public UntaggedQueue(int qn, SharedReceives shared) {
        this(qn, 1, 1, Objects.requireNonNull(shared, "shared"));
    }

    /** A queue whose first message has MSN {@code initialMsn} (tests start near the wrap). */
    UntaggedQueue(int qn, int maxPosted, long initialMsn) {
        this(qn, maxPosted, initialMsn, null);
    }

    UntaggedQueue(int qn, int maxPosted, long initialMsn, SharedReceives shared) {
        if (maxPosted < 0) {
            throw new IllegalArgumentException("maxPosted " + maxPosted);
        }
        this.qn = qn;
        this.maxPosted = maxPosted;
        this.shared = shared;
        this.ring = new ReceiveBuffer[Math.max(1, Math.min(maxPosted, INITIAL_RING))];
        this.expectedMsn = initialMsn & MsnCounter.MSN_MASK;
    }

    public int qn() {
        return qn;
    }

    public int maxPosted() {
        return maxPosted;
    }

    /**
     * Posts a buffer behind the others; it takes the MSN after theirs. Resets the buffer's placement
     * state.
     *
     * @return {@code false}, posting nothing, when {@link #maxPosted()} buffers are posted
     */
    public boolean post(ReceiveBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        synchronized (postLock) {
            long t = tail;
            if (t - head >= maxPosted) {
                return false;
            }
            buffer.reset();
            ReceiveBuffer[] r = ring;
            if (t - head >= r.length) {
                r = grown(r, head, t);
            }
            r[(int) (t % r.length)] = buffer;
            tail = t + 1;
            return true;
        }
    }

    /** Buffers posted and not yet completed or flushed. */
    public int posted() {
        // Read head first: both only grow, so tail read later is never below it.
        long h = head;
        return (int) (tail - h);
    }

    /** The MSN of the first posted buffer's message (unsigned 32-bit); 1 at the start. */
    public long expectedMsn() {
        return expectedMsn;
    }

    /**
     * Checks one inbound segment and copies its payload into the buffer its MSN selects.
     *
     * @param msn the segment's MSN (unsigned 32-bit)
     * @param mo the segment's MO (unsigned 32-bit)
     * @param last the segment's L flag
     * @param payload the segment's payload, its readable bytes; neither its indices nor its reference
     *     count change
     * @return the queue's {@link Placement}, refilled for this segment
     * @throws TerminateException with the first failed check; nothing is placed then
     */
    public Placement place(long msn, long mo, boolean last, ByteBuf payload) {
        return place(msn, mo, last, payload, payload.readerIndex(), payload.readableBytes());
    }

    /**
     * As {@link #place(long, long, boolean, ByteBuf)}, for {@code length} octets of {@code source}
     * at {@code index} (no slice needed per segment).
     */
    public Placement place(long msn, long mo, boolean last, ByteBuf source, int index, int length) {
        begin(msn, mo, length);
        append(source, index, length);
        return end(last);
    }

    /**
     * Streaming, first step of {@link #place}: checks a segment of {@code length} payload octets and
     * selects its buffer; nothing is placed yet. {@link #append} then takes the payload in pieces,
     * and {@link #end} finishes the segment.
     *
     * @throws TerminateException with the first failed check
     */
    public void begin(long msn, long mo, int length) {
        long h = head;
        long expected = expectedMsn;
        long available = tail - h;
        if (available == 0) {
            // Nothing posted here: a queue on shared receives takes one for the message starting.
            available = takeShared(msn, expected);
        }
        MsnCounter.check(msn, expected, available);
        ReceiveBuffer[] r = ring; // read after the tail: holds every position below it
        ReceiveBuffer buffer = r[(int) (h % r.length)];
        long placed = buffer.bytesPlaced();
        // RFC 5041 section 7.1: the MO must lie in the buffer; like siw, jiwarp also wants MO order.
        if (mo != placed) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MO, "QN " + qn + " MSN " + msn + ": MO " + mo
                    + ", expected " + placed + " (segments arrive in MO order)");
        }
        if (length > buffer.capacity() - placed) {
            // RFC 5041 section 7.1: MO + length must lie within the buffer.
            throw new TerminateException(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, "QN " + qn + " MSN " + msn + ": "
                    + length + " octets at MO " + mo + " exceed the buffer's " + buffer.capacity());
        }
        current = buffer;
        currentPlaced = placed;
        currentLength = length;
    }

    /**
     * Copies the next piece of the segment begun into its buffer.
     *
     * @throws ReceiveBuffer.MemoryGoneException when the buffer's memory went; the receive is used up
     *     (it completes in error, not in a flush later)
     */
    public void append(ByteBuf source, int index, int length) {
        try {
            current.append(source, index, length);
        } catch (ReceiveBuffer.MemoryGoneException e) {
            long h = head;
            clear(h);
            head = h + 1;
            expectedMsn = (expectedMsn + 1) & MsnCounter.MSN_MASK;
            throw e;
        }
    }

    /**
     * Direct placement: opens {@code window} over where the segment begun goes next, at most
     * {@code length} octets (see {@link ReceiveBuffer}); {@code null} when it cannot be read into
     * straight, and the octets then come through {@link #append}.
     */
    public PlacementWindow window(PlacementWindow window, int length) {
        return current.window(window, length);
    }

    /** {@code length} octets of the segment begun arrived straight in the last {@link #window}. */
    public void placed(int length) {
        current.placed(length);
    }

    /** The segment begun ends: with L, its message is complete and the next MSN is expected. */
    public Placement end(boolean last) {
        ReceiveBuffer buffer = current;
        long expected = expectedMsn;
        current = null;
        if (last) {
            long h = head;
            clear(h);
            head = h + 1;
            expectedMsn = (expected + 1) & MsnCounter.MSN_MASK;
        }
        placement.set(buffer, expected, currentLength, currentPlaced + currentLength, last);
        return placement;
    }

    /**
     * The expected message starts on an empty queue: takes a shared buffer for it, if the queue has
     * shared receives and one is posted there. Any other MSN takes none (the check then fails).
     *
     * @return the buffers now available: 1 or 0
     */
    private long takeShared(long msn, long expected) {
        if (shared == null || msn != expected) {
            return 0;
        }
        ReceiveBuffer buffer = shared.take();
        return buffer != null && post(buffer) ? 1 : 0;
    }

    /**
     * Removes every posted buffer, oldest first, for flush-in-error completions. The expected MSN
     * stays: the stream is dead by then.
     */
    public List<ReceiveBuffer> flush() {
        synchronized (postLock) {
            long h = head;
            long t = tail;
            List<ReceiveBuffer> flushed = new ArrayList<>((int) (t - h));
            ReceiveBuffer[] r = ring;
            for (long p = h; p < t; p++) {
                int slot = (int) (p % r.length);
                flushed.add(r[slot]);
                r[slot] = null;
            }
            head = t;
            return flushed;
        }
    }

    /** Under postLock: a ring twice as long (at most maxPosted) holding positions [h, t); published. */
    private ReceiveBuffer[] grown(ReceiveBuffer[] r, long h, long t) {
        ReceiveBuffer[] bigger = new ReceiveBuffer[(int) Math.min(maxPosted, 2L * r.length)];
        for (long p = h; p < t; p++) {
            bigger[(int) (p % bigger.length)] = r[(int) (p % r.length)];
        }
        ring = bigger;
        return bigger;
    }

    /**
     * The placing thread is done with position {@code h}. A post may have replaced the ring meanwhile
     * and copied the position: the copy's reference stays until the position comes round again.
     */
    private void clear(long h) {
        ReceiveBuffer[] r = ring;
        r[(int) (h % r.length)] = null;
    }

    @Override
    public String toString() {
        return "UntaggedQueue[QN " + qn + ", expected MSN " + expectedMsn + ", " + posted() + "/" + maxPosted
                + " posted]";
    }
}
