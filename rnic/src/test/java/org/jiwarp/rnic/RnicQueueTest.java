package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * Queue behaviour over loopback TCP: 64 MiB messages, thousands of outstanding work requests,
 * reads bounded by ORD/IRD, scatter/gather, unsignalled work, fences, in-order completions, CQ
 * polling and notification.
 */
class RnicQueueTest {

    private static final MpaSettings MPA = RnicOperationsTest.mpa(true, false);

    @Test
    void sixtyFourMebibyteWriteReadAndSend() throws Exception {
        int size = 64 << 20;
        try (RnicPair pair = new RnicPair(MPA, 2 * size, (config, server) -> config)) {
            ByteBuf client = pair.clientRegion.buffer();
            ByteBuf server = pair.serverRegion.buffer();
            RnicOperationsTest.fill(client, 0, size, 1);
            pair.client.postSend(SendWorkRequest.write(1, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, size)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status());
            // Read it back into the client's second half.
            pair.client.postSend(SendWorkRequest.read(2, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, size, size)));
            WorkCompletion read = RnicOperationsTest.take(pair.clientCq);
            assertEquals(WcStatus.SUCCESS, read.status(), read.toString());
            assertTrue(ByteBufUtil.equals(client, 0, client, size, size), "64 MiB read back");
            // And a 64 MiB Send into the server's second half.
            pair.server.postReceive(new ReceiveWorkRequest(3, new Sge(pair.serverRegion, size, size)));
            pair.client.postSend(SendWorkRequest.send(4, new Sge(pair.clientRegion, 0, size)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status());
            WorkCompletion received = RnicOperationsTest.take(pair.serverCq);
            assertEquals(size, received.byteLength());
            assertTrue(ByteBufUtil.equals(client, 0, server, size, size), "64 MiB sent");
        }
    }

