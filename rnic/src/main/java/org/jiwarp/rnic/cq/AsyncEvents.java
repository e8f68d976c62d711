package org.jiwarp.rnic.cq;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jiwarp.rnic.AsyncEvent;

/** The async event listeners of one RNIC, and the one place events are handed to them. */
public final class AsyncEvents {

    private final List<Consumer<AsyncEvent>> listeners = new CopyOnWriteArrayList<>();

    public void add(Consumer<AsyncEvent> listener) {
        listeners.add(listener);
    }

    /** Hands {@code event} to every listener on the calling thread; a listener that throws does not stop the others. */
    public void fire(AsyncEvent event) {
        for (Consumer<AsyncEvent> listener : listeners) {
            try {
                listener.accept(event);
            } catch (Throwable e) {
                listenerFailed(e);
            }
        }
    }

    /**
     * A user's listener (async event, completion, notification) threw: its thread's uncaught
     * exception handler hears of it, and the RNIC goes on as if the listener had returned. The
     * exception must not reach the connection, which may be in the middle of a segment; an
     * {@link Error} neither (an application's {@code AssertionError}, a {@code StackOverflowError}
     * in its listener), since the stack has unwound to here and the RNIC's state is whole.
     */
    public static void listenerFailed(Throwable e) {
        Thread t = Thread.currentThread();
        t.getUncaughtExceptionHandler().uncaughtException(t, e);
    }
}
