package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jiwarp.rnic.cq.AsyncEvents;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.Test;

/**
 * The races of a completion queue's own state (issue 21). Each round releases two threads together
 * through a barrier onto the two steps that race, repeated until the round is decided; rounds are
 * bounded, and the first round that shows the race fails the test. The windows are nanoseconds
 * wide and nothing in them calls out, so the steps repeat inside a round rather than once.
 */
class CompletionQueueRacesTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * {@code add} reads the listener and whether it only borrows the entry as one pair: a listener
     * that keeps its completions ({@link CompletionQueue#onCompletion}) never has one recycled under
     * it (given back to the free list, and handed out again for a later completion), however often
     * another thread switches to a lending listener and back. Every completion carries a unique work
     * request id; the kept ones must still carry theirs at the end of the round.
     */
    @Test
    void aCompletionTheListenerKeepsIsNeverRecycledWhileTheModeChanges() throws Exception {
        int rounds = 200;
        int adds = 5_000;
        CompletionQueue cq = new CompletionQueue(16, new AsyncEvents());
        WorkCompletion[] kept = new WorkCompletion[adds];
        long[] keptIds = new long[adds];
        int[] keptCount = new int[1];
        // Both listeners run on this thread, inside add().
        Consumer<WorkCompletion> keeper = wc -> {
            kept[keptCount[0]] = wc;
            keptIds[keptCount[0]++] = wc.workRequestId();
        };
        Consumer<WorkCompletion> lender = wc -> { };
        CyclicBarrier start = new CyclicBarrier(2);
        long nextId = 1;
        for (int round = 0; round < rounds; round++) {
            cq.onCompletion(keeper);
            keptCount[0] = 0;
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread switcher = new Thread(() -> {
                try {
                    start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                    while (!stop.get()) {
                        cq.onCompletion(keeper);
                        cq.onCompletionLent(lender);
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "listener-switcher");
            switcher.start();
            start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            for (int i = 0; i < adds; i++) {
                WorkCompletion wc = cq.entry();
                wc.set(nextId++, WcStatus.SUCCESS, WcOpcode.SEND, 0, null, 0, false, null);
                cq.add(wc);
            }
            stop.set(true);
            Deadlines.join(switcher, WAIT);
            assertNull(failed.get(), "the switcher failed");
            for (int k = 0; k < keptCount[0]; k++) {
                long now = kept[k].workRequestId();
                if (now != keptIds[k]) {
                    throw new AssertionError("round " + round + ": the completion the listener kept as id " + keptIds[k]
                            + " now has id " + now + ": the queue recycled it under the listener");
                }
            }
        }
    }

    /**
     * {@code destroy} and {@code attach} are each one atomic step: a queue pair is never attached to
     * a destroyed queue. One thread attaches and detaches over and over, checking after each attach
     * that the queue is not destroyed; the other destroys the queue as soon as nothing uses it.
     */
    @Test
    void aQueuePairNeverAttachesToADestroyedQueue() throws Exception {
        int rounds = 2_000;
        CyclicBarrier start = new CyclicBarrier(2);
        for (int round = 0; round < rounds; round++) {
            CompletionQueue cq = new CompletionQueue(16, new AsyncEvents());
            Runnable onError = () -> { };
            AtomicReference<String> violation = new AtomicReference<>();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            Thread attacher = new Thread(() -> {
                try {
                    start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                    for (int attaches = 0;; attaches++) {
                        try {
                            cq.attach(onError);
                        } catch (IllegalStateException destroyed) {
                            return;
                        }
                        if (cq.destroyed()) {
                            violation.set("attach " + attaches + " succeeded on a destroyed queue");
                            return;
                        }
                        cq.detach(onError);
                        Deadlines.check(deadline, "the attacher never saw the queue destroyed");
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "attacher");
            attacher.start();
            start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            while (true) {
                try {
                    cq.destroy();
                    break;
                } catch (IllegalStateException used) {
                    Deadlines.check(deadline, "the queue was never free to destroy");
                }
            }
            Deadlines.join(attacher, WAIT);
            assertNull(failed.get(), "the attacher failed");
            assertNull(violation.get(), "round " + round);
        }
    }
}
