package org.jiwarp.rdmap;

import java.util.ArrayDeque;

/**
 * The RDMA Read Requests a peer has sent to this endpoint and not yet been fully answered, bounded
 * by this endpoint's IRD, answered strictly in request order (RFC 5040 section 5.2).
 *
 * <p>A Read Request beyond the IRD has no buffer on queue 1: DDP refuses it with its untagged buffer
 * error "invalid MSN - no buffer available" (RFC 5041 section 7.1; see
 * {@link org.jiwarp.ddp.SingleSegmentQueue}). Linux siw answers the same overflow with RDMAP remote
 * operation error 0x07 instead.
 *
 * @param <R> what the engine keeps per request (source, sink, progress)
 */
public final class InboundReads<R> {

    private final int ird;
    private final ArrayDeque<R> queue = new ArrayDeque<>();

    public InboundReads(int ird) {
        this.ird = ird;
    }

    public int ird() {
        return ird;
    }

    /** Whether one more Read Request fits the IRD (RFC 5040 section 5.2). */
    public boolean hasRoom() {
        return queue.size() < ird;
    }

    /**
     * Queues a validated Read Request.
     *
     * @throws IllegalStateException when the IRD is full: check {@link #hasRoom()} first (DDP refuses
     *     such a request on queue 1 with "no buffer available")
     */
    public void accept(R request) {
        if (!hasRoom()) {
            throw new IllegalStateException("IRD " + ird + " is full");
        }
        queue.addLast(request);
    }

    /** The request being answered now, or {@code null}. */
    public R current() {
        return queue.peekFirst();
    }

    /** The current request is fully answered. */
    public R finishCurrent() {
        return queue.pollFirst();
    }

    public int size() {
        return queue.size();
    }

    public boolean isEmpty() {
        return queue.isEmpty();
    }

    public void clear() {
        queue.clear();
    }
}
