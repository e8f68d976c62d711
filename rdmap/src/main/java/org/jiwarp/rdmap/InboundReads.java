package org.jiwarp.rdmap;

/**
 * The RDMA Read Requests (and RFC 7306 Atomic Requests) a peer has sent to this endpoint and not yet
 * been fully answered, bounded by this endpoint's IRD, answered strictly in request order (RFC 5040
 * section 5.2).
 *
 * <p>An entry is held until its response's last segment has gone to TCP. The responder writes each
 * response at once, so an entry is kept as one number: the {@link SegmentOutput#written()} position
 * after that last segment. {@link #retire(long)} frees, oldest first, every entry whose position the
 * output has {@linkplain SegmentOutput#sent() sent}. The positions sit in a ring that starts small
 * and doubles up to the IRD, so a queue pair with a large IRD costs little until its peer uses it,
 * and nothing is allocated per request in steady state.
 *
 * <p>A Read Request beyond the IRD has no buffer on queue 1: DDP refuses it with its untagged buffer
 * error "invalid MSN - no buffer available" (RFC 5041 section 7.1; see
 * {@link org.jiwarp.ddp.SingleSegmentQueue}). Linux siw answers the same overflow with RDMAP remote
 * operation error 0x07 instead.
 *
 * <p>Not thread-safe: it belongs to the connection's thread.
 */
public final class InboundReads {

    private static final int FIRST_CAPACITY = 16;

    private final int ird;
    /** The position after each held entry's last segment, oldest at {@link #head}; a power of two long. */
    private long[] sentAt;
    private int head;
    private int size;

    public InboundReads(int ird) {
        this.ird = ird;
        this.sentAt = new long[FIRST_CAPACITY];
    }

    public int ird() {
        return ird;
    }

    /** Whether one more Read Request fits the IRD (RFC 5040 section 5.2); retire what was sent first. */
    public boolean hasRoom() {
        return size < ird;
    }

    /**
     * Holds an entry for a validated request whose response ends at output position {@code sentAt}.
     *
     * @throws IllegalStateException when the IRD is full: check {@link #hasRoom()} first (DDP refuses
     *     such a request on queue 1 with "no buffer available")
     */
    public void accept(long sentAt) {
        if (!hasRoom()) {
            throw new IllegalStateException("IRD " + ird + " is full");
        }
        if (size == this.sentAt.length) {
            grow();
        }
        this.sentAt[(head + size) & (this.sentAt.length - 1)] = sentAt;
        size++;
    }

    /**
     * Frees, oldest first, every entry whose response has gone to TCP: whose position is at most
     * {@code sent} (octets count up from the connection's start; a position is never reached again).
     *
     * @return how many entries were freed
     */
    public int retire(long sent) {
        int freed = 0;
        while (size > 0 && sentAt[head] <= sent) {
            head = (head + 1) & (sentAt.length - 1);
            size--;
            freed++;
        }
        return freed;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public void clear() {
        head = 0;
        size = 0;
    }

    private void grow() {
        long[] bigger = new long[sentAt.length * 2];
        for (int i = 0; i < size; i++) {
            bigger[i] = sentAt[(head + i) & (sentAt.length - 1)];
        }
        sentAt = bigger;
        head = 0;
    }
}
