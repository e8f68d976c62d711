package org.jiwarp.ddp;

import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The Message Sequence Number of one untagged queue whose messages RDMAP consumes itself, with no
 * posted buffers: queue 1 (Read Requests, bounded by the IRD) and queue 2 (Terminate). MSNs start
 * at 1 on every queue and wrap at 2^32 (RFC 5041 section 4.3).
 *
 * <p>The MSN rule, shared with {@link UntaggedQueue}: let {@code d = (msn - expected) mod 2^32},
 * read in serial-number arithmetic, and {@code available} the messages the queue can take now
 * (posted buffers, free IRD entries). RFC 5041 section 7.1 calls an MSN legal when a buffer
 * is available for it; over MPA/TCP, messages of one queue arrive whole and in MSN order (RFC 5041
 * section 5.3: the Data Source transmits messages in the order they were submitted), so only the
 * expected MSN can really be next.
 *
 * <ul>
 *   <li>{@code d >= 2^31}: an MSN before the expected one, a message already completed (or one
 *       more than 2^31 ahead): {@link TerminateError#DDP_UNTAGGED_INVALID_MSN_RANGE};</li>
 *   <li>{@code d >= available}: no buffer for it, including the expected MSN on an empty queue
 *       (siw's code for a Send without a posted receive):
 *       {@link TerminateError#DDP_UNTAGGED_INVALID_MSN_NO_BUFFER};</li>
 *   <li>{@code 0 < d < available}: a later message starting before the expected one has completed,
 *       out of sequence: {@link TerminateError#DDP_UNTAGGED_INVALID_MSN_RANGE} (siw reports any
 *       MSN but the expected one this way);</li>
 *   <li>{@code d == 0 < available}: accepted.</li>
 * </ul>
 *
 * <p>Not thread-safe: it belongs to the thread that receives the stream.
 */
public final class MsnCounter {

    static final long MSN_MASK = 0xFFFF_FFFFL;
    private static final long HALF = 1L << 31;

    private long expected;

    /** A counter expecting MSN 1. */
    public MsnCounter() {
        this(1);
    }

    /** A counter expecting {@code initialMsn} (tests start near the wrap). */
    MsnCounter(long initialMsn) {
        this.expected = initialMsn & MSN_MASK;
    }

    /** The MSN the next message must carry (unsigned 32-bit). */
    public long expected() {
        return expected;
    }

    /**
     * Checks a segment's MSN by the rule above.
     *
     * @param available how many messages the queue can take now; the expected MSN needs at least 1
     * @throws TerminateException with an MSN error
     */
    public void check(long msn, int available) {
        check(msn, expected, available);
    }

    /** The last segment of the expected message arrived: expect the next MSN (mod 2^32). */
    public void advance() {
        expected = (expected + 1) & MSN_MASK;
    }

    /** The rule above, for any queue. */
    static void check(long msn, long expected, long available) {
        long d = (msn - expected) & MSN_MASK;
        if (d == 0 && available > 0) {
            return;
        }
        if (d >= HALF) {
            // RFC 5041 section 7.1: the MSN must lie in the range of the queue's available buffers.
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, "MSN " + (msn & MSN_MASK)
                    + " precedes the expected " + expected);
        }
        if (d >= available) {
            // RFC 5041 section 7.1: the QN and MSN must have an associated buffer.
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, "MSN " + (msn & MSN_MASK)
                    + ": no buffer (expected MSN " + expected + ", " + available + " available)");
        }
        throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, "MSN " + (msn & MSN_MASK)
                + " out of sequence: MSN " + expected + " has not completed");
    }
}
