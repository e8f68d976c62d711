package org.jiwarp.rdmap;

import java.util.ArrayList;
import java.util.List;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The RDMA Read Requests and RFC 7306 Atomic Requests this endpoint has sent and not yet seen
 * answered, bounded together by its ORD (RFC 5040 section 5.2, RFC 6581 section 3, RFC 7306
 * section 5), and the matching of each inbound response to the oldest of them: the Responder
 * answers queue 1 in order, so a Read Response continues the oldest request when that is a Read (to
 * its sink STag, at the sink Tagged Offset advancing with each segment, totalling exactly the
 * requested size), and an Atomic Response answers it when that is an Atomic Request with the same
 * Request Identifier.
 *
 * <p>The records sit in a ring that starts small and doubles up to the ORD; each is filled in place
 * for the next request once its own has been answered, so nothing is allocated per Read in steady
 * state. A record returned by {@link #response} or {@link #atomicResponse} is therefore valid only
 * until the next {@link #sent} or {@link #sentAtomic}.
 *
 * <p>Used on one event loop; not thread-safe.
 */
public final class OutboundReads {

    /** One outstanding Read Request or Atomic Request (a record of the ring, reused). */
    public static final class Outstanding {
        Object context;
        int sinkStag;
        long sinkTaggedOffset;
        long length;
        /** RFC 7306: an Atomic Request's identifier, or -1 for a Read (identifiers are unsigned 32-bit). */
        long requestIdentifier;
        long received;

        void fill(Object context, int sinkStag, long sinkTaggedOffset, long length, long requestIdentifier) {
            this.context = context;
            this.sinkStag = sinkStag;
            this.sinkTaggedOffset = sinkTaggedOffset;
            this.length = length;
            this.requestIdentifier = requestIdentifier;
            this.received = 0;
        }

        boolean atomic() {
            return requestIdentifier >= 0;
        }

        /** What the poster attached (the engine's work request). */
        public Object context() {
            return context;
        }

        public long length() {
            return length;
        }
    }

    private static final int FIRST_CAPACITY = 8;

    private final int ord;
    /** The records, oldest outstanding at {@link #head}; a power of two long, filled as first needed. */
    private Outstanding[] ring = new Outstanding[FIRST_CAPACITY];
    private int head;
    private int size;

    public OutboundReads(int ord) {
        this.ord = ord;
    }

    /** The ORD in force. */
    public int ord() {
        return ord;
    }

    /** {@code true} when another Read Request may be sent without exceeding the ORD. */
    public boolean hasCredit() {
        return size < ord;
    }

    public int outstanding() {
        return size;
    }

    /** Records a Read Request about to be sent; the caller checked {@link #hasCredit()}. */
    public void sent(Object context, int sinkStag, long sinkTaggedOffset, long length) {
        if (!hasCredit()) {
            throw new IllegalStateException("ORD " + ord + " exhausted");
        }
        next().fill(context, sinkStag, sinkTaggedOffset, length, -1);
    }

    /** Records an Atomic Request about to be sent (it takes ORD credit as a Read does). */
    public void sentAtomic(Object context, int requestIdentifier) {
        if (!hasCredit()) {
            throw new IllegalStateException("ORD " + ord + " exhausted");
        }
        next().fill(context, 0, 0, Long.BYTES, requestIdentifier & 0xFFFF_FFFFL);
    }

    /**
     * Matches an inbound Atomic Response (RFC 7306 section 5.2.2) to the oldest outstanding request.
     *
     * @return the answered request
     * @throws TerminateException {@link TerminateError#RDMAP_UNEXPECTED_OPCODE} when the oldest
     *     outstanding request is not an Atomic Request with this identifier
     */
    public Outstanding atomicResponse(int originalRequestIdentifier) {
        Outstanding head = oldest();
        long id = originalRequestIdentifier & 0xFFFF_FFFFL;
        // RFC 7306 section 5.4: Atomic Responses come in request order, naming their request.
        if (head == null || !head.atomic() || head.requestIdentifier != id) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "Atomic Response to request "
                    + id + (head == null ? " with nothing outstanding" : head.atomic()
                            ? " while request " + head.requestIdentifier + " is the oldest"
                            : " while a Read is the oldest outstanding request"));
        }
        return removeOldest();
    }

    /**
     * Matches one inbound Read Response segment to the oldest outstanding request.
     *
     * @return the completed request when this segment was its last, else {@code null}
     * @throws TerminateException {@link TerminateError#RDMAP_UNEXPECTED_OPCODE} when no Read is
     *     outstanding, or when the segment's STag, offset or length does not continue the oldest one
     */
    public Outstanding response(int stag, long taggedOffset, int length, boolean last) {
        Outstanding head = oldest();
        // RFC 5040 section 4.5: a Read Response answers the oldest outstanding Read Request.
        if (head == null || head.atomic()) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, head == null
                    ? "Read Response with no Read outstanding" : "Read Response while an Atomic Request is the oldest");
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
        return removeOldest();
    }

    /** Removes every outstanding request, oldest first (to complete them in flush error). */
    public List<Object> flush() {
        List<Object> contexts = new ArrayList<>(size);
        while (size > 0) {
            contexts.add(removeOldest().context);
        }
        return contexts;
    }

    private Outstanding oldest() {
        return size == 0 ? null : ring[head];
    }

    private Outstanding removeOldest() {
        Outstanding oldest = ring[head];
        head = (head + 1) & (ring.length - 1);
        size--;
        return oldest;
    }

    /** The record for a request about to be sent, at the ring's tail (the ring grows when full). */
    private Outstanding next() {
        if (size == ring.length) {
            Outstanding[] bigger = new Outstanding[ring.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = ring[(head + i) & (ring.length - 1)];
            }
            ring = bigger;
            head = 0;
        }
        int tail = (head + size) & (ring.length - 1);
        if (ring[tail] == null) {
            ring[tail] = new Outstanding();
        }
        size++;
        return ring[tail];
    }
}
