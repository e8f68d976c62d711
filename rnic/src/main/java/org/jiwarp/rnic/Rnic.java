package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.mpa.MpaInitiatorHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.cm.ConnectionManager;
import org.jiwarp.rnic.cm.SetupLimit;
import org.jiwarp.rnic.cq.AsyncEvents;
import org.jiwarp.rnic.qp.QpConnection;

/**
 * A software RNIC: the root of the verbs API ({@code ibv_context} plus {@code rdma_cm}). It owns
 * the Netty event loops (native epoll when present, else NIO) and the STag table, and creates
 * protection domains, completion queues and queue pairs, listens and connects. Close it to stop
 * everything.
 *
 * <pre>{@code
 * try (Rnic rnic = Rnic.open()) {
 *     ProtectionDomain pd = rnic.allocatePd();
 *     MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
 *     CompletionQueue cq = rnic.createCq(64);
 *     QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq));
 *     rnic.connect(qp, new InetSocketAddress("10.0.0.2", 7174), new byte[0]).get();
 *     qp.postSend(SendWorkRequest.write(1, remoteAddress, remoteStag, Sge.of(mr)));
 *     WorkCompletion wc = cq.take(5, TimeUnit.SECONDS);
 * }
 * }</pre>
 */
public final class Rnic implements AutoCloseable {

    /** Where registrations without a native address get their Tagged Offsets. */
    private static final long SYNTHETIC_BASE = 0x0000_4000_0000_0000L;

    private final RnicOptions options;
    private final ConnectionManager connections;
    private final StagTable stags;
    private final AtomicInteger pdIds = new AtomicInteger();
    private final AtomicInteger qpNumbers = new AtomicInteger();
    private final AtomicInteger srqNumbers = new AtomicInteger();
    private final AtomicLong syntheticAddresses = new AtomicLong(SYNTHETIC_BASE);
    private final AsyncEvents events = new AsyncEvents();

    private Rnic(RnicOptions options) {
        this.options = options;
        this.connections = new ConnectionManager(options);
        this.stags = new StagTable(options.maxStags());
    }

    public static Rnic open() {
        return open(RnicOptions.defaults());
    }

    public static Rnic open(RnicOptions options) {
        return new Rnic(options);
    }

    public RnicOptions options() {
        return options;
    }

    /** {@code "epoll"} or {@code "nio"}. */
    public String transport() {
        return connections.transport();
    }

    public ProtectionDomain allocatePd() {
        return new ProtectionDomain(this, pdIds.incrementAndGet());
    }

    public CompletionQueue createCq(int depth) {
        return new CompletionQueue(depth, events);
    }

    /**
     * Creates a queue pair in IDLE ({@code ibv_create_qp}), reporting to its completion queues from now
     * on; connect it with {@link #connect} or accept onto it.
     */
    public QueuePair createQp(QpConfig config) {
        if (config.pd().rnic() != this) {
            throw new IllegalArgumentException(config.pd() + " belongs to another RNIC");
        }
        SharedReceiveQueue srq = config.srq();
        if (srq != null && srq.pd().rnic() != this) {
            throw new IllegalArgumentException(srq + " belongs to another RNIC");
        }
        // The domain (and the shared receive queue) are held first and given back if a completion
        // queue refuses (it is destroyed).
        config.pd().queuePairAdded();
        try {
            if (srq != null) {
                srq.queuePairAdded();
            }
            try {
                return new QueuePair(this, qpNumbers.incrementAndGet(), config, events);
            } catch (Throwable e) {
                if (srq != null) {
                    srq.queuePairRemoved();
                }
                throw e;
            }
        } catch (Throwable e) {
            config.pd().queuePairRemoved();
            throw e;
        }
    }

    /** A shared receive queue of {@code pd} ({@link ProtectionDomain#createSrq}). */
    SharedReceiveQueue newSrq(ProtectionDomain pd, int maxWr, int maxSge, int limit) {
        return new SharedReceiveQueue(pd, srqNumbers.incrementAndGet(), maxWr, maxSge, limit, events);
    }

    /**
     * Adds a listener for asynchronous events: queue pairs that fail, receive a Terminate or go down,
     * completion queues that overrun ({@code ibv_get_async_event}). It runs on the thread where the
     * event happened, usually a connection's event loop: it must not block.
     */
    public void onAsyncEvent(java.util.function.Consumer<AsyncEvent> listener) {
        events.add(java.util.Objects.requireNonNull(listener));
    }

    /** Listens for connections; every request goes to {@code listener}. */
    public RnicListener listen(InetSocketAddress address, ConnectionListener listener) {
        SetupLimit limit = new SetupLimit(options.maxSetups());
        Channel channel = connections.listen(address, options.mpa(), limit,
                request -> listener.onConnectRequest(new ConnectRequest(request)));
        return new RnicListener(channel, limit);
    }

    /** Connects {@code qp} (IDLE) to a listening peer; completes when the QP is RTS. */
    public CompletableFuture<QueuePair> connect(QueuePair qp, InetSocketAddress remote, byte[] privateData) {
        return connect(qp, remote, null, privateData);
    }

    /**
     * Connects {@code qp} (IDLE) to a listening peer from {@code local} (rdma_resolve_addr's source
     * address; {@code null}: any); completes when the QP is RTS.
     */
    public CompletableFuture<QueuePair> connect(QueuePair qp, InetSocketAddress remote, InetSocketAddress local,
            byte[] privateData) {
        if (qp.state() != QpState.IDLE) {
            throw new IllegalStateException(qp + " is not IDLE");
        }
        MpaSettings settings = options.mpa().toBuilder().ird(qp.config().ird()).ord(qp.config().ord()).build();
        // Built here, so that a bad argument (private data over the limit) throws in the caller.
        MpaInitiatorHandler mpa = new MpaInitiatorHandler(settings, privateData);
        QpConnection connection = qp.newConnection();
        ChannelFuture connect = connections.connect(remote, local, mpa, connection);
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                connection.established().completeExceptionally(f.cause());
                qp.connectFailed();
            }
        });
        return connection.established().thenApply(c -> qp);
    }

    /** Registers {@code memory} in {@code pd}, which the caller holds ({@link ProtectionDomain#regionAdded}). */
    MemoryRegion register(ProtectionDomain pd, ByteBuf memory, int access) {
        long length = memory.readableBytes();
        long address = memory.hasMemoryAddress() ? memory.memoryAddress() + memory.readerIndex()
                : syntheticAddresses.getAndAdd(Math.max(4096, (length + 4095) & ~4095L));
        TaggedBuffer tagged = stags.register(pd.id(), memory, address, length, access);
        return new MemoryRegion(this, pd, tagged, memory);
    }

    StagTable stags() {
        return stags;
    }

    ConnectionManager connections() {
        return connections;
    }

    @Override
    public void close() {
        connections.close();
    }
}
