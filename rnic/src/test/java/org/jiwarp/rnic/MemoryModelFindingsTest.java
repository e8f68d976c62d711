package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * The engine bugs {@link MemoryModelPropertyTest} ran into, each reduced to a deterministic case
 * that states the behaviour the RFCs and the verbs ask for; they failed before the engine was
 * fixed and guard against a relapse.
 */
class MemoryModelFindingsTest {

    private static final MpaSettings P2P = RnicOperationsTest.mpa(true, false).toBuilder().peerToPeer(true).build();

    private static List<WorkCompletion> drain(CompletionQueue cq) throws InterruptedException {
        List<WorkCompletion> all = new ArrayList<>();
        for (WorkCompletion wc = cq.take(300, TimeUnit.MILLISECONDS); wc != null;
                wc = cq.take(300, TimeUnit.MILLISECONDS)) {
            all.add(wc);
        }
        return all;
    }

    /**
     * Bug 2. Peer-to-peer with a Read RTR (RFC 6581 section 3): the responder's first FPDU must be the
     * zero-length Read Response to the RTR; a Send the responder posts as soon as its QP is RTS (before
     * the RTR has arrived) is held by the first-FPDU gate and released before that Read Response, so the
     * initiator fails the connection with LLP "no matching RTR".
     */
    @Test
    void aResponderMayPostAtOnceWithAReadRtr() throws Exception {
        MpaSettings server = P2P.toBuilder().rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ)).build();
        MpaSettings client = P2P.toBuilder().rtrOffers(EnumSet.of(RtrType.READ)).build();
        try (Rnic serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(server));
                Rnic clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(client))) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            ProtectionDomain clientPd = clientRnic.allocatePd();
            CompletionQueue serverCq = serverRnic.createCq(16);
            CompletionQueue clientCq = clientRnic.createCq(16);
            QueuePair serverQp = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq));
            QueuePair clientQp = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq));
            MemoryRegion serverMr = serverPd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            MemoryRegion clientMr = clientPd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            clientQp.postReceive(new ReceiveWorkRequest(1, Sge.of(clientMr)));
            try (RnicListener listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(serverQp, new byte[0])
                            // As soon as the QP is RTS, on its event loop: before the RTR can have arrived.
                            .thenAccept(qp -> qp.postSend(SendWorkRequest.send(2, new Sge(serverMr, 0, 8)))))) {
                clientRnic.connect(clientQp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
                assertEquals(ConnectionParameters.Rtr.READ, clientQp.parameters().rtr());
                WorkCompletion received = clientCq.take(10, TimeUnit.SECONDS);
                assertNotNull(received, "the client got nothing; it sent " + clientQp.terminateSent());
                assertEquals(WcStatus.SUCCESS, received.status(), received + "; the client sent "
                        + clientQp.terminateSent());
                assertEquals(8, received.byteLength());
                assertEquals(QpState.RTS, clientQp.state());
            }
        }
    }

    /**
     * Bug 3. A Send with Invalidate whose STag cannot be invalidated (RFC 5040 section 7.2, 0x09) is
     * placed into the head receive, which leaves the queue; then the Terminate goes out, and that
     * receive never completes: neither success nor flush error. Every posted receive must complete
     * exactly once.
     */
    @Test
    void aReceiveWhoseSendWithInvalidateFailsStillCompletes() throws Exception {
        try (RnicPair pair = new RnicPair(P2P, 4096, (config, server) -> config)) {
            pair.server.postReceive(new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 0, 64)));
            pair.server.postReceive(new ReceiveWorkRequest(2, new Sge(pair.serverRegion, 64, 64)));
            pair.client.postSend(SendWorkRequest.sendWithInvalidate(3, 0x00ABCD00, new Sge(pair.clientRegion, 0, 8)));
            pair.server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED, pair.server.terminateSent());
            List<WorkCompletion> completions = drain(pair.serverCq);
            assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == 1), "receive 1 never completed: "
                    + completions);
            assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == 1 && wc.status() != WcStatus.SUCCESS),
                    completions.toString());
        }
    }

    /**
     * Bug 4. The target of a faulty operation writes its Terminate and closes at once; the initiator
     * has more work in flight, its next write meets the closed socket (EPIPE / ECONNRESET), and
     * Netty's auto-close drops the channel before the Terminate already in its receive buffer is read:
     * {@code terminateReceived()} stays null and the work completes as FATAL_ERROR / flush instead of
     * with the peer's error. Out of 300 tries here, about half lost the Terminate.
     */
    @Test
    void theTerminateReachesAnInitiatorThatKeepsPosting() throws Exception {
        try (RnicPair pair = new RnicPair(P2P, 1 << 16, (config, server) -> config)) {
            AtomicReference<QueuePair> next = new AtomicReference<>();
            AtomicReference<CompletableFuture<QueuePair>> accepted = new AtomicReference<>();
            try (RnicListener listener = pair.serverRnic.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
                CompletableFuture<QueuePair> done = accepted.get();
                request.accept(next.get(), new byte[0]).whenComplete((qp, e) -> done.complete(qp));
            })) {
                int lost = 0;
                int tries = 50;
                for (int i = 0; i < tries; i++) {
                    CompletionQueue serverCq = pair.serverRnic.createCq(64);
                    CompletionQueue clientCq = pair.clientRnic.createCq(64);
                    QueuePair server = pair.serverRnic.createQp(new QpConfig(pair.serverPd, serverCq, serverCq));
                    QueuePair client = pair.clientRnic.createQp(new QpConfig(pair.clientPd, clientCq, clientCq));
                    next.set(server);
                    CompletableFuture<QueuePair> done = new CompletableFuture<>();
                    accepted.set(done);
                    pair.clientRnic.connect(client, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
                    done.get(10, TimeUnit.SECONDS);
                    client.postSend(SendWorkRequest.write(1, 0, 0x00ABCD00, new Sge(pair.clientRegion, 0, 94)));
                    for (int k = 0; k < 3; k++) {
                        client.postSend(SendWorkRequest.send(2 + k, new Sge(pair.clientRegion, 0, 0)));
                    }
                    client.closeFuture().get(10, TimeUnit.SECONDS);
                    server.closeFuture().get(10, TimeUnit.SECONDS);
                    assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, server.terminateSent());
                    if (client.terminateReceived() == null) {
                        lost++;
                    }
                }
                assertEquals(0, lost, "the client lost the server's Terminate in " + lost + " of " + tries);
            }
        }
    }

    /**
     * Bug 5. A local SGE (gather list, Read sink, posted receive) is checked for domain, bounds and
     * access, but not for the region being valid: after {@code invalidate()} or {@code deregister()}
     * its lkey still works (Linux siw checks {@code stag_valid} for local access too). A receive posted
     * on a deregistered region lets a peer's Send write memory that is no longer registered.
     */
    /**
     * Seed 0xa86990909570df88: an unsignaled Send, then in the same batch a Send whose SGE lies in
     * another protection domain. The second fails its local checks and goes nowhere, so it cannot
     * retire the first; the batch must still retire the first when it reaches TCP, or the error
     * completion of the second waits behind it for ever.
     */
    @Test
    void aLocalProtectionErrorAfterAnUnsignaledSendStillCompletes() throws Exception {
        try (RnicPair pair = new RnicPair(P2P, 4096, (config, server) -> config)) {
            pair.server.postReceive(new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 0, 64)));
            ProtectionDomain otherPd = pair.clientRnic.allocatePd();
            MemoryRegion foreign = otherPd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            SendWorkRequest[] chain = {
                SendWorkRequest.send(8, new Sge(pair.clientRegion, 0, 16)).unsignaled().solicited().fence(),
                SendWorkRequest.send(9, new Sge(foreign, 0, 16)),
            };
            pair.client.postSend(chain, 2);
            WorkCompletion wc = pair.clientCq.take(10, TimeUnit.SECONDS);
            assertNotNull(wc, "the failed Send's completion arrives");
            assertEquals(9, wc.workRequestId());
            assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, wc.status());
        }
    }

    @Test
    void theLkeyOfAnInvalidOrDeregisteredRegionIsRefused() throws Exception {
        try (RnicPair pair = new RnicPair(P2P, 4096, (config, server) -> config)) {
            ByteBuf backing = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(256));
            try {
                MemoryRegion gone = pair.serverPd.register(backing.slice(0, 128), Access.ALL);
                gone.deregister();
                assertThrows(IllegalArgumentException.class, () -> pair.server.postReceive(
                        new ReceiveWorkRequest(1, new Sge(gone, 0, 64))), "a receive into a deregistered region");

                MemoryRegion invalid = pair.clientPd.register(ByteBuffer.allocateDirect(64), Access.ALL);
                assertTrue(invalid.invalidate());
                pair.client.postSend(SendWorkRequest.write(2, pair.serverRegion.address(), pair.serverRegion.rkey(),
                        new Sge(invalid, 0, 8)));
                WorkCompletion wc = RnicOperationsTest.take(pair.clientCq);
                assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, wc.status(), "a Write gathering from an invalid lkey: "
                        + wc);
            } finally {
                backing.release();
            }
        }
    }

    /**
     * Bug 6. {@code QueuePair.postReceive} counts the receive against the queue depth before it checks
     * the SGEs; a refused receive (IllegalArgumentException) keeps its slot, so a QP whose application
     * ever posts a bad SGE loses receive depth for good.
     */
    @Test
    void aRefusedReceiveDoesNotUseUpTheQueue() throws Exception {
        try (RnicPair pair = new RnicPair(P2P, 4096, (config, server) -> config.receiveDepth(2))) {
            for (int i = 0; i < 2; i++) {
                assertThrows(IllegalArgumentException.class, () -> pair.server.postReceive(
                        new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 4000, 200))));
            }
            pair.server.postReceive(new ReceiveWorkRequest(2, new Sge(pair.serverRegion, 0, 64)));
            pair.server.postReceive(new ReceiveWorkRequest(3, new Sge(pair.serverRegion, 64, 64)));
            assertNotEquals(QpState.ERROR, pair.server.state());
        }
    }
}
