package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * A work request prepared once and posted again and again, over real TCP: every post completes,
 * the data arrives, a post while the previous one is outstanding is refused, and a post allocates
 * (almost) nothing on the posting thread and the event loop, prepared or not (a plain post's slot is
 * recycled), with completions taken by {@link CompletionQueue#poll(WorkCompletion[])}.
 */
class PreparedSendTest {

    private static final int POSTS = 2_000;

    @Test
    void aPreparedWriteIsPostedAgainWithoutAllocating() throws Exception {
        try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
            for (int i = 0; i < 256; i++) {
                pair.clientRegion.buffer().setByte(i, i * 7);
            }
            SendWorkRequest wr = SendWorkRequest.write(42, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 256));
            PreparedSend write = pair.client.prepare(wr);
            long eventLoop = eventLoopThread(pair.client);
            // Warm up both paths, then measure each on the posting thread and the queue pair's event loop.
            run(pair, () -> pair.client.postSend(wr), POSTS, eventLoop);
            run(pair, write::post, POSTS, eventLoop);
            // The build's paranoid leak detection records every buffer access: measured without it.
            ResourceLeakDetector.Level leakDetection = ResourceLeakDetector.getLevel();
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            double plain;
            double prepared;
            try {
                run(pair, write::post, POSTS, eventLoop);
                plain = run(pair, () -> pair.client.postSend(wr), POSTS, eventLoop);
                prepared = run(pair, write::post, POSTS, eventLoop);
            } finally {
                ResourceLeakDetector.setLevel(leakDetection);
            }
            for (int i = 0; i < 256; i++) {
                assertEquals((byte) (i * 7), pair.serverRegion.buffer().getByte(i), "octet " + i);
            }
            // Per post one channel promise and the event loop's wake-up remain (about 80 octets); a send slot
            // (about 90) or a completion (about 40) per post would exceed this.
            System.out.printf("octets per post: prepared %.1f, postSend %.1f%n", prepared, plain);
            assertTrue(prepared < 110 && plain < 110, "octets per post: prepared " + prepared + ", postSend " + plain);

            // Outstanding, deterministically: a fenced post waits for a Read the peer cannot answer yet
            // (its event loop is held).
            CountDownLatch hold = new CountDownLatch(1);
            pair.server.execute(() -> {
                try {
                    // Opened by the finally below; the deadline only keeps a failed test from holding the loop.
                    hold.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                pair.client.postSend(SendWorkRequest.read(7, pair.serverRegion.address(), pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 1024, 64)));
                PreparedSend fenced = pair.client.prepare(SendWorkRequest.write(8, pair.serverRegion.address() + 512,
                        pair.serverRegion.rkey(), new Sge(pair.clientRegion, 0, 64)).fence());
                fenced.post();
                assertTrue(fenced.outstanding());
                assertThrows(IllegalStateException.class, fenced::post, "posted again while outstanding");
            } finally {
                hold.countDown(); // never leave the server's event loop held (closing would wait for it)
            }
            assertEquals(7, pair.clientCq.take(10, TimeUnit.SECONDS).workRequestId());
            assertEquals(8, pair.clientCq.take(10, TimeUnit.SECONDS).workRequestId());
        }
    }

    private static long eventLoopThread(QueuePair qp) throws Exception {
        CompletableFuture<Long> id = new CompletableFuture<>();
        qp.execute(() -> id.complete(Thread.currentThread().getId()));
        return id.get(10, TimeUnit.SECONDS);
    }

    /** Posts {@code n} times, one at a time; the octets allocated per post on both threads. */
    private static double run(RnicPair pair, Runnable post, int n, long eventLoop) throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        WorkCompletion[] polled = {new WorkCompletion()};
        long here = 0;
        long loopBefore = threads.getThreadAllocatedBytes(eventLoop);
        for (int i = 0; i < n; i++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            post.run();
            here += threads.getCurrentThreadAllocatedBytes() - before;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (pair.clientCq.poll(polled) == 0) {
                assertTrue(System.nanoTime() < deadline, "post " + i + " completes");
                Thread.onSpinWait();
            }
            WorkCompletion wc = polled[0];
            assertEquals(42, wc.workRequestId());
            assertEquals(WcStatus.SUCCESS, wc.status(), "post " + i);
            assertEquals(256, wc.byteLength());
        }
        long loop = threads.getThreadAllocatedBytes(eventLoop) - loopBefore;
        return (double) (here + loop) / n;
    }
}
