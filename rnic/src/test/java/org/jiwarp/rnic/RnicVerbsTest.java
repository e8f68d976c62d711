package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaRejectedException;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.testing.Deadlines;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * The verbs around the data path: completion listeners, ByteBuf registration, deregistration,
 * graceful disconnect, rejection with private data, and posting from many threads.
 */
class RnicVerbsTest {

    private static final MpaSettings MPA = RnicOperationsTest.mpa(true, false);

    @Test
    void completionListenerGetsEveryCompletionInsteadOfTheQueue() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 4096, (config, server) -> config)) {
            ConcurrentLinkedQueue<WorkCompletion> seen = new ConcurrentLinkedQueue<>();
            CountDownLatch three = new CountDownLatch(3);
            pair.clientCq.onCompletion(wc -> {
                seen.add(wc);
                three.countDown();
            });
            for (int i = 0; i < 3; i++) {
                pair.client.postSend(SendWorkRequest.write(i, pair.serverRegion.address(), pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 0, 64)));
            }
            assertTrue(three.await(10, TimeUnit.SECONDS));
            assertEquals(List.of(0L, 1L, 2L), seen.stream().map(WorkCompletion::workRequestId).toList());
            assertEquals(0, pair.clientCq.size(), "nothing queued while a listener is set");
        }
    }

    @Test
    void byteBufRegionsAndDeregistration() throws Exception {
        ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(1024, 1024).writeZero(1024);
        try (RnicPair pair = new RnicPair(MPA, 4096, (config, server) -> config)) {
            MemoryRegion region = pair.serverPd.register(pooled, Access.ALL);
            assertEquals(1024, region.length());
            pair.clientRegion.buffer().setLong(0, 0x0123456789ABCDEFL);
            pair.client.postSend(SendWorkRequest.write(1, region.address() + 512, region.rkey(),
                    new Sge(pair.clientRegion, 0, 8)));
            RnicOperationsTest.take(pair.clientCq);
            pair.server.postReceive(new ReceiveWorkRequest(2, new Sge(pair.serverRegion, 0, 8)));
            pair.client.postSend(SendWorkRequest.send(3, new Sge(pair.clientRegion, 0, 8)));
            RnicOperationsTest.take(pair.clientCq);
            RnicOperationsTest.take(pair.serverCq);
            assertEquals(0x0123456789ABCDEFL, pooled.getLong(512), "placed in the ByteBuf itself");
            // Deregistered: the STag never matches again.
            region.deregister();
            assertTrue(!region.valid());
            pair.client.postSend(SendWorkRequest.write(4, region.address(), region.rkey(),
                    new Sge(pair.clientRegion, 0, 8)));
            pair.client.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, pair.client.terminateReceived().error());
        } finally {
            pooled.release();
        }
    }

    @Test
    void gracefulDisconnectFlushesWithoutATerminate() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 4096, (config, server) -> config)) {
            pair.server.postReceive(new ReceiveWorkRequest(7, new Sge(pair.serverRegion, 0, 64)));
            pair.client.postSend(SendWorkRequest.write(1, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status());
            pair.client.disconnect().get(10, TimeUnit.SECONDS);
            pair.server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.client.state());
            assertEquals(QpState.ERROR, pair.server.state());
            assertNull(pair.server.terminateSent());
            assertNull(pair.server.terminateReceived());
            assertNull(pair.client.terminateReceived());
            WorkCompletion flushed = RnicOperationsTest.take(pair.serverCq);
            assertEquals(7, flushed.workRequestId());
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, flushed.status());
            // Work posted after the way down completes in flush error at once.
            pair.client.postSend(SendWorkRequest.send(9, new Sge(pair.clientRegion, 0, 8)));
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, RnicOperationsTest.take(pair.clientCq).status());
        }
    }

    @Test
    void rejectionCarriesPrivateData() throws Exception {
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(1).mpa(MPA));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(1).mpa(MPA))) {
            CompletableFuture<byte[]> asked = new CompletableFuture<>();
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
                asked.complete(request.privateData());
                request.reject("busy".getBytes());
            });
            ProtectionDomain pd = client.allocatePd();
            CompletionQueue cq = client.createCq(8);
            QueuePair qp = client.createQp(new QpConfig(pd, cq, cq));
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> client.connect(qp, listener.localAddress(), "please".getBytes()).get(10, TimeUnit.SECONDS));
            MpaRejectedException rejected = assertInstanceOf(MpaRejectedException.class, failed.getCause());
            assertArrayEquals("busy".getBytes(), rejected.privateData());
            assertArrayEquals("please".getBytes(), asked.get());
            qp.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, qp.state());
            listener.close();
        }
    }

    @Test
    void postingFromManyThreadsKeepsEachThreadsOrder() throws Exception {
        int threads = 4;
        int each = 500;
        try (RnicPair pair = new RnicPair(MPA, 1 << 16,
                (config, server) -> config.sendDepth(threads * each).receiveDepth(threads * each))) {
            List<Thread> posters = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                posters.add(new Thread(() -> {
                    for (int i = 0; i < each; i++) {
                        pair.server.postReceive(new ReceiveWorkRequest(thread * 100_000L + i,
                                new Sge(pair.serverRegion, thread * 8192L, 64)));
                        pair.client.postSend(SendWorkRequest.write(thread * 100_000L + i,
                                pair.serverRegion.address() + 32768 + thread * 8L, pair.serverRegion.rkey(),
                                new Sge(pair.clientRegion, thread * 8L, 8)));
                    }
                }));
            }
            posters.forEach(Thread::start);
            for (Thread poster : posters) {
                Deadlines.join(poster, Duration.ofSeconds(60));
            }
            long[] next = new long[threads];
            for (int i = 0; i < threads * each; i++) {
                WorkCompletion wc = RnicOperationsTest.take(pair.clientCq);
                assertEquals(WcStatus.SUCCESS, wc.status());
                int thread = (int) (wc.workRequestId() / 100_000);
                assertEquals(next[thread]++, wc.workRequestId() % 100_000, "thread " + thread + "'s order");
            }
            for (int t = 0; t < threads; t++) {
                assertEquals(each, next[t]);
            }
        }
    }
}
