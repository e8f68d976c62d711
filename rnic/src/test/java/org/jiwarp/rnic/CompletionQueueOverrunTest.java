package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.Test;

/**
 * A completion queue that overruns is an error the user sees, never a silent drop: eight threads
 * post signaled Writes on four queue pairs that share a 16-deep CQ nobody polls. Every completion
 * is either queued or counted as lost, exactly; the CQ is in error and says so once drained; a
 * CQ_ERROR event fires; every queue pair it serves reaches ERROR.
 */
class CompletionQueueOverrunTest {

    private static final int DEPTH = 16;
    private static final int QPS = 4;
    private static final int THREADS = 8;
    private static final int POSTS = 10_000;

    @Test
    void anOverrunIsCountedExactlyAndTakesTheQueuePairsDown() throws Exception {
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(1));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(2))) {
            List<AsyncEvent> events = new CopyOnWriteArrayList<>();
            client.onAsyncEvent(events::add);
            ProtectionDomain serverPd = server.allocatePd();
            CompletionQueue serverCq = server.createCq(1 << 16);
            MemoryRegion target = serverPd.register(ByteBuffer.allocateDirect(4096), Access.ALL);
            LinkedBlockingQueue<QueuePair> idle = new LinkedBlockingQueue<>();
            for (int i = 0; i < QPS; i++) {
                idle.add(server.createQp(new QpConfig(serverPd, serverCq, serverCq)));
            }
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(idle.poll(), new byte[0]));

            ProtectionDomain pd = client.allocatePd();
            CompletionQueue cq = client.createCq(DEPTH);
            MemoryRegion source = pd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            List<QueuePair> qps = new ArrayList<>();
            for (int i = 0; i < QPS; i++) {
                QueuePair qp = client.createQp(new QpConfig(pd, cq, cq).sendDepth(4096));
                client.connect(qp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
                qps.add(qp);
            }

            AtomicLong admitted = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                QueuePair qp = qps.get(t % QPS);
                Thread thread = new Thread(() -> {
                    for (int i = 0; i < POSTS; i++) {
                        try {
                            qp.postSend(SendWorkRequest.write(i, target.address(), target.rkey(),
                                    new Sge(source, 0, 8)));
                            admitted.incrementAndGet();
                        } catch (IllegalStateException full) {
                            Thread.onSpinWait(); // the send queue is full for a moment
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                Deadlines.join(thread, Duration.ofSeconds(60));
            }
            for (QueuePair qp : qps) {
                qp.closeFuture().get(10, TimeUnit.SECONDS);
                assertEquals(QpState.ERROR, qp.state(), qp + " went down with its CQ");
            }
            // Every completion has happened once each queue pair's event loop has run everything queued.
            for (QueuePair qp : qps) {
                CompletableFuture<Void> quiet = new CompletableFuture<>();
                qp.execute(() -> quiet.complete(null));
                quiet.get(10, TimeUnit.SECONDS);
            }

            assertTrue(cq.inError(), "the CQ is in error");
            WorkCompletion[] out = new WorkCompletion[64];
            for (int i = 0; i < out.length; i++) {
                out[i] = new WorkCompletion();
            }
            int queued = cq.poll(out);
            assertEquals(DEPTH, queued, "the CQ held its depth");
            assertEquals(admitted.get(), queued + cq.overruns(),
                    "every admitted work request's completion is queued or counted as lost");
            IllegalStateException drained = assertThrows(IllegalStateException.class, () -> cq.poll(out));
            assertTrue(drained.getMessage().contains("overran"), drained.getMessage());
            assertThrows(IllegalStateException.class, () -> cq.take(1, TimeUnit.MILLISECONDS));

            assertEquals(1, events.stream().filter(e -> e.type() == AsyncEvent.Type.CQ_ERROR && e.cq() == cq).count(),
                    "one CQ_ERROR event: " + events);
            for (QueuePair qp : qps) {
                assertTrue(events.stream().anyMatch(e -> e.type() == AsyncEvent.Type.DISCONNECTED
                        && e.queuePair() == qp), qp + " reported going down: " + events);
            }
        }
    }
}
