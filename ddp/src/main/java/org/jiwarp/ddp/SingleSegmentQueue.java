package org.jiwarp.ddp;

import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The DDP side of an untagged queue whose messages its ULP consumes itself, each in exactly one
 * segment of a fixed length, with a bounded number of buffers: RDMAP's queue 1, whose Read Requests
 * are 28 octets and whose buffers are the IRD's entries (RFC 5040 section 5.2).
 *
 * <p>Checks on each segment, in order, the first failure thrown as a {@link TerminateException}
 * with its DDP untagged buffer error (layer 1, error type 2):
 *
 * <ol>
 *   <li>the MSN is the expected one (RFC 5041 section 5.3: messages of a queue arrive in order):
 *       {@code INVALID_MSN_RANGE} otherwise;</li>
 *   <li>MO is 0 (the message is one segment): {@code INVALID_MO};</li>
 *   <li>L is set and the segment holds exactly one message: {@code MESSAGE_TOO_LONG};</li>
 *   <li>a buffer is free for it: {@code INVALID_MSN_NO_BUFFER} (RFC 5041 section 7.1).</li>
 * </ol>
 *
 * <p>Not thread-safe: it belongs to the thread that receives the stream.
 */
public final class SingleSegmentQueue {

    private final int messageLength;
    private long expectedMsn;

    /**
     * @param firstMsn      the first MSN expected: 1, or 2 where an RFC 6581 RTR used MSN 1
     * @param messageLength the length of every message's payload
     */
    public SingleSegmentQueue(long firstMsn, int messageLength) {
        this.expectedMsn = firstMsn;
        this.messageLength = messageLength;
    }

    /** The MSN the next message must carry. */
    public long expectedMsn() {
        return expectedMsn;
    }

    /**
     * Checks one segment and, when it passes, takes its MSN.
     *
     * @param bufferAvailable whether the ULP has room for one more message
     * @throws TerminateException on the first failed check; the MSN is then not taken
     */
    public void accept(long msn, long mo, boolean last, int payloadLength, boolean bufferAvailable) {
        accept(msn, mo, last, payloadLength, messageLength, bufferAvailable);
    }

    /**
     * As {@link #accept(long, long, boolean, int, boolean)}, for a message of {@code messageLength}
     * octets (queue 1 carries 28-octet Read Requests and, with RFC 7306, 52-octet Atomic Requests).
     */
    public void accept(long msn, long mo, boolean last, int payloadLength, int messageLength,
            boolean bufferAvailable) {
        // RFC 5041 section 5.3: messages on a queue arrive in MSN order.
        if (msn != expectedMsn) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, "MSN " + msn
                    + ", expected " + expectedMsn);
        }
        // RFC 5041 section 7.1: the MO must lie within the (single-segment) message.
        if (mo != 0) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MO, "MO " + mo
                    + " in a single-segment message");
        }
        if (!last || payloadLength != messageLength) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, "message of "
                    + payloadLength + " octets" + (last ? "" : " without L") + ", expected " + messageLength);
        }
        // RFC 5041 section 7.1: a message needs a buffer.
        if (!bufferAvailable) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, "MSN " + msn
                    + ": no buffer available");
        }
        expectedMsn = (expectedMsn + 1) & 0xFFFF_FFFFL;
    }
}
