package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * Limits against abuse: each cap, when hit, gives a clear answer (a closed connection, an exception
 * naming the limit) and costs nothing beyond the cap; nothing grows without bound.
 */
class RnicLimitsTest {

    @Test
    void connectionsThatNeverFinishTheHandshakeAreCappedAndTimedOut() throws Exception {
        // Long enough that the four admitted setups are still waiting when counted on a busy machine.
        MpaSettings mpa = RnicOptions.defaults().mpa().toBuilder().requestTimeout(Duration.ofMillis(2500)).build();
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).maxSetups(4));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = server.allocatePd();
            CompletionQueue cq = server.createCq(16);
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(server.createQp(new QpConfig(pd, cq, cq)), new byte[0]));
            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 12; i++) {
                    Socket socket = new Socket();
                    socket.connect(listener.localAddress(), 2000);
                    socket.setSoTimeout(15_000);
                    silent.add(socket);
                }
                // Eight of the twelve are closed at once: reading finds the end of the stream.
                int closedAtOnce = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (listener.refusedSetups() < 8 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(8, listener.refusedSetups());
                assertEquals(4, listener.setupsInProgress());
                // The four admitted ones are dropped by the Request timeout; then the cap is free again.
                for (Socket socket : silent) {
                    InputStream in = socket.getInputStream();
                    assertEquals(-1, in.read(), "every silent connection ends, refused or timed out");
                    closedAtOnce++;
                }
                assertEquals(12, closedAtOnce);
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (listener.setupsInProgress() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(0, listener.setupsInProgress());
            } finally {
                for (Socket socket : silent) {
                    socket.close();
                }
            }
            // A well-behaved client still gets in, and leaves the count at zero once established.
            ProtectionDomain clientPd = client.allocatePd();
            CompletionQueue clientCq = client.createCq(16);
            QueuePair qp = client.createQp(new QpConfig(clientPd, clientCq, clientCq));
            client.connect(qp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
            assertEquals(QpState.RTS, qp.state());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (listener.setupsInProgress() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, listener.setupsInProgress());
            assertEquals(8, listener.refusedSetups());
        }
    }

    @Test
    void queueOverflowsAreRefusedWithTheirLimitNamed() throws Exception {
        try (RnicPair pair = new RnicPair(RnicOptions.defaults().mpa(), 4096,
                (config, server) -> config.sendDepth(4).receiveDepth(3))) {
            for (int i = 0; i < 3; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(i, Sge.of(pair.serverRegion)));
            }
            IllegalStateException full = assertThrows(IllegalStateException.class,
                    () -> pair.server.postReceive(new ReceiveWorkRequest(9, Sge.of(pair.serverRegion))));
            assertTrue(full.getMessage().contains("receive queue") && full.getMessage().contains("(3)"),
                    full.getMessage());
            // Four Reads of a region nobody answers quickly enough to free the queue: the fifth is refused.
            SendWorkRequest[] reads = new SendWorkRequest[6];
            for (int i = 0; i < reads.length; i++) {
                reads[i] = SendWorkRequest.read(i, pair.serverRegion.address(), pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 0, 4096));
            }
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> pair.client.postSend(reads, reads.length));
            assertTrue(refused.getMessage().contains("send queue") && refused.getMessage().contains("(4)"),
                    refused.getMessage());
            assertTrue(refused.getMessage().startsWith("work request 4 of the chain refused"), refused.getMessage());
            // The four admitted Reads complete normally.
            for (int i = 0; i < 4; i++) {
                assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(pair.clientCq).status());
            }
        }
    }

    @Test
    void privateDataOverTheLimitIsRefusedBeforeAnythingIsSent() {
        try (Rnic client = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = client.allocatePd();
            CompletionQueue cq = client.createCq(4);
            QueuePair qp = client.createQp(new QpConfig(pd, cq, cq));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> client.connect(qp, new InetSocketAddress("127.0.0.1", 9), new byte[600]));
            assertTrue(e.getMessage().contains("exceeds the limit of 512"), e.getMessage());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

}
