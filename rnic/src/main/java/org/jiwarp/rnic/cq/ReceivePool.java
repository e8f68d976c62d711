package org.jiwarp.rnic.cq;

import java.util.ArrayDeque;
import org.jiwarp.ddp.ReceiveBuffer;

/**
 * Receive buffers whose completion was reported, taken by posting threads and given back by the
 * event loops: a post of a receive allocates nothing in steady state. A queue pair has its own; the
 * queue pairs on a shared receive queue give theirs back to the queue's ({@link PostedReceives#pool}).
 * Safe from any thread.
 */
public final class ReceivePool {

    private final ArrayDeque<ReceiveBuffer> free = new ArrayDeque<>(4);

    /**
     * A receive buffer for a post of work request {@code id} of {@code segments} SGEs, its scatter
     * list empty: one given back, or a new one.
     */
    public ReceiveBuffer take(long id, int segments) {
        ReceiveBuffer buffer;
        synchronized (free) {
            buffer = free.pollFirst();
        }
        return (buffer != null ? buffer : new ReceiveBuffer(segments)).repost(id);
    }

    /** A receive completed and is in no queue: its buffer may serve the next post. */
    public void giveBack(ReceiveBuffer buffer) {
        synchronized (free) {
            free.addFirst(buffer);
        }
    }
}
