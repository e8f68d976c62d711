package org.jiwarp.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Waits with a deadline, for the places where the JDK's plain forms ({@link Thread#join()},
 * {@link CountDownLatch#await()}) wait forever: each fails the test, saying what did not happen,
 * when its deadline passes.
 */
public final class Deadlines {

    private Deadlines() {
    }

    /** Waits for {@code thread} to end; after {@code within}, interrupts it and fails. */
    public static void join(Thread thread, Duration within) throws InterruptedException {
        thread.join(within.toMillis());
        if (thread.isAlive()) {
            thread.interrupt();
            throw new AssertionError("thread " + thread.getName() + " is still running after " + within.toSeconds()
                    + " s");
        }
    }

    /** Waits for {@code latch} to open; fails after {@code within}, naming {@code what}. */
    public static void await(CountDownLatch latch, Duration within, String what) throws InterruptedException {
        if (!latch.await(within.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new AssertionError(what + " did not happen within " + within.toSeconds() + " s");
        }
    }

    /** Fails, naming {@code what}, once {@code System.nanoTime()} has passed {@code deadlineNanos}. */
    public static void check(long deadlineNanos, String what) {
        if (System.nanoTime() - deadlineNanos > 0) {
            throw new AssertionError(what);
        }
    }
}
