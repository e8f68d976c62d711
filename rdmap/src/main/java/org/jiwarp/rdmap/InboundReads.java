package org.jiwarp.rdmap;

import java.util.ArrayDeque;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The RDMA Read Requests a peer has sent to this endpoint and not yet been fully answered, bounded
 * by this endpoint's IRD, answered strictly in request order (RFC 5040 section 5.2).
 *
 * <p>A Read Request beyond the IRD has no buffer on queue 1, so jiwarp refuses it with DDP's untagged
 * buffer error "invalid MSN - no buffer available" (RFC 5041 section 7.1). Linux siw answers the
 * same overflow with RDMAP remote operation error 0x07 instead.
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

    /** Throws unless one more Read Request fits the IRD; call it before validating the request. */
    public void checkRoom() {
        // RFC 5040 section 5.2 / RFC 6581: no more than IRD Read Requests may be outstanding.
        if (queue.size() >= ird) {
            throw new RdmapException(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                    "Read Request beyond IRD " + ird);
        }
    }

    /** Queues a validated Read Request. */
    public void accept(R request) {
        checkRoom();
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
