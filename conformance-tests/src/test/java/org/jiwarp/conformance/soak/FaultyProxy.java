package org.jiwarp.conformance.soak;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * A TCP proxy between two RNICs whose legs carry {@link FaultInjector}s: connection number
 * {@code n} (in accept order) gets the faults {@code plan.apply(n)} chooses, one per direction.
 */
final class FaultyProxy implements AutoCloseable {

    /** The faults of one connection: client to server, and server to client, each with its trigger. */
    record Plan(FaultInjector.Fault toServer, long toServerAfter, FaultInjector.Fault toClient, long toClientAfter) {
        boolean destructive() {
            return toServer.destructive || toClient.destructive;
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final AtomicInteger connections = new AtomicInteger();
    private final java.util.Map<Integer, Plan> plans = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<Integer, AtomicLong> injected = new java.util.concurrent.ConcurrentHashMap<>();

    FaultyProxy(InetSocketAddress target, IntFunction<Plan> plan) {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel client) {
                        int n = connections.getAndIncrement();
                        Plan p = plan.apply(n);
                        int port = ((InetSocketAddress) client.remoteAddress()).getPort();
                        plans.put(port, p);
                        AtomicLong faults = new AtomicLong();
                        injected.put(port, faults);
                        Channel[] upstream = new Channel[1];
                        Runnable closeBoth = () -> {
                            client.close();
                            if (upstream[0] != null) {
                                upstream[0].close();
                            }
                        };
                        client.pipeline().addLast(new FaultInjector(p.toServer(), p.toServerAfter(), 2L * n,
                                faults, msg -> upstream[0].writeAndFlush(msg), closeBoth), new CloseOther(upstream));
                        new Bootstrap().group(client.eventLoop()).channel(NioSocketChannel.class)
                                .option(ChannelOption.TCP_NODELAY, true)
                                .handler(new ChannelInitializer<Channel>() {
                                    @Override
                                    protected void initChannel(Channel ch) {
                                        ch.pipeline().addLast(new FaultInjector(p.toClient(), p.toClientAfter(),
                                                2L * n + 1, faults, client::writeAndFlush, closeBoth),
                                                new CloseOther(new Channel[] {client}));
                                    }
                                }).connect(target).addListener((ChannelFutureListener) f -> {
                                    if (f.isSuccess()) {
                                        upstream[0] = f.channel();
                                        client.config().setAutoRead(true);
                                    } else {
                                        client.close();
                                    }
                                });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    int connections() {
        return connections.get();
    }

    /** The plan of the connection whose client end has this local port. */
    Plan planFor(int clientPort) {
        return plans.get(clientPort);
    }

    /** Destructive faults injected on the connection whose client end has this local port. */
    long injectedFor(int clientPort) {
        AtomicLong faults = injected.get(clientPort);
        return faults == null ? 0 : faults.get();
    }

    /** Destructive faults injected on all connections. */
    long injected() {
        return injected.values().stream().mapToLong(AtomicLong::get).sum();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** When one leg closes, close the other once its writes are out. */
    private static final class CloseOther extends ChannelInboundHandlerAdapter {
        private final Channel[] other;

        CloseOther(Channel[] other) {
            this.other = other;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ((ByteBuf) msg).release();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (other[0] != null && other[0].isActive()) {
                other[0].writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
            ctx.fireChannelInactive();
        }
    }
}
