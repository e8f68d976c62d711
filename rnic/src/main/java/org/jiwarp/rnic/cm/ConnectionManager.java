package org.jiwarp.rnic.cm;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.FpduReads;
import org.jiwarp.mpa.MpaAcceptor;
import org.jiwarp.mpa.MpaConnectRequest;
import org.jiwarp.mpa.MpaInitiatorHandler;
import org.jiwarp.mpa.MpaResponderHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.UlpduParts;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.qp.QpConnection;

/**
 * The RNIC's connection manager (Linux siw's {@code siw_cm.c}): owns the event loops (native epoll
 * where there is one, else NIO) and every connection's channel, and is the one place that builds a
 * connection's pipeline. Nothing else adds, removes or looks up a handler; what a layer needs of
 * another it gets as a reference when the connection is built.
 *
 * <pre>
 *   socket
 *     |  [PcapCapture]      the capture option: both directions, as Wireshark reads them
 *     |  OctetsToTcp        outbound: counts what the connection hands to TCP (for the IRD and completions)
 *     |  MpaInitiatorHandler / MpaResponderHandler + SetupLimit's watcher (listener side)
 *     |     ... replaced at establishment by MPA's FpduCodec: FpduDeframer, FpduFramer, [FirstFpduGate]
 *     |  QpConnection       the queue pair's engine
 * </pre>
 *
 * <p>Every channel reads through its own {@link FpduReads}, so that long payloads go straight from
 * the socket into registered memory once MPA is in full operation, and writes under the connection's
 * write bound ({@link #WATER_MARK}) with held ULPDUs counted ({@link UlpduParts#SIZE_ESTIMATOR}).
 */
public final class ConnectionManager implements AutoCloseable {

    /**
     * The connections' allocator. Netty 4.2's default (adaptive) makes every retained slice a new
     * object; the pooled allocator recycles its derived buffers.
     */
    private static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;
    /**
     * Each connection's bound on octets written but not yet taken by TCP (beyond what the socket's
     * own buffer holds): above the high mark its send queue and Read responder stop issuing, unless
     * nothing else waits on its event loop and a flush drains it (see {@code SegmentWriter.writable}).
     * Two 64 KiB messages' worth: enough to keep a socket busy between two turns of its event loop,
     * small enough that a thousand queue pairs on one loop take it in turn.
     */
    public static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(64 << 10, 128 << 10);

    private final RnicOptions options;
    private final EventLoopGroup group;
    private final Class<? extends Channel> channelClass;
    private final Class<? extends ServerChannel> serverChannelClass;
    private final List<Channel> channels = new CopyOnWriteArrayList<>();

    public ConnectionManager(RnicOptions options) {
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
    }

    /** {@code "epoll"} or {@code "nio"}. */
    public String transport() {
        return channelClass == EpollSocketChannel.class ? "epoll" : "nio";
    }

    /**
     * Listens on {@code address}: each connection admitted by {@code limit} gets the responder's MPA
     * setup, and its Request goes to {@code requests}; accept it with {@link #attach}.
     *
     * @return the listening channel
     */
    public Channel listen(InetSocketAddress address, MpaSettings settings, SetupLimit limit, MpaAcceptor requests) {
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
                        ChannelPipeline pipeline = connectionOpened(ch, false);
                        pipeline.addLast("mpa", new MpaResponderHandler(settings, requests));
                        pipeline.addLast("setup-limit", limit.watcher(ch));
                    }
                }).bind(address).syncUninterruptibly();
        track(bind.channel());
        return bind.channel();
    }

    /**
     * Puts the queue pair's engine on an accepted connection whose MPA Request is in hand, then
     * answers the Request with the Reply (on the connection's event loop).
     */
    public void attach(MpaConnectRequest request, QpConnection connection, byte[] privateData, int ird, int ord) {
        Channel channel = request.channel();
        channel.eventLoop().execute(() -> {
            connection.wire(OctetsToTcp.addFirst(channel.pipeline()), reads(channel));
            channel.pipeline().addLast("qp", connection);
            request.accept(privateData, ird, ord);
        });
    }

    /**
     * Connects to {@code remote} from {@code local} ({@code null}: any) with the initiator's MPA setup
     * and the queue pair's engine on top.
     */
    public ChannelFuture connect(InetSocketAddress remote, InetSocketAddress local, MpaInitiatorHandler mpa,
            QpConnection connection) {
        return new Bootstrap().group(group).channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .option(ChannelOption.MESSAGE_SIZE_ESTIMATOR, UlpduParts.SIZE_ESTIMATOR)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ChannelPipeline pipeline = connectionOpened(ch, true);
                        connection.wire(OctetsToTcp.addFirst(pipeline), reads(ch));
                        pipeline.addLast("mpa", mpa);
                        pipeline.addLast("qp", connection);
                    }
                }).connect(remote, local);
    }

    /** What every connection starts with: tracked, reading through its own FpduReads, captured if asked. */
    private ChannelPipeline connectionOpened(Channel ch, boolean initiator) {
        track(ch);
        ch.config().setRecvByteBufAllocator(new FpduReads());
        if (options.capture() != null) {
            ch.pipeline().addFirst("pcap", new PcapCapture(options.capture(), initiator));
        }
        return ch.pipeline();
    }

    /** The channel's own {@link FpduReads}, set where it was opened. */
    private static FpduReads reads(Channel ch) {
        return (FpduReads) ch.config().getRecvByteBufAllocator();
    }

    private void track(Channel ch) {
        channels.add(ch);
        ch.closeFuture().addListener(f -> channels.remove(ch));
    }

    /** Closes every connection and listener, and stops the event loops (two seconds at most). */
    @Override
    public void close() {
        for (Channel channel : channels) {
            channel.close();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
