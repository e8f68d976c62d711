package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * The state machine's guarantees as a verbs user sees them, over real loopback TCP: every
 * outstanding work request is flushed exactly once on the way to ERROR, and work posted in ERROR
 * completes at once in flush error, receives included.
 */
class QpStateTransitionsTest {

    private static final long WAIT = 10;

    /** Every completion the queue holds after the queue pair went down (and a moment more for strays). */
    private static List<WorkCompletion> drain(CompletionQueue cq) throws InterruptedException {
        List<WorkCompletion> all = new ArrayList<>();
        WorkCompletion wc;
        while ((wc = cq.take(300, TimeUnit.MILLISECONDS)) != null) {
            all.add(wc);
        }
        return all;
    }

    @Test
    void aReceivePostedAfterAFailedConnectIsFlushedAtOnce() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = rnic.allocatePd();
            CompletionQueue cq = rnic.createCq(16);
            QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq));
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            qp.postReceive(new ReceiveWorkRequest(1, Sge.of(mr)));
            assertThrows(ExecutionException.class, () -> rnic.connect(qp,
                    new InetSocketAddress("127.0.0.1", closedPort), new byte[0]).get(WAIT, TimeUnit.SECONDS));
            qp.closeFuture().get(WAIT, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, qp.state());
            WorkCompletion early = cq.take(WAIT, TimeUnit.SECONDS);
            assertNotNull(early, "the receive posted before the connect is flushed");
            assertEquals(1, early.workRequestId());
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, early.status());

            qp.postReceive(new ReceiveWorkRequest(2, Sge.of(mr)));
            WorkCompletion late = cq.take(WAIT, TimeUnit.SECONDS);
            assertNotNull(late, "a receive posted in ERROR completes at once");
            assertEquals(2, late.workRequestId());
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, late.status());
            qp.postSend(SendWorkRequest.send(3, Sge.of(mr)));
            WorkCompletion send = cq.take(WAIT, TimeUnit.SECONDS);
            assertNotNull(send, "a send posted in ERROR completes at once");
            assertEquals(3, send.workRequestId());
            assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, send.status());
            assertNull(cq.take(300, TimeUnit.MILLISECONDS), "nothing twice");
        }
    }

    @Test
    void anAbortiveModifyFlushesEveryOutstandingRequestOnceOnBothEnds() throws Exception {
        try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
            for (int i = 0; i < 5; i++) {
                pair.client.postReceive(new ReceiveWorkRequest(100 + i, new Sge(pair.clientRegion, i * 64, 64)));
                pair.server.postReceive(new ReceiveWorkRequest(200 + i, new Sge(pair.serverRegion, i * 64, 64)));
            }
            pair.client.modifyToError().get(WAIT, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.client.state());
            pair.server.closeFuture().get(WAIT, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.server.state(), "the peer's queue pair goes down with the connection");
            assertNull(pair.server.terminateReceived(), "an abortive close sends no Terminate");

            for (CompletionQueue cq : List.of(pair.clientCq, pair.serverCq)) {
                List<WorkCompletion> flushed = drain(cq);
                assertEquals(5, flushed.size(), "each receive once: " + flushed);
                long base = cq == pair.clientCq ? 100 : 200;
                for (int i = 0; i < 5; i++) {
                    assertEquals(base + i, flushed.get(i).workRequestId(), "in posting order");
                    assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, flushed.get(i).status());
                }
            }

            // Posted in ERROR: completes at once, receives included; the modify again is no error.
            pair.client.postReceive(new ReceiveWorkRequest(7, Sge.of(pair.clientRegion)));
            pair.client.postSend(SendWorkRequest.write(8, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 16)));
            pair.client.modifyToError().get(WAIT, TimeUnit.SECONDS);
            List<WorkCompletion> after = drain(pair.clientCq);
            assertEquals(2, after.size(), "" + after);
            assertTrue(after.stream().allMatch(wc -> wc.status() == WcStatus.WORK_REQUEST_FLUSH_ERROR), "" + after);
        }
    }

    @Test
    void aGracefulDisconnectPassesThroughClosingToError() throws Exception {
        try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
            pair.server.postReceive(new ReceiveWorkRequest(1, Sge.of(pair.serverRegion)));
            pair.client.postSend(SendWorkRequest.send(2, new Sge(pair.clientRegion, 0, 32)));
            WorkCompletion sent = pair.clientCq.take(WAIT, TimeUnit.SECONDS);
            assertEquals(WcStatus.SUCCESS, sent.status());
            pair.client.disconnect().get(WAIT, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.client.state());
            WorkCompletion received = pair.serverCq.take(WAIT, TimeUnit.SECONDS);
            assertEquals(WcStatus.SUCCESS, received.status(), "the Send before the close arrived");
            pair.server.closeFuture().get(WAIT, TimeUnit.SECONDS);
            assertNull(pair.serverCq.take(300, TimeUnit.MILLISECONDS), "nothing was outstanding to flush");
        }
    }

    @Test
    void aDestroyedQueuePairRefusesPosts() throws Exception {
        try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
            pair.client.destroy().get(WAIT, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.client.state());
            IllegalStateException send = assertThrows(IllegalStateException.class,
                    () -> pair.client.postSend(SendWorkRequest.send(1, Sge.of(pair.clientRegion))));
            assertTrue(send.getMessage().contains("destroyed"), send.getMessage());
            IllegalStateException receive = assertThrows(IllegalStateException.class,
                    () -> pair.client.postReceive(new ReceiveWorkRequest(2, Sge.of(pair.clientRegion))));
            assertTrue(receive.getMessage().contains("destroyed"), receive.getMessage());
        }
    }
}
