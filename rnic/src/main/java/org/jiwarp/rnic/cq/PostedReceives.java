package org.jiwarp.rnic.cq;

import java.util.ArrayDeque;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.SharedReceives;

/**
 * The receives posted to a shared receive queue ({@code ibv_srq}; siw's {@code siw_srq}), as its
 * queue pairs take them: at most {@code maxWr} at once, taken oldest first, one per message, by the
 * event loops of every queue pair on the queue. A receive leaves the queue when a queue pair takes
 * it; from then on it is that queue pair's, completed (or flushed) on its receive completion queue.
 *
 * <p>The limit (the low-water mark, {@code srq_limit}): while armed (not 0), the take that leaves
 * fewer receives than the limit disarms it and tells the listener once (the IB specification's
 * SRQ Limit Reached, siw's {@code siw_rqe_get}); {@link #limit(int)} arms it again.
 *
 * <p>Safe from any thread; the listener runs on the thread of the take, outside the queue's lock.
 */
public final class PostedReceives {

    private final int maxWr;
    private final Runnable limitReached;
    private final ReceivePool pool = new ReceivePool();
    /** Guards everything below: posts from any thread, takes from every queue pair's event loop. */
    private final Object lock = new Object();
    private final ArrayDeque<ReceiveBuffer> posted;
    private int limit;
    private boolean destroyed;

    /**
     * @param maxWr        the most receives posted at once
     * @param limit        the limit, armed unless 0 (as siw arms a limit given at creation)
     * @param limitReached told when an armed limit is reached
     */
    public PostedReceives(int maxWr, int limit, Runnable limitReached) {
        this.maxWr = maxWr;
        this.limit = limit;
        this.limitReached = limitReached;
        this.posted = new ArrayDeque<>(Math.min(maxWr, 16));
    }

    /** Where the buffers of this queue's receives come from and go back to once completed. */
    public ReceivePool pool() {
        return pool;
    }

    /**
     * Posts a receive behind the others.
     *
     * @return {@code false}, posting nothing, when {@code maxWr} receives are posted or the queue is
     *     destroyed
     */
    public boolean post(ReceiveBuffer buffer) {
        synchronized (lock) {
            if (destroyed || posted.size() >= maxWr) {
                return false;
            }
            posted.addLast(buffer);
            return true;
        }
    }

    /** The oldest receive, now the caller's; {@code null} when none is posted. */
    public ReceiveBuffer take() {
        ReceiveBuffer buffer;
        boolean reached;
        synchronized (lock) {
            buffer = posted.pollFirst();
            if (buffer == null) {
                return null;
            }
            reached = limit > 0 && posted.size() < limit;
            if (reached) {
                limit = 0; // fires once, until armed again
            }
        }
        if (reached) {
            limitReached.run();
        }
        return buffer;
    }

    /**
     * A queue pair's view of the queue: its takes, each counted as one more receive that queue pair
     * holds until it completes ({@code taken}).
     */
    public SharedReceives takenBy(Runnable taken) {
        return () -> {
            ReceiveBuffer buffer = take();
            if (buffer != null) {
                taken.run();
            }
            return buffer;
        };
    }

    /** Arms the limit ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}); 0 disarms it. */
    public void limit(int limit) {
        synchronized (lock) {
            this.limit = limit;
        }
    }

    /** The armed limit; 0 when disarmed. */
    public int limit() {
        synchronized (lock) {
            return limit;
        }
    }

    public int maxWr() {
        return maxWr;
    }

    /** Receives posted and not yet taken. */
    public int posted() {
        synchronized (lock) {
            return posted.size();
        }
    }

    /** The queue is destroyed: its receives are dropped, never completed, and posts are refused. */
    public void destroy() {
        synchronized (lock) {
            destroyed = true;
            posted.clear();
        }
    }
}
