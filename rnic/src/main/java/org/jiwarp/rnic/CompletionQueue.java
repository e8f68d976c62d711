package org.jiwarp.rnic;

import io.netty.util.internal.PlatformDependent;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jiwarp.rnic.cq.AsyncEvents;
import org.jiwarp.rnic.cq.CompletionSink;

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
 *       the event loop instead of being queued; {@link #onCompletionLent(Consumer)} the same with
 *       the entry lent for the call only.</li>
 * </ul>
 *
 * <p>A listener that throws, an {@link Error} included, is reported to its thread's uncaught exception
 * handler and the queue pair goes on: the exception never reaches the connection in the middle of
 * the segment it was placing.
 *
 * <p>Entries are recycled where the caller never holds them: {@link #poll(WorkCompletion[])} copies
 * into the caller's array and gives the queue's entry back, and so does a lent call-back once it
 * returns. In steady state with either, a completion allocates nothing. {@link #take} and
 * {@link #onCompletion(Consumer)} hand the entry over for good.
 *
 * <p>A completion beyond the depth is an overrun, an error as on a real CQ, never a silent drop: the
 * CQ goes into error (completions already queued can still be taken; then {@link #poll} and
 * {@link #take} throw), an {@link AsyncEvent.Type#CQ_ERROR} event fires, and the queue pairs it
 * serves move to ERROR. {@link #overruns()} counts the completions lost, exactly, however many
 * threads add. Size the CQ for the work that can be outstanding.
 */
public final class CompletionQueue {

    private final int depth;
    private final ArrayBlockingQueue<WorkCompletion> queue;
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile boolean solicitedOnly;
    private volatile Consumer<CompletionQueue> notificationListener;
    /**
     * The completion listener and whether it lends: one field, so that {@link #add} reads both as
     * they were set together (two fields let it pair the old listener with the new mode, and
     * recycle a completion its listener keeps).
     */
    private volatile CompletionListener completionListener;
    /** Entries given back, taken by {@link #entry()}: many event loops add, many threads give back. */
    private final Queue<WorkCompletion> free;
    private final AtomicLong overruns = new AtomicLong();
    private final AtomicBoolean error = new AtomicBoolean();
    /**
     * The queue pairs attached, or {@link #DESTROYED}: one word, so that {@link #destroy} (no user,
     * then destroyed) and {@link #attach} (not destroyed, then one user more) are each one atomic
     * step and a queue pair is never attached to a destroyed queue.
     */
    private final AtomicInteger users = new AtomicInteger();
    private static final int DESTROYED = -1;
    private final List<Runnable> errorListeners = new CopyOnWriteArrayList<>();

    private final AsyncEvents events;

    CompletionQueue(int depth, AsyncEvents events) {
        this.events = events;
        if (depth < 1) {
            throw new IllegalArgumentException("CQ depth must be positive: " + depth);
        }
        this.depth = depth;
        this.queue = new ArrayBlockingQueue<>(depth);
        this.free = PlatformDependent.newFixedMpmcQueue(Math.max(depth, 2));
    }

    /** Where {@code qp} adds its completions (the engine's side of this queue; see {@link CompletionSink}). */
    CompletionSink sinkFor(QueuePair qp) {
        return (id, status, opcode, length, invalidatedStag, solicited, error, value) -> add(entry().set(id, status,
                opcode, length, qp, invalidatedStag, solicited, error).immediateData(value));
    }

    /** An entry to fill and {@link #add}: one given back, or a new one. */
    WorkCompletion entry() {
        WorkCompletion wc = free.poll();
        return wc != null ? wc : new WorkCompletion();
    }

    public int depth() {
        return depth;
    }

    /**
     * Moves up to {@code out.length} completions into the caller's objects; returns how many. Allocates
     * nothing.
     *
     * @throws IllegalStateException when the CQ overran and holds nothing more
     */
    public int poll(WorkCompletion[] out) {
        int n = 0;
        while (n < out.length) {
            WorkCompletion wc = queue.poll();
            if (wc == null) {
                break;
            }
            out[n++].copyFrom(wc);
            free.offer(wc);
        }
        if (n == 0 && error.get()) {
            throw overran();
        }
        return n;
    }

    /**
     * The next completion, waiting up to the timeout; {@code null} on timeout.
     *
     * @throws IllegalStateException when the CQ overran and holds nothing more
     */
    public WorkCompletion take(long timeout, TimeUnit unit) throws InterruptedException {
        WorkCompletion wc = queue.poll();
        if (wc != null) {
            return wc;
        }
        if (error.get()) {
            throw overran();
        }
        return queue.poll(timeout, unit);
    }

    private IllegalStateException overran() {
        return new IllegalStateException("the completion queue overran (depth " + depth + "): " + overruns.get()
                + " completions lost; it is in error and its queue pairs are in ERROR");
    }

    /** Whether the CQ overran and is in error. */
    public boolean inError() {
        return error.get();
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
        this.completionListener = listener == null ? null : new CompletionListener(listener, false);
    }

    /**
     * As {@link #onCompletion(Consumer)}, but each entry is lent for the call only ({@code
     * ibv_poll_cq}'s contract): the queue reuses it once the listener returns, so a listener that
     * keeps a completion copies it ({@link WorkCompletion#copyFrom}). Nothing is allocated per
     * completion then.
     */
    public void onCompletionLent(Consumer<WorkCompletion> listener) {
        this.completionListener = listener == null ? null : new CompletionListener(listener, true);
    }

    /** Completions lost because the queue was full (exact). */
    public long overruns() {
        return overruns.get();
    }

    /**
     * Destroys the CQ ({@code ibv_destroy_cq}).
     *
     * @throws IllegalStateException while a queue pair that is not destroyed uses it
     */
    public void destroy() {
        for (int n = users.get(); n != DESTROYED; n = users.get()) {
            if (n > 0) {
                throw new IllegalStateException("the completion queue is used by " + n
                        + " queue pair(s): destroy them first");
            }
            if (users.compareAndSet(0, DESTROYED)) {
                break;
            }
        }
        queue.clear();
    }

    boolean destroyed() {
        return users.get() == DESTROYED;
    }

    /**
     * A queue pair reports here from now on; {@code onError} takes it to ERROR on an overrun.
     *
     * @throws IllegalStateException when the queue is destroyed
     */
    void attach(Runnable onError) {
        for (int n = users.get();; n = users.get()) {
            if (n == DESTROYED) {
                throw new IllegalStateException("the completion queue is destroyed");
            }
            if (users.compareAndSet(n, n + 1)) {
                break;
            }
        }
        errorListeners.add(onError);
    }

    /** A queue pair reporting here was destroyed. */
    void detach(Runnable onError) {
        if (errorListeners.remove(onError)) {
            users.decrementAndGet();
        }
    }

    void add(WorkCompletion wc) {
        CompletionListener listener = completionListener;
        if (listener != null) {
            try {
                listener.consumer().accept(wc);
            } catch (Throwable e) {
                AsyncEvents.listenerFailed(e);
            }
            if (listener.lent()) {
                free.offer(wc);
            }
        } else if (error.get() || !queue.offer(wc)) {
            overruns.incrementAndGet();
            if (error.compareAndSet(false, true)) {
                events.fire(new AsyncEvent(AsyncEvent.Type.CQ_ERROR, null, this, null, "the completion queue overran "
                        + "(depth " + depth + "); its queue pairs move to ERROR"));
                for (Runnable onError : errorListeners) {
                    onError.run();
                }
            }
            return;
        }
        if (armed.get() && (!solicitedOnly || wc.solicited() || wc.status() != WcStatus.SUCCESS)
                && armed.compareAndSet(true, false)) {
            Consumer<CompletionQueue> notify = notificationListener;
            if (notify != null) {
                try {
                    notify.accept(this);
                } catch (Throwable e) {
                    AsyncEvents.listenerFailed(e);
                }
            }
        }
    }

    /**
     * A completion listener and whether it only borrows each entry (its entries go back to {@link
     * #free} once it returns).
     */
    private record CompletionListener(Consumer<WorkCompletion> consumer, boolean lent) {
    }
}
