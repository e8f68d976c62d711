package org.jiwarp.rdmap;

import java.util.ArrayDeque;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The RDMA Read Requests this endpoint has sent and not yet seen answered, bounded by its ORD
 * (RFC 5040 section 5.2 and RFC 6581 section 3), and the matching of each inbound Read Response to
 * the oldest of them: responses arrive in request order, to the request's sink STag, at the sink
 * Tagged Offset advancing with each segment, and total exactly the requested size.
 *
 * <p>Used on one event loop; not thread-safe.
 */
public final class OutboundReads {

    /** One outstanding Read Request. */
    public static final class Outstanding {
        final Object context;
        final int sinkStag;
        final long sinkTaggedOffset;
        final long length;
        long received;

        Outstanding(Object context, int sinkStag, long sinkTaggedOffset, long length) {
            this.context = context;
            this.sinkStag = sinkStag;
            this.sinkTaggedOffset = sinkTaggedOffset;
            this.length = length;
        }

        /** What the poster attached (the engine's work request). */
        public Object context() {
            return context;
        }

        public long length() {
            return length;
        }
    }

    private final int ord;
    private final ArrayDeque<Outstanding> outstanding = new ArrayDeque<>();

    public OutboundReads(int ord) {
        this.ord = ord;
    }

    /** The ORD in force. */
    public int ord() {
        return ord;
    }

    /** {@code true} when another Read Request may be sent without exceeding the ORD. */
    public boolean hasCredit() {
        return outstanding.size() < ord;
    }

    public int outstanding() {
        return outstanding.size();
    }

    /** Records a Read Request about to be sent; the caller checked {@link #hasCredit()}. */
    public void sent(Object context, int sinkStag, long sinkTaggedOffset, long length) {
        if (!hasCredit()) {
            throw new IllegalStateException("ORD " + ord + " exhausted");
        }
        outstanding.addLast(new Outstanding(context, sinkStag, sinkTaggedOffset, length));
    }

    /**
     * Matches one inbound Read Response segment to the oldest outstanding request.
     *
     * @return the completed request when this segment was its last, else {@code null}
     * @throws TerminateException {@link TerminateError#RDMAP_UNEXPECTED_OPCODE} when no Read is
     *     outstanding, or when the segment's STag, offset or length does not continue the oldest one
     */
    public Outstanding response(int stag, long taggedOffset, int length, boolean last) {
        Outstanding head = outstanding.peekFirst();
        // RFC 5040 section 4.5: a Read Response answers the oldest outstanding Read Request.
        if (head == null) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "Read Response with no Read outstanding");
        }
        if (stag != head.sinkStag || taggedOffset != head.sinkTaggedOffset + head.received
                || head.received + length > head.length) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, String.format(
                    "Read Response to STag 0x%08x TO 0x%x (%d octets) does not continue the Read of %d octets "
                            + "to STag 0x%08x TO 0x%x (%d received)",
                    stag, taggedOffset, length, head.length, head.sinkStag, head.sinkTaggedOffset, head.received));
        }
        head.received += length;
        if (!last) {
            return null;
        }
        if (head.received != head.length) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "Read Response ended after "
                    + head.received + " of " + head.length + " octets");
        }
        return outstanding.pollFirst();
    }

    /** Removes every outstanding request, oldest first (to complete them in flush error). */
    public java.util.List<Object> flush() {
        java.util.List<Object> contexts = new java.util.ArrayList<>(outstanding.size());
        for (Outstanding o : outstanding) {
            contexts.add(o.context);
        }
        outstanding.clear();
        return contexts;
    }
}
