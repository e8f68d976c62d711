package org.jiwarp.rnic;

import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.rnic.cq.AsyncEvents;
import org.jiwarp.rnic.cq.PostedReceives;
import org.jiwarp.rnic.mem.LocalAccess;

/**
 * A shared receive queue ({@code ibv_srq}, created with {@link ProtectionDomain#createSrq}): one
 * pool of receives for the untagged Sends of every queue pair created with it
 * ({@link QpConfig#srq}, {@code ibv_qp_init_attr.srq}), as a server serves many connections.
 *
 * <ul>
 *   <li>{@link #postReceive} ({@code ibv_post_srq_recv}) posts from any thread; a queue that holds
 *       {@link #maxWr()} receives refuses the post, as a queue pair's full receive queue does.</li>
 *   <li>Each Send that starts on one of its queue pairs takes the oldest receive, on that queue
 *       pair's event loop; from then on the receive is the queue pair's, and completes (or is
 *       flushed) on its receive completion queue with its number. A Send that finds the queue empty
 *       gets the Terminate of a queue pair with no receive posted (RFC 5041 section 7.1: DDP,
 *       untagged buffer error, invalid MSN - no buffer available); the other queue pairs carry
 *       on.</li>
 *   <li>The limit ({@code srq_limit}), armed by {@link #modifyLimit} ({@code ibv_modify_srq} with
 *       {@code IBV_SRQ_LIMIT}) or at creation: the take that leaves fewer receives posted than the
 *       limit fires one {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} and disarms it ({@link #limit()}
 *       reads 0 again).</li>
 *   <li>A queue pair on the queue that enters ERROR flushes only the receive it was filling, if
 *       any, never the queue's others, and fires {@link AsyncEvent.Type#QP_LAST_WQE_REACHED}.</li>
 *   <li>{@link #destroy} ({@code ibv_destroy_srq}) is refused while a queue pair created with the
 *       queue is not destroyed; after it, posts are refused, and the receives it held are dropped
 *       without a completion, as libibverbs drops them.</li>
 * </ul>
 */
public final class SharedReceiveQueue {

    private final ProtectionDomain pd;
    private final int number;
    private final int maxSge;
    private final PostedReceives receives;
    /** Guards {@link #queuePairs} and {@link #destroyed} together, as the domain guards its counts. */
    private final Object lock = new Object();
    private int queuePairs;
    private volatile boolean destroyed;

    SharedReceiveQueue(ProtectionDomain pd, int number, int maxWr, int maxSge, int limit, AsyncEvents events) {
        if (maxWr < 1 || maxSge < 1) {
            throw new IllegalArgumentException("max WR " + maxWr + " and max SGE " + maxSge + " must be positive");
        }
        checkLimit(limit, maxWr);
        this.pd = pd;
        this.number = number;
        this.maxSge = maxSge;
        this.receives = new PostedReceives(maxWr, limit, () -> events.fire(new AsyncEvent(
                AsyncEvent.Type.SRQ_LIMIT_REACHED, null, null, this, null, this
                        + " has fewer receives posted than its limit (now disarmed)")));
    }

    public int number() {
        return number;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** The most receives posted at once ({@code max_wr}). */
    public int maxWr() {
        return receives.maxWr();
    }

    /** The most scatter/gather entries of one receive ({@code max_sge}). */
    public int maxSge() {
        return maxSge;
    }

    /** The armed limit ({@code ibv_query_srq}'s {@code srq_limit}): 0 when disarmed. */
    public int limit() {
        return receives.limit();
    }

    /** Receives posted and not yet taken by a queue pair. */
    public int posted() {
        return receives.posted();
    }

    /**
     * Posts a receive ({@code ibv_post_srq_recv}) behind the others; the next Send to start on any
     * of the queue's queue pairs takes the oldest.
     *
     * @throws IllegalArgumentException for more SGEs than {@link #maxSge()}, or an SGE that fails the
     *     local checks (in this queue's domain, local write)
     * @throws IllegalStateException when {@link #maxWr()} receives are posted, or the queue is
     *     destroyed
     */
    public void postReceive(ReceiveWorkRequest wr) {
        checkNotDestroyed();
        Sge[] sgl = wr.sglUnsafe();
        if (sgl.length > maxSge) {
            throw new IllegalArgumentException(sgl.length + " SGEs exceed the max of " + maxSge + " of " + this);
        }
        for (Sge sge : sgl) {
            LocalAccess.checked(sge, pd, Access.LOCAL_WRITE);
        }
        // Fenced: once a region is deregistered, nothing is placed in it through this receive.
        ReceiveBuffer buffer = receives.pool().take(wr.id(), sgl.length);
        for (Sge sge : sgl) {
            MemoryRegion region = sge.region();
            buffer.add(region.buffer(), (int) sge.offset(), sge.length(), region.tagged());
        }
        if (!receives.post(buffer)) {
            receives.pool().giveBack(buffer);
            checkNotDestroyed();
            throw new IllegalStateException(this + " is full (" + receives.maxWr() + ")");
        }
    }

    /**
     * Arms the limit ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}): once fewer than
     * {@code limit} receives are posted after a queue pair takes one, one
     * {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} fires and the limit disarms. 0 disarms it.
     *
     * @throws IllegalArgumentException for a limit below 0 or above {@link #maxWr()}
     */
    public void modifyLimit(int limit) {
        checkNotDestroyed();
        checkLimit(limit, receives.maxWr());
        receives.limit(limit);
    }

    /**
     * Destroys the queue ({@code ibv_destroy_srq}); its receives are dropped without a completion.
     * Idempotent.
     *
     * @throws IllegalStateException while a queue pair created with it is not destroyed
     */
    public void destroy() {
        synchronized (lock) {
            if (destroyed) {
                return;
            }
            if (queuePairs > 0) {
                throw new IllegalStateException(this + " still serves " + queuePairs
                        + " queue pair(s): destroy them first");
            }
            destroyed = true;
        }
        receives.destroy();
        pd.srqRemoved();
    }

    /** The receives as the engine sees them. */
    PostedReceives receives() {
        return receives;
    }

    /** A queue pair is created with the queue (given back with {@link #queuePairRemoved}). */
    void queuePairAdded() {
        synchronized (lock) {
            checkNotDestroyed();
            queuePairs++;
        }
    }

    void queuePairRemoved() {
        synchronized (lock) {
            queuePairs--;
        }
    }

    private void checkNotDestroyed() {
        if (destroyed) {
            throw new IllegalStateException(this + " is destroyed");
        }
    }

    private static void checkLimit(int limit, int maxWr) {
        if (limit < 0 || limit > maxWr) {
            throw new IllegalArgumentException("SRQ limit " + limit + " outside [0, max WR " + maxWr + "]");
        }
    }

    @Override
    public String toString() {
        return "SRQ " + number;
    }
}
