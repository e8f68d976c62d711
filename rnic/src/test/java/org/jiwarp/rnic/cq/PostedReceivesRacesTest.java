package org.jiwarp.rnic.cq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.SharedReceives;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A shared receive queue's posted receives under the threads that use them at once: one posting
 * thread and several taking ones (the event loops of the queue pairs on the queue). Every receive is
 * taken exactly once, each taker sees them oldest first, and the posting thread's count stays
 * within max_wr. The windows are nanoseconds wide, so the steps repeat inside the round.
 */
class PostedReceivesRacesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    @Timeout(60)
    void everyReceiveIsTakenOnceOldestFirstWhileTakersAndAPosterRace() throws Exception {
        int receives = 200_000;
        int takers = 3;
        int maxWr = 64;
        AtomicInteger events = new AtomicInteger();
        PostedReceives posted = new PostedReceives(maxWr, 0, events::incrementAndGet);
        AtomicInteger[] takenBy = new AtomicInteger[receives];
        for (int i = 0; i < receives; i++) {
            takenBy[i] = new AtomicInteger();
        }
        AtomicInteger taken = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(takers + 1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < takers; t++) {
            AtomicInteger count = new AtomicInteger();
            SharedReceives view = posted.takenBy(count::incrementAndGet);
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    long last = -1;
                    while (taken.get() < receives) {
                        ReceiveBuffer buffer = view.take();
                        if (buffer == null) {
                            Thread.onSpinWait();
                            continue;
                        }
                        long id = buffer.workRequestId();
                        assertTrue(id > last, "receive " + id + " after " + last);
                        last = id;
                        takenBy[(int) id].incrementAndGet();
                        taken.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    taken.set(receives);
                }
            }, "taker-" + t);
            threads.add(thread);
            thread.start();
        }
        start.await();
        for (int id = 0; id < receives && failure.get() == null; ) {
            // A fresh buffer per receive, so that a receive taken twice shows as its id taken twice.
            if (posted.post(new ReceiveBuffer(1).repost(id))) {
                id++;
            } else {
                assertTrue(posted.posted() <= maxWr, "posted " + posted.posted() + " of " + maxWr);
                Thread.onSpinWait();
            }
        }
        for (Thread thread : threads) {
            Deadlines.join(thread, WAIT);
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        for (int id = 0; id < receives; id++) {
            assertEquals(1, takenBy[id].get(), "receive " + id + " taken");
        }
        assertEquals(0, posted.posted());
        assertEquals(0, events.get(), "no limit armed");
    }
}
