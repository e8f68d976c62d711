package org.jiwarp.rnic;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jiwarp.rnic.qp.QpConnection;
import org.jiwarp.rnic.tx.SendSlot;

/**
 * A send work request prepared once and posted again and again without allocating (DiSNI's
 * stateful verb call in spirit): {@link QueuePair#prepare} checks and captures the request, and
 * every {@link #post()} reuses the same bookkeeping. A prepared request is outstanding from its
 * post until its completion is reported (or, unsignaled, until it retires); posting it again before
 * then is refused. Prepare several to keep several in flight.
 *
 * <p>{@link #post()} is thread-safe; from the queue pair's own thread (a completion listener, or
 * {@link QueuePair#execute}) it goes out at once, from another thread through the event loop.
 */
public final class PreparedSend {

    /** The queue pair's admission of a post: the connection to post on, or {@code null} when flushed at once. */
    @FunctionalInterface
    interface Admission {
        QpConnection admit(SendSlot slot);
    }

    private final Admission admission;
    private final SendSlot slot;
    private final AtomicBoolean outstanding = new AtomicBoolean();

    PreparedSend(Admission admission, SendWorkRequest wr) {
        this.admission = admission;
        this.slot = new SendSlot(wr, wr.sglUnsafe(), this::retired);
    }

    /** The work request this posts. */
    public long id() {
        return slot.id;
    }

    /** Whether a post of this request is outstanding. */
    public boolean outstanding() {
        return outstanding.get();
    }

    /**
     * Posts the prepared request.
     *
     * @throws IllegalStateException when its previous post is still outstanding, the send queue is
     *     full, or the queue pair is not connected
     */
    public void post() {
        if (!outstanding.compareAndSet(false, true)) {
            throw new IllegalStateException("work request " + slot.id + " is still outstanding");
        }
        QpConnection c;
        try {
            c = admission.admit(slot);
        } catch (RuntimeException e) {
            outstanding.set(false);
            throw e;
        }
        if (c == null) {
            return; // flushed at once: the queue pair never connected
        }
        if (c.inEventLoop()) {
            slot.reset();
            c.sending().post(slot);
        } else {
            c.sending().ring(slot); // reset on the event loop, where every use of the slot happens
        }
    }

    /** The slot's completion was reported: it may be posted again. */
    void retired() {
        outstanding.set(false);
    }
}
