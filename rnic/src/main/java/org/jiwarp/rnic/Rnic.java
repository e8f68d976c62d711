package org.jiwarp.rnic;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.mpa.FpduReads;
import org.jiwarp.mpa.MpaInitiatorHandler;
import org.jiwarp.mpa.MpaResponderHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.UlpduParts;

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
    /**
     * The connections' allocator. Netty 4.2's default (adaptive) makes every retained slice a new
     * object; the pooled allocator recycles its derived buffers, so the slice of the read buffer
     * that carries each inbound ULPDU to DDP allocates nothing.
     */
    private static final io.netty.buffer.ByteBufAllocator ALLOCATOR = io.netty.buffer.PooledByteBufAllocator.DEFAULT;
    /**
     * Each connection's bound on octets written but not yet taken by TCP: above the high mark its send
     * queue stops issuing work until the channel drains below the low one (see {@link SendQueue}).
     * Two 64 KiB messages' worth: enough to keep a socket busy between two turns of its event loop,
     * small enough that a thousand queue pairs on one loop take it in turn.
     */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(64 << 10, 128 << 10);

    private final RnicOptions options;
    private final EventLoopGroup group;
    private final Class<? extends Channel> channelClass;
    private final Class<? extends ServerChannel> serverChannelClass;
    private final StagTable stags;
    private final AtomicInteger pdIds = new AtomicInteger();
    private final AtomicInteger qpNumbers = new AtomicInteger();
    private final AtomicLong syntheticAddresses = new AtomicLong(SYNTHETIC_BASE);
    private final List<Channel> channels = new CopyOnWriteArrayList<>();
    private final AsyncEvents events = new AsyncEvents();

    private Rnic(RnicOptions options) {
        this.options = options;
        boolean epoll = options.transport() == RnicOptions.Transport.EPOLL
                || options.transport() == RnicOptions.Transport.AUTO && Epoll.isAvailable();
        if (epoll) {
            Epoll.ensureAvailability();
        }
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.group = new MultiThreadIoEventLoopGroup(options.threads(), io);
        this.channelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.serverChannelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
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
        return channelClass == EpollSocketChannel.class ? "epoll" : "nio";
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
        // The domain is held first and given back if a completion queue refuses (it is destroyed).
        config.pd().queuePairAdded();
        try {
            return new QueuePair(this, qpNumbers.incrementAndGet(), config, events);
        } catch (Throwable e) {
            config.pd().queuePairRemoved();
            throw e;
        }
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
        MpaSettings settings = options.mpa();
        SetupLimit limit = new SetupLimit(options.maxSetups());
        ChannelFuture bind = new ServerBootstrap().group(group).channel(serverChannelClass)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, UlpduParts.SIZE_ESTIMATOR)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (!limit.admit(ch)) {
                            ch.close();
                            return;
                        }
                        channels.add(ch);
                        ch.closeFuture().addListener(f -> channels.remove(ch));
                        ch.config().setRecvByteBufAllocator(new FpduReads());
                        if (options.capture() != null) {
                            ch.pipeline().addFirst("pcap", new PcapCapture(options.capture(), false));
                        }
                        ch.pipeline().addLast("mpa", new MpaResponderHandler(settings,
                                request -> listener.onConnectRequest(new ConnectRequest(request))));
                        ch.pipeline().addLast("setup-limit", limit.watcher(ch));
                    }
                }).bind(address).syncUninterruptibly();
        channels.add(bind.channel());
        return new RnicListener(bind.channel(), limit);
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
        ChannelFuture connect = new Bootstrap().group(group).channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .option(ChannelOption.MESSAGE_SIZE_ESTIMATOR, UlpduParts.SIZE_ESTIMATOR)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        ch.closeFuture().addListener(f -> channels.remove(ch));
                        ch.config().setRecvByteBufAllocator(new FpduReads());
                        if (options.capture() != null) {
                            ch.pipeline().addFirst("pcap", new PcapCapture(options.capture(), true));
                        }
                        ch.pipeline().addLast("mpa", mpa);
                        ch.pipeline().addLast("qp-" + qp.number(), connection);
                    }
                }).connect(remote, local);
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

    @Override
    public void close() {
        for (Channel channel : channels) {
            channel.close();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