    /**
     * A completion listener that throws is the application's bug, not the connection's: it is
     * reported to the event loop's uncaught exception handler, and the Sends after it are placed and
     * completed on the same connection.
     */
    @Test
    void aCompletionListenerThatThrowsLeavesTheConnectionUp() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            CountDownLatch received = new CountDownLatch(3);
            AtomicInteger thrown = new AtomicInteger();
            pair.serverCq.onCompletion(wc -> {
                received.countDown();
                if (thrown.getAndIncrement() == 0) {
                    throw new IllegalStateException("the application's listener fails on purpose");
                }
            });
            for (int i = 0; i < 3; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(i, new Sge(pair.serverRegion, i * 64L, 64)));
                pair.client.postSend(SendWorkRequest.send(10 + i, new Sge(pair.clientRegion, 0, 64)));
                assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status(), "Send " + i);
            }
            assertTrue(received.await(10, TimeUnit.SECONDS), "receives completed: " + (3 - received.getCount()));
            assertEquals(QpState.RTS, pair.server.state());
            assertEquals(QpState.RTS, pair.client.state());
        }
    }

    /**
     * A graceful disconnect while the peer is still sending: the disconnecting end's last Send
     * arrives, and the peer sees its connection end in an orderly close, never a reset (a close with
     * the peer's octets still unread resets the connection, and a reset may discard the last Send
     * before the peer has read it).
     */
    @Test
    void aGracefulDisconnectUnderThePeersTrafficEndsInACloseNotAReset() throws Exception {
        int size = 65536;
        int writes = 16;
        try (RnicPair pair = new RnicPair(MPA, 2 * size, (config, server) -> config.sendDepth(writes + 1))) {
            pair.client.postReceive(new ReceiveWorkRequest(1, new Sge(pair.clientRegion, size, 64)));
            // 1 MiB of Writes on their way to the server while it says goodbye.
            for (int i = 0; i < writes; i++) {
                pair.client.postSend(SendWorkRequest.write(100 + i, pair.serverRegion.address(),
                        pair.serverRegion.rkey(), new Sge(pair.clientRegion, 0, size)).unsignaled());
            }
            RnicOperationsTest.fill(pair.serverRegion.buffer(), size, 64, 7);
            pair.server.postSend(SendWorkRequest.send(2, new Sge(pair.serverRegion, size, 64)));
            pair.server.disconnect();
            WorkCompletion sent = RnicOperationsTest.take(pair.serverCq);
            assertEquals(WcStatus.SUCCESS, sent.status(), sent.toString());
            WorkCompletion last = RnicOperationsTest.take(pair.clientCq);
            assertEquals(WcOpcode.RECEIVE, last.opcode(), last + "; the client's connection error: "
                    + pair.client.connectionError());
            assertEquals(WcStatus.SUCCESS, last.status(), last.toString());
            pair.client.closeFuture().get(10, TimeUnit.SECONDS);
            pair.server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(null, pair.client.connectionError(), "the client's connection was reset");
            assertEquals(null, pair.client.terminateReceived());
        }
    }

    /**
     * RFC 5044 section 7.1.2: the responder sends no FPDU before the initiator's first. A Send the
     * responder posts first is held, and is not reported sent until it has gone: after the
     * initiator's first FPDU it completes and arrives; a disconnect before that ends it in flush
     * error (it never went), not in success.
     */
    @Test
    void aRespondersSendBeforeTheInitiatorsFirstFpduCompletesOnlyOnceItHasGone() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            pair.client.postReceive(new ReceiveWorkRequest(1, new Sge(pair.clientRegion, 0, 64)));
            pair.server.postSend(SendWorkRequest.send(2, new Sge(pair.serverRegion, 0, 64)));
            assertEquals(null, pair.serverCq.take(300, TimeUnit.MILLISECONDS), "completed while held");
            // The initiator's first FPDU opens the gate.
            pair.client.postSend(SendWorkRequest.write(3, pair.serverRegion.address() + 4096, pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 4096, 8)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.serverCq).status());
            WorkCompletion write = RnicOperationsTest.take(pair.clientCq);
            WorkCompletion receive = RnicOperationsTest.take(pair.clientCq);
            if (write.opcode() == WcOpcode.RECEIVE) {
                receive = write;
            }
            assertEquals(WcOpcode.RECEIVE, receive.opcode(), receive.toString());
            assertEquals(WcStatus.SUCCESS, receive.status(), receive.toString());
        }
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            pair.client.postReceive(new ReceiveWorkRequest(1, new Sge(pair.clientRegion, 0, 64)));
            pair.server.postSend(SendWorkRequest.send(2, new Sge(pair.serverRegion, 0, 64)));
            pair.server.disconnect().get(10, TimeUnit.SECONDS);
            WorkCompletion held = RnicOperationsTest.take(pair.serverCq);
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, held.status(), held.toString());
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, RnicOperationsTest.take(pair.clientCq).status());
        }
    }

    @Test
    void thousandsOfOutstandingWorkRequestsCompleteInOrder() throws Exception {
        int count = 4000;
        try (RnicPair pair = new RnicPair(MPA, 1 << 20,
                (config, server) -> config.sendDepth(count).receiveDepth(count))) {
            for (int i = 0; i < count; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(i, new Sge(pair.serverRegion, (i % 256) * 64L, 64)));
            }
            for (int i = 0; i < count; i++) {
                SendWorkRequest wr = i % 3 == 0
                        ? SendWorkRequest.write(i, pair.serverRegion.address() + 65536 + (i % 1000) * 8L,
                                pair.serverRegion.rkey(), new Sge(pair.clientRegion, 0, 8))
                        : SendWorkRequest.send(i, new Sge(pair.clientRegion, 0, 64));
                if (i % 2 == 1) {
                    wr.unsignaled();
                }
                pair.client.postSend(wr);
            }
            int receives = 0;
            long expectedId = 0;
            WorkCompletion[] batch = new WorkCompletion[64];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = new WorkCompletion();
            }
            int signaled = count / 2;
            int seen = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen < signaled && System.nanoTime() < deadline) {
                int n = pair.clientCq.poll(batch);
                for (int i = 0; i < n; i++) {
                    assertEquals(WcStatus.SUCCESS, batch[i].status(), batch[i].toString());
                    assertEquals(expectedId, batch[i].workRequestId(), "completions in posting order");
                    expectedId += 2;
                }
                seen += n;
                if (n == 0) {
                    Thread.sleep(1);
                }
            }
            assertEquals(signaled, seen);
            while (receives < count - (count + 2) / 3) {
                WorkCompletion wc = RnicOperationsTest.take(pair.serverCq);
                assertEquals(WcStatus.SUCCESS, wc.status());
                receives++;
            }
        }
    }

    @Test
    void readsStayWithinOrdAndIrd() throws Exception {
        // The server serves 2 Reads at a time; the client asks for ORD 8 and is cut down to 2. A client
        // that exceeded the server's IRD would be terminated, so 200 clean reads show both limits hold.
        try (RnicPair pair = new RnicPair(MPA, 1 << 20,
                (config, server) -> server ? config.ird(2) : config.ord(8).sendDepth(256))) {
            assertEquals(2, pair.client.parameters().ord());
            assertEquals(2, pair.server.parameters().ird());
            RnicOperationsTest.fill(pair.serverRegion.buffer(), 0, 1 << 20, 5);
            for (int i = 0; i < 200; i++) {
                int length = 4096 + (i * 4099) % 4096; // overlapping reads of the same bytes, no gaps
                pair.client.postSend(SendWorkRequest.read(i, pair.serverRegion.address() + i * 4096L,
                        pair.serverRegion.rkey(), new Sge(pair.clientRegion, i * 4096L, length)));
            }
            for (int i = 0; i < 200; i++) {
                WorkCompletion wc = RnicOperationsTest.take(pair.clientCq);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(i, wc.workRequestId());
            }
            assertEquals(QpState.RTS, pair.server.state());
            assertTrue(ByteBufUtil.equals(pair.serverRegion.buffer(), 0, pair.clientRegion.buffer(), 0, 199 * 4096));
        }
    }

    @Test
    void scatterGatherAndFence() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            ByteBuf client = pair.clientRegion.buffer();
            ByteBuf server = pair.serverRegion.buffer();
            RnicOperationsTest.fill(client, 0, 300, 3);
            // Gather three pieces into one Send, scatter it into two pieces of the receive.
            pair.server.postReceive(new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 1000, 50),
                    new Sge(pair.serverRegion, 2000, 250)));
            pair.client.postSend(SendWorkRequest.send(2, new Sge(pair.clientRegion, 0, 100),
                    new Sge(pair.clientRegion, 100, 100), new Sge(pair.clientRegion, 200, 100)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status());
            assertEquals(300, RnicOperationsTest.take(pair.serverCq).byteLength());
            assertTrue(ByteBufUtil.equals(client, 0, server, 1000, 50));
            assertTrue(ByteBufUtil.equals(client, 50, server, 2000, 250));
            // A fenced Write waits for the Read before it: it writes back what the Read fetched.
            server.setLong(8000, 0x0102030405060708L);
            pair.client.postSend(SendWorkRequest.read(3, pair.serverRegion.address() + 8000, pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 4000, 8)));
            pair.client.postSend(SendWorkRequest.write(4, pair.serverRegion.address() + 9000, pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 4000, 8)).fence());
            assertEquals(3, RnicOperationsTest.take(pair.clientCq).workRequestId());
            assertEquals(4, RnicOperationsTest.take(pair.clientCq).workRequestId());
            // A Write's completion says the data left; a Send after it arrives after it is placed.
            pair.server.postReceive(new ReceiveWorkRequest(5, new Sge(pair.serverRegion, 0, 8)));
            pair.client.postSend(SendWorkRequest.send(6, new Sge(pair.clientRegion, 0, 8)));
            RnicOperationsTest.take(pair.clientCq);
            assertEquals(5, RnicOperationsTest.take(pair.serverCq).workRequestId());
            assertEquals(0x0102030405060708L, server.getLong(9000));
        }
    }

    @Test
    void notificationsForAllOrSolicitedCompletions() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 4096, (config, server) -> config)) {
            AtomicInteger notified = new AtomicInteger();
            CountDownLatch solicited = new CountDownLatch(1);
            pair.serverCq.onNotification(cq -> {
                notified.incrementAndGet();
                solicited.countDown();
            });
            pair.serverCq.requestNotification(true);
            for (int i = 0; i < 3; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(i, new Sge(pair.serverRegion, 0, 64)));
            }
            pair.client.postSend(SendWorkRequest.send(10, new Sge(pair.clientRegion, 0, 8)));
            pair.client.postSend(SendWorkRequest.send(11, new Sge(pair.clientRegion, 0, 8)).solicited());
            assertTrue(solicited.await(10, TimeUnit.SECONDS));
            WorkCompletion first = RnicOperationsTest.take(pair.serverCq);
            WorkCompletion second = RnicOperationsTest.take(pair.serverCq);
            assertTrue(!first.solicited() && second.solicited(), first + " " + second + " server sent " + pair.server.terminateSent() + ", client got " + pair.client.terminateReceived() + " client sent " + pair.client.terminateSent());
            assertEquals(1, notified.get(), "one notification per arming, on the solicited completion");
            // Armed for everything, the next plain Send notifies.
            CountDownLatch any = new CountDownLatch(1);
            pair.serverCq.onNotification(cq -> any.countDown());
            pair.serverCq.requestNotification(false);
            pair.client.postSend(SendWorkRequest.send(12, new Sge(pair.clientRegion, 0, 8)));
            assertTrue(any.await(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void postingRulesAndSendWithInvalidate() throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 4096, (config, server) -> config.sendDepth(2))) {
            // Send with Invalidate: the server's region is invalidated once the message is placed.
            pair.server.postReceive(new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 0, 64)));
            MemoryRegion target = pair.serverPd.register(java.nio.ByteBuffer.allocateDirect(64), Access.ALL);
            pair.client.postSend(SendWorkRequest.sendWithInvalidate(2, target.rkey(),
                    new Sge(pair.clientRegion, 0, 8)));
            WorkCompletion received = RnicOperationsTest.take(pair.serverCq);
            assertEquals(target.rkey(), received.invalidatedStag());
            assertTrue(!target.valid());
            RnicOperationsTest.take(pair.clientCq);
            // An SGE outside its region fails locally, without hurting the connection.
            pair.client.postSend(SendWorkRequest.write(3, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 4000, 200)));
            assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, RnicOperationsTest.take(pair.clientCq).status());
            assertEquals(QpState.RTS, pair.client.state());
        }
        // A QP that is not connected refuses sends.
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = rnic.allocatePd();
            CompletionQueue cq = rnic.createCq(4);
            QueuePair idle = rnic.createQp(new QpConfig(pd, cq, cq));
            MemoryRegion mr = pd.register(java.nio.ByteBuffer.allocateDirect(64), Access.ALL);
            assertThrows(IllegalStateException.class, () -> idle.postSend(SendWorkRequest.send(1, Sge.of(mr))));
        }
    }
}
