package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;

/**
 * The server side of the raw-peer tests: one {@link Rnic} listening on loopback, accepting each
 * connection onto the queue pair a test prepared for it ({@link #expect(int)}), so that a raw peer
 * and well-behaved clients ({@link #healthyClient()}) share the same RNIC, event loop and STag table.
 *
 * <p>The server registers one 8 MiB region with every access; each prepared queue pair has its own
 * completion queue and posts {@code receives} receives of {@link #RECEIVE_SIZE} octets (work
 * request ids 900, 901, ...).
 */
final class RawPeerServer implements AutoCloseable {

    static final int IRD = 4;
    static final int ORD = 4;
    static final int REGION_SIZE = 8 << 20;
    static final int RECEIVE_SIZE = 64;
    static final long FIRST_RECEIVE_ID = 900;

    /** What the raw peer offers: MPA rev 2 enhanced, CRC required, IRD = ORD = 4, no peer-to-peer. */
    static final MpaSettings PEER_MPA = MpaSettings.builder().crc(CrcPolicy.REQUIRE).ird(IRD).ord(ORD).build();
    /** The server's settings: the same, accepting a Write or Read RTR (never used: no peer-to-peer). */
    static final MpaSettings SERVER_MPA = PEER_MPA.toBuilder().rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ))
            .build();

    final Rnic rnic;
    final ProtectionDomain pd;
    final MemoryRegion region;
    final RnicListener listener;
    private final BlockingQueue<Served> pending = new LinkedBlockingQueue<>();

    RawPeerServer() {
        rnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(SERVER_MPA));
        pd = rnic.allocatePd();
        region = pd.register(ByteBuffer.allocateDirect(REGION_SIZE), RnicPair.ALL);
        listener = rnic.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
            Served served = pending.poll();
            if (served == null) {
                request.reject(new byte[0]);
                return;
            }
            request.accept(served.qp, new byte[] {'o', 'k'}).whenComplete((qp, error) -> {
                if (error != null) {
                    served.established.completeExceptionally(error);
                    return;
                }
                // On the event loop, before any ULPDU of the connection is read.
                qp.channel().pipeline().addFirst("state-probe", served.probe);
                served.established.complete(qp);
            });
        });
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    /** Prepares the queue pair that accepts the next connection, with {@code receives} posted receives. */
    Served expect(int receives) {
        CompletionQueue cq = rnic.createCq(1 << 10);
        QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).ird(IRD).ord(ORD));
        for (int i = 0; i < receives; i++) {
            qp.postReceive(new ReceiveWorkRequest(FIRST_RECEIVE_ID + i,
                    new Sge(region, (long) i * RECEIVE_SIZE, RECEIVE_SIZE)));
        }
        Served served = new Served(qp, cq);
        pending.add(served);
        return served;
    }

    /** Connects a well-behaved client RNIC to this server, onto a fresh server queue pair. */
    HealthyClient healthyClient() throws Exception {
        return new HealthyClient(this);
    }

    @Override
    public void close() {
        listener.close();
        rnic.close();
    }

    /** A server queue pair, its completion queue, and the states it was in whenever it wrote an FPDU. */
    static final class Served {
        final QueuePair qp;
        final CompletionQueue cq;
        final CompletableFuture<QueuePair> established = new CompletableFuture<>();
        final Set<QpState> statesWhenWriting = ConcurrentHashMap.newKeySet();
        final StateProbe probe = new StateProbe();

        Served(QueuePair qp, CompletionQueue cq) {
            this.qp = qp;
            this.cq = cq;
        }

        QueuePair awaitEstablished() throws Exception {
            return established.get(10, TimeUnit.SECONDS);
        }

        /** Records the queue pair's state as each FPDU leaves (so the Terminate shows TERMINATE). */
        final class StateProbe extends ChannelOutboundHandlerAdapter {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                if (msg instanceof ByteBuf) {
                    statesWhenWriting.add(qp.state());
                }
                ctx.write(msg, promise);
            }
        }
    }

    /**
     * A client {@link Rnic} connected to the server like any verbs user, for checking that the
     * server's other queue pairs carry on.
     */
    static final class HealthyClient implements AutoCloseable {
        final Rnic clientRnic;
        final CompletionQueue clientCq;
        final QueuePair client;
        final MemoryRegion clientRegion;
        final Served server;
        final MemoryRegion serverRegion;
        private long nextId = 1;

        HealthyClient(RawPeerServer host) throws Exception {
            clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(SERVER_MPA));
            try {
                ProtectionDomain clientPd = clientRnic.allocatePd();
                clientCq = clientRnic.createCq(1 << 10);
                client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(IRD).ord(ORD));
                clientRegion = clientPd.register(ByteBuffer.allocateDirect(4096), RnicPair.ALL);
                serverRegion = host.pd.register(ByteBuffer.allocateDirect(4096), RnicPair.ALL);
                server = host.expect(0);
                clientRnic.connect(client, host.address(), new byte[] {'o', 'k'}).get(10, TimeUnit.SECONDS);
                server.awaitEstablished();
            } catch (Exception | Error e) {
                clientRnic.close();
                throw e;
            }
        }

        /**
         * One round trip: the client Writes 8 octets into the server's region and Sends 8 more, the
         * server receives the Send and Sends 8 octets back. Asserts every completion and every octet.
         */
        void roundTrip() throws Exception {
            long id = nextId;
            nextId += 10;
            ByteBuf clientMemory = clientRegion.buffer();
            ByteBuf serverMemory = serverRegion.buffer();
            clientMemory.setLong(0, 0x0102030405060708L ^ id);
            clientMemory.setLong(8, 0x1112131415161718L ^ id);
            serverMemory.setLong(24, 0x2122232425262728L ^ id);
            server.qp.postReceive(new ReceiveWorkRequest(id, new Sge(serverRegion, 64, 64)));
            client.postReceive(new ReceiveWorkRequest(id + 1, new Sge(clientRegion, 64, 64)));
            client.postSend(SendWorkRequest.write(id + 2, serverRegion.address() + 16, serverRegion.rkey(),
                    new Sge(clientRegion, 0, 8)));
            client.postSend(SendWorkRequest.send(id + 3, new Sge(clientRegion, 8, 8)));
            expectSuccess(clientCq, id + 2, WcOpcode.RDMA_WRITE);
            expectSuccess(clientCq, id + 3, WcOpcode.SEND);
            WorkCompletion received = expectSuccess(server.cq, id, WcOpcode.RECEIVE);
            assertEquals(8, received.byteLength());
            // The Write was placed before the Send that followed it completed (RFC 5040 section 5.5).
            assertEquals(clientMemory.getLong(0), serverMemory.getLong(16), "the Write's octets");
            assertEquals(clientMemory.getLong(8), serverMemory.getLong(64), "the Send's octets");
            server.qp.postSend(SendWorkRequest.send(id + 4, new Sge(serverRegion, 24, 8)));
            expectSuccess(server.cq, id + 4, WcOpcode.SEND);
            expectSuccess(clientCq, id + 1, WcOpcode.RECEIVE);
            assertTrue(ByteBufUtil.equals(serverMemory, 24, clientMemory, 64, 8), "the Send back");
            assertEquals(QpState.RTS, client.state());
            assertEquals(QpState.RTS, server.qp.state());
        }

        private static WorkCompletion expectSuccess(CompletionQueue cq, long id, WcOpcode opcode)
                throws InterruptedException {
            WorkCompletion wc = cq.take(10, TimeUnit.SECONDS);
            assertNotNull(wc, "no completion for work request " + id + " within 10 s");
            assertEquals(id, wc.workRequestId(), wc.toString());
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(opcode, wc.opcode(), wc.toString());
            return wc;
        }

        @Override
        public void close() {
            clientRnic.close();
        }
    }
}
