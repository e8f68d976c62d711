package org.jiwarp.rnic;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A completion queue ({@code ibv_cq}): queue pairs add completions from their event loops,
 * applications take them from any thread.
 *
 * <ul>
 *   <li>{@link #poll(WorkCompletion[])}: non-blocking, into the caller's preallocated array
 *       ({@code ibv_poll_cq});</li>
 *   <li>{@link #take(long, TimeUnit)}: blocking with a timeout;</li>
 *   <li>{@link #requestNotification(boolean)} with {@link #onNotification(Consumer)}: one call-back
 *       for the next completion, or the next solicited one ({@code ibv_req_notify_cq});</li>
 *   <li>{@link #onCompletion(Consumer)}: callback style, every completion handed to a listener on
 *       the event loop instead of being queued.</li>
 * </ul>
 *
 * <p>A completion beyond the depth is an overrun ({@link #overruns()}), as on a real CQ; size the
 * CQ for the work that can be outstanding.
 */
public final class CompletionQueue {

    private final int depth;
    private final ArrayBlockingQueue<WorkCompletion> queue;
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile boolean solicitedOnly;
    private volatile Consumer<CompletionQueue> notificationListener;
    private volatile Consumer<WorkCompletion> completionListener;
    private volatile long overruns;

    CompletionQueue(int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("CQ depth must be positive: " + depth);
        }
        this.depth = depth;
        this.queue = new ArrayBlockingQueue<>(depth);
    }

    public int depth() {
        return depth;
    }

    /** Moves up to {@code out.length} completions into the caller's objects; returns how many. */
    public int poll(WorkCompletion[] out) {
        int n = 0;
        while (n < out.length) {
            WorkCompletion wc = queue.poll();
            if (wc == null) {
                break;
            }
            out[n++].copyFrom(wc);
        }
        return n;
    }

    /** The next completion, waiting up to the timeout; {@code null} on timeout. */
    public WorkCompletion take(long timeout, TimeUnit unit) throws InterruptedException {
        return queue.poll(timeout, unit);
    }

    /** Completions waiting. */
    public int size() {
        return queue.size();
    }

    /** Arms a single notification for the next completion, or the next solicited one. */
    public void requestNotification(boolean solicitedOnly) {
        this.solicitedOnly = solicitedOnly;
        armed.set(true);
    }

    /** Who is told when an armed notification fires (on the event loop that added the completion). */
    public void onNotification(Consumer<CompletionQueue> listener) {
        this.notificationListener = listener;
    }

    /** Hands every completion to {@code listener} instead of queueing it; {@code null} to queue again. */
    public void onCompletion(Consumer<WorkCompletion> listener) {
        this.completionListener = listener;
    }

    /** Completions dropped because the queue was full. */
    public long overruns() {
        return overruns;
    }

    void add(WorkCompletion wc) {
        Consumer<WorkCompletion> listener = completionListener;
        if (listener != null) {
            listener.accept(wc);
        } else if (!queue.offer(wc)) {
            overruns++;
        }
        if (armed.get() && (!solicitedOnly || wc.solicited() || wc.status() != WcStatus.SUCCESS)
                && armed.compareAndSet(true, false)) {
            Consumer<CompletionQueue> notify = notificationListener;
            if (notify != null) {
                notify.accept(this);
            }
        }
    }
}
