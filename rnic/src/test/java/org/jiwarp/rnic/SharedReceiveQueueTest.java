package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared receive queue over real loopback TCP: a server RNIC whose every accepted queue pair
 * takes its receives from one {@link SharedReceiveQueue}, and clients (jiwarp's, or a raw MPA peer)
 * that Send to it.
 */
class SharedReceiveQueueTest {

    /** Octets of the server's region per receive: receive {@code id} is slot {@code id}. */
    private static final int SLOT = 256;
    private static final int SLOTS = 1024;
    private static final long WAIT_SECONDS = 10;

    /** The server: one SRQ for every queue pair it accepts, one completion queue, async events kept. */
    private static final class Server implements AutoCloseable {
        final Rnic rnic;
        final ProtectionDomain pd;
        final MemoryRegion region;
        final CompletionQueue cq;
        final SharedReceiveQueue srq;
        final RnicListener listener;
        final BlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
        final BlockingQueue<CompletableFuture<QueuePair>> accepted = new LinkedBlockingQueue<>();
        /** The client RNIC, one for every connection a test makes with it. */
        final Rnic clientRnic;
        final ProtectionDomain clientPd;
        final MemoryRegion clientRegion;
        final CompletionQueue clientCq;

        Server(int threads, int maxWr, int limit) {
            rnic = Rnic.open(RnicOptions.defaults().threads(threads).mpa(RawPeerServer.SERVER_MPA));
            rnic.onAsyncEvent(events::add);
            pd = rnic.allocatePd();
            region = pd.register(ByteBuffer.allocateDirect(SLOT * SLOTS), Access.ALL);
            cq = rnic.createCq(1 << 14);
            srq = pd.createSrq(maxWr, 2, limit);
            listener = rnic.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
                QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).srq(srq).ird(4).ord(4));
                accepted.add(request.accept(qp, new byte[] {'o', 'k'}));
            });
            clientRnic = Rnic.open(RnicOptions.defaults().threads(2).mpa(RawPeerServer.SERVER_MPA));
            clientPd = clientRnic.allocatePd();
            clientRegion = clientPd.register(ByteBuffer.allocateDirect(SLOT * SLOTS), Access.ALL);
            clientCq = clientRnic.createCq(1 << 14);
        }

        /** Posts receive {@code id} (slot {@code id}, {@code SLOT} octets) to the SRQ. */
        void post(long id) {
            srq.postReceive(new ReceiveWorkRequest(id, new Sge(region, id * SLOT, SLOT)));
        }

        /** A jiwarp client connected to the server; the server's queue pair comes with it. */
        Connection connect() throws Exception {
            QueuePair client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(4).ord(4));
            clientRnic.connect(client, listener.localAddress(), new byte[] {'h', 'i'}).get(WAIT_SECONDS,
                    TimeUnit.SECONDS);
            return new Connection(client, nextAccepted());
        }

        QueuePair nextAccepted() throws Exception {
            CompletableFuture<QueuePair> next = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotNull(next, "no connection accepted within 10 s");
            return next.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }

        /** The next server completion, which must come within 10 s. */
        WorkCompletion next() throws InterruptedException {
            WorkCompletion wc = cq.take(WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotNull(wc, "no server completion within 10 s");
            return wc;
        }

        long count(AsyncEvent.Type type) {
            return events.stream().filter(e -> e.type() == type).count();
        }

        @Override
        public void close() {
            listener.close();
            clientRnic.close();
            rnic.close();
        }
    }

    private record Connection(QueuePair client, QueuePair server) {
    }

    /** Message {@code seq} of client {@code c}: its length (8 to 255 octets). */
    private static int length(int c, int seq) {
        return 8 + (c * 31 + seq * 37) % (SLOT - 8);
    }

    /** Writes message {@code seq} of client {@code c} at {@code offset}: c, seq, then a pattern of both. */
    private static void write(ByteBuf memory, int offset, int c, int seq) {
        memory.setInt(offset, c);
        memory.setInt(offset + 4, seq);
        for (int i = 8; i < length(c, seq); i++) {
            memory.setByte(offset + i, c * 7 + seq * 13 + i);
        }
    }

    /** Checks that {@code memory} at {@code offset} holds message {@code seq} of client {@code c}. */
    private static void check(ByteBuf memory, int offset, int c, int seq) {
        assertEquals(c, memory.getInt(offset), "client");
        assertEquals(seq, memory.getInt(offset + 4), "sequence");
        for (int i = 8; i < length(c, seq); i++) {
            assertEquals((byte) (c * 7 + seq * 13 + i), memory.getByte(offset + i), "octet " + i + " of " + c + "/"
                    + seq);
        }
    }

    /** Client {@code c}'s message {@code seq} goes out as a Send from its own slot of the client region. */
    private static void send(Server s, QueuePair client, int c, int seq, long id) {
        int offset = (c * 64 + seq) * SLOT;
        write(s.clientRegion.buffer(), offset, c, seq);
        client.postSend(SendWorkRequest.send(id, new Sge(s.clientRegion, offset, length(c, seq))));
    }

    @Test
    @Timeout(120)
    void eightConnectionsOnDifferentEventLoopsShareOneSrqAndEveryMessageLandsOnceInItsReceive() throws Exception {
        int clients = 8;
        int messages = 50;
        try (Server s = new Server(4, clients * messages, 0)) {
            for (int id = 0; id < clients * messages; id++) {
                s.post(id);
            }
            List<Connection> connections = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                connections.add(s.connect());
            }
            // Every client Sends from its own thread at once; the server's queue pairs take receives on
            // their event loops (four threads for eight connections).
            List<Thread> senders = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                Thread t = new Thread(() -> {
                    for (int seq = 0; seq < messages; seq++) {
                        send(s, connections.get(client).client(), client, seq, seq);
                    }
                }, "sender-" + c);
                senders.add(t);
                t.start();
            }
            for (Thread t : senders) {
                t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            }
            Map<QueuePair, Integer> clientOf = new HashMap<>();
            Map<QueuePair, long[]> lastOf = new HashMap<>(); // per server QP: last id, last sequence
            Set<Long> ids = new HashSet<>();
            Set<Integer> landed = new HashSet<>();
            for (int n = 0; n < clients * messages; n++) {
                WorkCompletion wc = s.next();
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(WcOpcode.RECEIVE, wc.opcode(), wc.toString());
                long id = wc.workRequestId();
                assertTrue(ids.add(id), "receive " + id + " completed twice");
                int offset = (int) id * SLOT;
                int c = s.region.buffer().getInt(offset);
                int seq = s.region.buffer().getInt(offset + 4);
                check(s.region.buffer(), offset, c, seq);
                assertEquals(length(c, seq), wc.byteLength(), wc.toString());
                assertTrue(landed.add(c * messages + seq), "message " + c + "/" + seq + " landed twice");
                // One connection's messages come on one queue pair, in order, in receives taken oldest first.
                assertEquals(c, clientOf.computeIfAbsent(wc.queuePair(), qp -> c), "client of " + wc.queuePair());
                long[] last = lastOf.computeIfAbsent(wc.queuePair(), qp -> new long[] {-1, -1});
                assertTrue(id > last[0], "receive " + id + " taken after " + last[0] + " by " + wc.queuePair());
                assertEquals(last[1] + 1, seq, "message order on " + wc.queuePair());
                last[0] = id;
                last[1] = seq;
            }
            assertEquals(clients, clientOf.size(), "every server queue pair received");
            assertEquals(0, s.srq.posted());
            for (Connection connection : connections) {
                assertEquals(QpState.RTS, connection.server().state());
            }
        }
    }

    @Test
    @Timeout(60)
    void theLimitFiresOneEventWhenFewerReceivesThanItArePostedAndDisarms() throws Exception {
        try (Server s = new Server(1, 8, 0)) {
            assertEquals(0, s.srq.limit(), "created with limit 0: disarmed");
            assertThrows(IllegalArgumentException.class, () -> s.srq.modifyLimit(9), "above max WR");
            SharedReceiveQueue armedAtCreation = s.pd.createSrq(4, 1, 3);
            assertEquals(3, armedAtCreation.limit(), "a limit given at creation arms it");
            armedAtCreation.destroy();
            for (int id = 0; id < 6; id++) {
                s.post(id);
            }
            s.srq.modifyLimit(4);
            assertEquals(4, s.srq.limit());
            Connection connection = s.connect();
            for (int seq = 0; seq < 2; seq++) {
                send(s, connection.client(), 0, seq, seq);
                assertEquals(WcStatus.SUCCESS, s.next().status());
            }
            assertEquals(4, s.srq.posted());
            assertEquals(0, s.count(AsyncEvent.Type.SRQ_LIMIT_REACHED), "4 posted: not below the limit of 4");
            send(s, connection.client(), 0, 2, 2);
            assertEquals(WcStatus.SUCCESS, s.next().status());
            // The take that left 3 fired the event, on the event loop, before the receive completed.
            assertEquals(1, s.count(AsyncEvent.Type.SRQ_LIMIT_REACHED), s.events.toString());
            AsyncEvent event = s.events.stream().filter(e -> e.type() == AsyncEvent.Type.SRQ_LIMIT_REACHED)
                    .findFirst().orElseThrow();
            assertSame(s.srq, event.srq());
            assertNull(event.queuePair());
            assertEquals(0, s.srq.limit(), "disarmed");
            for (int seq = 3; seq < 5; seq++) {
                send(s, connection.client(), 0, seq, seq);
                assertEquals(WcStatus.SUCCESS, s.next().status());
            }
            assertEquals(1, s.count(AsyncEvent.Type.SRQ_LIMIT_REACHED), "disarmed: no second event");
            // Armed again, it fires again.
            s.srq.modifyLimit(2);
            send(s, connection.client(), 0, 5, 5);
            assertEquals(WcStatus.SUCCESS, s.next().status());
            assertEquals(2, s.count(AsyncEvent.Type.SRQ_LIMIT_REACHED), s.events.toString());
        }
    }

    /** A Send's first segment (no L) of {@code payload} octets, MSN 1, MO 0, built with the wire accessors. */
    private static ByteBuf firstSegmentOfASend(int payload) {
        ByteBuf ulpdu = RawPeer.buffer();
        DdpHeaders.writeUntagged(ulpdu, DdpHeaders.controlByte(false, false), RdmapHeaders.controlByte(
                RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, 1, 0);
        for (int i = 0; i < payload; i++) {
            ulpdu.writeByte(0xA0 + i);
        }
        return ulpdu;
    }

    @Test
    @Timeout(60)
    void aQueuePairInErrorFlushesOnlyTheReceiveItWasFillingAndTheOthersServeTheOtherQueuePairs() throws Exception {
        try (Server s = new Server(2, 8, 0)) {
            for (int id = 0; id < 4; id++) {
                s.post(id);
            }
            Connection healthy = s.connect();
            try (RawPeer peer = RawPeer.connect(s.listener.localAddress(), RawPeerServer.PEER_MPA)) {
                QueuePair failing = s.nextAccepted();
                // Half a Send: the failing queue pair takes receive 0 and fills 16 octets of it.
                peer.send(firstSegmentOfASend(16));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
                while (s.srq.posted() != 3) {
                    org.jiwarp.testing.Deadlines.check(deadline, "the half Send to take a receive");
                    Thread.sleep(5);
                }
                peer.reset();
                failing.closeFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
                WorkCompletion flushed = s.next();
                assertEquals(0, flushed.workRequestId(), flushed.toString());
                assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, flushed.status(), flushed.toString());
                assertSame(failing, flushed.queuePair());
                assertEquals(3, s.srq.posted(), "the SRQ's other receives stay posted");
                AsyncEvent last = s.events.stream().filter(e -> e.type() == AsyncEvent.Type.QP_LAST_WQE_REACHED)
                        .findFirst().orElse(null);
                assertNotNull(last, "QP_LAST_WQE_REACHED: " + s.events);
                assertSame(failing, last.queuePair());
            }
            for (int seq = 0; seq < 3; seq++) {
                send(s, healthy.client(), 1, seq, seq);
                WorkCompletion wc = s.next();
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(seq + 1, wc.workRequestId(), wc.toString());
                assertSame(healthy.server(), wc.queuePair());
                check(s.region.buffer(), (seq + 1) * SLOT, 1, seq);
            }
            assertEquals(0, s.srq.posted());
            assertNull(s.cq.take(200, TimeUnit.MILLISECONDS), "nothing else completed");
            assertEquals(QpState.RTS, healthy.server().state());
            assertEquals(0, s.events.stream().filter(e -> e.queuePair() == healthy.server()).count(), s.events
                    .toString());
        }
    }

    @Test
    @Timeout(60)
    void aSendOnAnEmptySrqTerminatesThatConnectionOnlyAsAQueuePairWithNoReceivePosted() throws Exception {
        try (Server s = new Server(2, 4, 0)) {
            Connection other = s.connect();
            Connection starved = s.connect();
            send(s, starved.client(), 0, 0, 1);
            starved.client().closeFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
            starved.server().closeFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
            // RFC 5041 section 7.1: DDP layer, untagged buffer error, invalid MSN - no buffer available.
            TerminateError sent = starved.server().terminateSent();
            assertEquals(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, sent);
            assertEquals(TerminateLayer.DDP, sent.layer());
            assertEquals(0x2, sent.errorType());
            assertEquals(0x02, sent.errorCode());
            assertNotNull(starved.client().terminateReceived(), "the client got the Terminate");
            assertEquals(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, starved.client().terminateReceived()
                    .error());
            // The other queue pair on the SRQ carries on.
            assertEquals(QpState.RTS, other.server().state());
            s.post(7);
            send(s, other.client(), 1, 0, 2);
            WorkCompletion wc = s.next();
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(7, wc.workRequestId());
            assertSame(other.server(), wc.queuePair());
            check(s.region.buffer(), 7 * SLOT, 1, 0);
        }
    }

    @Test
    @Timeout(60)
    void destroyIsRefusedWhileQueuePairsAreAttachedAndPostsAfterItAreRefused() throws Exception {
        try (Server s = new Server(1, 4, 0)) {
            Connection connection = s.connect();
            s.post(0);
            s.post(1);
            IllegalStateException refused = assertThrows(IllegalStateException.class, s.srq::destroy);
            assertTrue(refused.getMessage().contains("1 queue pair"), refused.getMessage());
            s.post(2); // still usable after the refused destroy
            connection.server().destroy().get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotNull(s.events.stream().filter(e -> e.type() == AsyncEvent.Type.QP_LAST_WQE_REACHED)
                    .findFirst().orElse(null), s.events.toString());
            s.srq.destroy();
            s.srq.destroy(); // idempotent
            assertThrows(IllegalStateException.class, () -> s.post(3), "posts after destroy");
            assertThrows(IllegalStateException.class, () -> s.srq.modifyLimit(1), "modify after destroy");
            assertThrows(IllegalStateException.class, () -> s.rnic.createQp(new QpConfig(s.pd, s.cq, s.cq)
                    .srq(s.srq)), "a queue pair on a destroyed SRQ");
            // The receives left in it are dropped, never completed (as libibverbs).
            assertNull(s.cq.take(200, TimeUnit.MILLISECONDS), "nothing completed");
            assertEquals(0, s.srq.posted());
        }
    }

    @Test
    @Timeout(60)
    void aPostBeyondMaxWrIsRefusedAndAQueuePairOnTheSrqRefusesItsOwnPosts() throws Exception {
        try (Server s = new Server(1, 4, 0)) {
            for (int id = 0; id < 4; id++) {
                s.post(id);
            }
            IllegalStateException full = assertThrows(IllegalStateException.class, () -> s.post(4));
            assertTrue(full.getMessage().contains("full"), full.getMessage());
            assertEquals(4, s.srq.posted());
            assertThrows(IllegalArgumentException.class, () -> s.srq.postReceive(new ReceiveWorkRequest(9,
                    new Sge(s.region, 0, 8), new Sge(s.region, 8, 8), new Sge(s.region, 16, 8))), "3 SGEs, max 2");
            Connection connection = s.connect();
            IllegalStateException own = assertThrows(IllegalStateException.class, () -> connection.server()
                    .postReceive(new ReceiveWorkRequest(9, new Sge(s.region, 0, 8))));
            assertTrue(own.getMessage().contains(s.srq.toString()), own.getMessage());
            // A Send takes one: there is room for one post again.
            send(s, connection.client(), 0, 0, 1);
            assertEquals(WcStatus.SUCCESS, s.next().status());
            assertEquals(3, s.srq.posted());
            s.post(4);
            assertThrows(IllegalStateException.class, () -> s.post(5));
        }
    }
}
