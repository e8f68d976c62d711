package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * Limits against abuse: each cap, when hit, gives a clear answer (a closed connection, an exception
 * naming the limit) and costs nothing beyond the cap; nothing grows without bound.
 */
class RnicLimitsTest {

    /**
     * The cap, on its own: the Request timeout is ten minutes, so that the four admitted setups are
     * still waiting however slow the machine is, and the test ends them itself.
     */
    @Test
    void setupsBeyondTheCapAreClosedAtOnceAndTheAdmittedOnesWait() throws Exception {
        MpaSettings mpa = RnicOptions.defaults().mpa().toBuilder().requestTimeout(Duration.ofMinutes(10)).build();
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).maxSetups(4));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = server.allocatePd();
            CompletionQueue cq = server.createCq(16);
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(server.createQp(new QpConfig(pd, cq, cq)), new byte[0]));
            List<SocketChannel> silent = new ArrayList<>();
            try (Selector selector = Selector.open()) {
                for (int i = 0; i < 12; i++) {
                    SocketChannel socket = SocketChannel.open();
                    silent.add(socket);
                    socket.socket().connect(listener.localAddress(), 10_000);
                    socket.configureBlocking(false);
                    socket.register(selector, SelectionKey.OP_READ);
                }
                awaitCount(listener::refusedSetups, 8, "refused setups");
                assertEquals(4, listener.setupsInProgress());
                // The eight refused ones are closed at once: each reads the end of the stream.
                List<SocketChannel> ended = new ArrayList<>();
                ByteBuffer one = ByteBuffer.allocate(1);
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (ended.size() < 8) {
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    assertTrue(left > 0, ended.size() + " of the 8 refused connections ended within " + WAIT.toSeconds()
                            + " s");
                    selector.select(left);
                    for (SelectionKey key : selector.selectedKeys()) {
                        SocketChannel socket = (SocketChannel) key.channel();
                        assertEquals(-1, socket.read(one.clear()), "a refused setup is closed without a word");
                        key.cancel();
                        ended.add(socket);
                    }
                    selector.selectedKeys().clear();
                }
                // The four admitted ones are still open, waiting for their Request.
                for (SocketChannel socket : silent) {
                    if (!ended.contains(socket)) {
                        assertEquals(0, socket.read(one.clear()), "an admitted setup is still waiting");
                    }
                }
                assertEquals(4, listener.setupsInProgress());
                assertEquals(8, listener.refusedSetups());
                // Closing them frees the cap.
                for (SocketChannel socket : silent) {
                    socket.close();
                }
                awaitCount(() -> listener.setupsInProgress(), 0, "setups in progress");
            } finally {
                for (SocketChannel socket : silent) {
                    socket.close();
                }
            }
            // A well-behaved client still gets in, and leaves the count at zero once established.
            ProtectionDomain clientPd = client.allocatePd();
            CompletionQueue clientCq = client.createCq(16);
            QueuePair qp = client.createQp(new QpConfig(clientPd, clientCq, clientCq));
            client.connect(qp, listener.localAddress(), new byte[0]).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(QpState.RTS, qp.state());
            awaitCount(() -> listener.setupsInProgress(), 0, "setups in progress");
            assertEquals(8, listener.refusedSetups());
        }
    }

    /**
     * The Request timeout, on its own: a connection that sends nothing is failed when its timeout
     * fires, which the test waits for as the listener reports it, not for any length of time.
     */
    @Test
    void aSetupWithoutARequestIsClosedWhenItsRequestTimeoutFires() throws Exception {
        MpaSettings mpa = RnicOptions.defaults().mpa().toBuilder().requestTimeout(Duration.ofMillis(100)).build();
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).maxSetups(1));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = server.allocatePd();
            CompletionQueue cq = server.createCq(16);
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(server.createQp(new QpConfig(pd, cq, cq)), new byte[0]));
            CompletableFuture<String> failed = new CompletableFuture<>();
            listener.onSetupFailure((remote, error, reason) -> failed.complete(remote.getPort() + " " + error + ": "
                    + reason));
            try (Socket silent = new Socket()) {
                silent.connect(listener.localAddress(), 10_000);
                silent.setSoTimeout((int) WAIT.toMillis());
                String reported;
                try {
                    reported = failed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError("no setup failure reported within " + WAIT.toSeconds() + " s", e);
                }
                assertEquals(silent.getLocalPort() + " " + TerminateError.LLP_CONNECTION_LOST
                        + ": the MPA Request did not arrive within 100 ms", reported);
                assertEquals(-1, silent.getInputStream().read(), "the timed-out setup is closed");
            }
            // The one place under the cap is free again.
            awaitCount(() -> listener.setupsInProgress(), 0, "setups in progress");
            ProtectionDomain clientPd = client.allocatePd();
            CompletionQueue clientCq = client.createCq(16);
            QueuePair qp = client.createQp(new QpConfig(clientPd, clientCq, clientCq));
            client.connect(qp, listener.localAddress(), new byte[0]).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(QpState.RTS, qp.state());
            assertEquals(0, listener.refusedSetups());
        }
    }

    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Waits, {@link #WAIT} at most, for {@code count} to read {@code expected}. */
    private static void awaitCount(LongSupplier count, long expected, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (count.getAsLong() != expected) {
            assertTrue(System.nanoTime() - deadline < 0, what + ": " + count.getAsLong() + ", not " + expected
                    + ", after " + WAIT.toSeconds() + " s");
            Thread.sleep(10);
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
