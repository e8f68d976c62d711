package org.jiwarp.conformance.soak;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * A TCP proxy between two RNICs whose legs carry a {@link FaultInjector} and a {@link Resegmenter}
 * each: connection number {@code n} (in accept order) gets the fault {@code plans.apply(n)} chooses,
 * in the direction it names; every direction of every connection is re-segmented and delayed.
 *
 * <pre>
 *   client RNIC -- client leg: FaultInjector(to server) -> Resegmenter -> upstream.write --> server RNIC
 *              <-- client.write <- Resegmenter <- FaultInjector(to client) :upstream leg --
 * </pre>
 *
 * <p>Every wait here has a deadline ({@link #WAIT}).
 */
final class FaultyProxy implements AutoCloseable {

    /** How long binding, closing and shutting the event loop down may take. */
    static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * The fault of one connection.
     *
     * @param fault    what to do
     * @param toServer in the client-to-server direction (else server to client)
     * @param after    the number of FPDUs of that direction to let through first
     * @param seed     seeds where exactly the fault falls and how the streams are re-segmented
     */
    record Plan(FaultInjector.Fault fault, boolean toServer, long after, long seed) {

        static Plan none(long seed) {
            return new Plan(FaultInjector.Fault.NONE, true, 0, seed);
        }

        @Override
        public String toString() {
            return fault == FaultInjector.Fault.NONE ? "no fault" : fault + (toServer ? " to the server" : " to the client")
                    + " from FPDU " + after;
        }
    }

    /** One proxied connection: its plan, what each direction carried, and the fault once injected. */
    static final class Connection {
        final int number;
        final Plan plan;
        final int clientPort;
        final FaultInjector.Ledger toServer = new FaultInjector.Ledger();
        final FaultInjector.Ledger toClient = new FaultInjector.Ledger();
        /** Completes, on the connection's event loop, once the fault has been injected. */
        final java.util.concurrent.CompletableFuture<FaultInjector.Injection> injected =
                new java.util.concurrent.CompletableFuture<>();

        Connection(int number, Plan plan, int clientPort) {
            this.number = number;
            this.plan = plan;
            this.clientPort = clientPort;
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final AtomicInteger accepted = new AtomicInteger();
    private final Map<Integer, Connection> connections = new ConcurrentHashMap<>();
    /** What went wrong in the proxy itself (not a reset by an RNIC, which is traffic). */
    private final java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();

    FaultyProxy(InetSocketAddress target, IntFunction<Plan> plans) throws InterruptedException {
        ChannelFuture bound = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel client) {
                        int n = accepted.getAndIncrement();
                        Connection connection = new Connection(n, plans.apply(n),
                                ((InetSocketAddress) client.remoteAddress()).getPort());
                        connections.put(n, connection);
                        Consumer<FaultInjector.Injection> record = connection.injected::complete;
                        Plan plan = connection.plan;
                        Channel[] upstream = new Channel[1];
                        Runnable closeBoth = () -> {
                            client.close();
                            if (upstream[0] != null) {
                                upstream[0].close();
                            }
                        };
                        client.pipeline().addLast(
                                new FaultInjector(n, plan, true, connection.toServer, record),
                                new Resegmenter(plan.seed() * 4 + 2, msg -> upstream[0].writeAndFlush(msg), closeBoth),
                                new CloseOther(upstream, failures));
                        new Bootstrap().group(client.eventLoop()).channel(NioSocketChannel.class)
                                .option(ChannelOption.TCP_NODELAY, true)
                                .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
                                .handler(new ChannelInitializer<Channel>() {
                                    @Override
                                    protected void initChannel(Channel ch) {
                                        ch.pipeline().addLast(
                                                new FaultInjector(n, plan, false, connection.toClient, record),
                                                new Resegmenter(plan.seed() * 4 + 3, client::writeAndFlush, closeBoth),
                                                new CloseOther(new Channel[] {client}, failures));
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
                }).bind(new InetSocketAddress("127.0.0.1", 0));
        if (!bound.await(WAIT.toMillis(), TimeUnit.MILLISECONDS) || !bound.isSuccess()) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new IllegalStateException("the proxy did not bind within " + WAIT.toSeconds() + " s", bound.cause());
        }
        server = bound.channel();
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    int connections() {
        return accepted.get();
    }

    /** Connection number {@code n} (in accept order), or {@code null}. */
    Connection connection(int n) {
        return connections.get(n);
    }

    /** What went wrong in the proxy's own handlers (a fault injector's bug, say); empty when nothing did. */
    java.util.List<Throwable> failures() {
        return java.util.List.copyOf(failures);
    }

    /** Closes the listening socket and every connection's legs, and ends the proxy's thread. */
    @Override
    public void close() throws InterruptedException {
        ChannelFuture closed = server.close();
        Future<?> shutdown = group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        if (!closed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the proxy's listening socket did not close within " + WAIT.toSeconds() + " s");
        }
        if (!shutdown.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the proxy's event loop did not end within " + WAIT.toSeconds() + " s");
        }
    }

    /**
     * Passes each leg's end on to the other as TCP would: the peer's FIN on one leg becomes a FIN on
     * the other once what was written to it is out (an RNIC half-closes after its Terminate and reads
     * on; closing the other leg at once would reset a peer that is still sending, and a reset can
     * lose the Terminate it has not read yet), and a leg shut both ways is closed. A leg that closes
     * (a reset, a cut) closes the other once what was written to it is out.
     */
    private static final class CloseOther extends ChannelInboundHandlerAdapter {
        private final Channel[] other;
        private final java.util.Queue<Throwable> failures;

        CloseOther(Channel[] other, java.util.Queue<Throwable> failures) {
            this.other = other;
            this.failures = failures;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof ChannelInputShutdownEvent) {
                Channel self = ctx.channel();
                Channel peer = other[0];
                if (peer instanceof DuplexChannel duplex && peer.isActive()) {
                    peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(written -> duplex.shutdownOutput()
                            .addListener(shut -> closeIfShutBothWays(duplex)));
                } else if (peer != null) {
                    peer.close();
                }
                closeIfShutBothWays((DuplexChannel) self);
            }
            ctx.fireUserEventTriggered(event);
        }

        private static void closeIfShutBothWays(DuplexChannel channel) {
            if (channel.isInputShutdown() && channel.isOutputShutdown()) {
                channel.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (other[0] != null && other[0].isActive()) {
                other[0].writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(cause instanceof java.io.IOException)) {
                failures.add(cause); // an IOException is a reset by an RNIC: traffic, not a failure
            }
            ctx.close(); // channelInactive closes the other leg
        }
    }
}
