package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
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
        this(options -> options);
    }

    /** A server whose RNIC options {@code adjust} changes (a shorter close timeout, say). */
    RawPeerServer(java.util.function.UnaryOperator<RnicOptions> adjust) {
        rnic = Rnic.open(adjust.apply(RnicOptions.defaults().threads(1).mpa(SERVER_MPA)));
        pd = rnic.allocatePd();
        region = pd.register(ByteBuffer.allocateDirect(REGION_SIZE), Access.ALL);
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
                clientRegion = clientPd.register(ByteBuffer.allocateDirect(4096), Access.ALL);
                serverRegion = host.pd.register(ByteBuffer.allocateDirect(4096), Access.ALL);
                server = host.expect(0);
                clientRnic.connect(client, host.address(), new byte[] {'o', 'k'}).get(10, TimeUnit.SECONDS);
                server.awaitEstablished();
            } catch (Exception | Error e) {
                clientRnic.close();
                throw e;
            }
        }

        /** One {@link RoundTrip}: a Write and a Send from the client, a Send back, every octet checked. */
        void roundTrip() throws Exception {
            long id = nextId;
            nextId += 10;
            new RoundTrip(client, clientCq, clientRegion, server.qp, server.cq, serverRegion).run(id);
        }

        @Override
        public void close() {
            clientRnic.close();
        }
    }
}
