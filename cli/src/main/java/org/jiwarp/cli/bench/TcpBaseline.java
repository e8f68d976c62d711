package org.jiwarp.cli.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
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
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The raw-TCP baseline: the same transfer patterns as jiwarp ({@link StreamPattern},
 * {@link PingPongPattern}) through Netty with the same transport, thread count, batching and
 * buffers, with nothing of iWARP: a Write or Send is a DATA frame copied into the server's buffer,
 * a Read a READ frame answered from the server's buffer. Whatever the ratio shows is the cost of
 * MPA, DDP and RDMAP.
 */
final class TcpBaseline {

    private TcpBaseline() {
    }

    /** An event loop group of the kind an {@code Rnic} with these options would use. */
    static EventLoopGroup group(int threads, boolean epoll) {
        return new MultiThreadIoEventLoopGroup(threads, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    static boolean epoll(String transport) {
        return "epoll".equals(transport) && Epoll.isAvailable();
    }

    /** The server: answers SYNC and READ, echoes DATA in latency runs. */
    static final class Server implements AutoCloseable {
        private final EventLoopGroup group;
        private final Channel channel;

        Server(int threads, boolean epoll, InetSocketAddress bind) {
            this.group = group(threads, epoll);
            Class<? extends ServerChannel> type = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
            this.channel = new ServerBootstrap().group(group).channel(type)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new ServerFrames());
                        }
                    }).bind(bind).syncUninterruptibly().channel();
        }

        InetSocketAddress localAddress() {
            return (InetSocketAddress) channel.localAddress();
        }

        @Override
        public void close() {
            channel.close().syncUninterruptibly();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static final class ServerFrames extends BaselineFrames {
        private BenchSpec spec;

        ServerFrames() {
            super(Unpooled.buffer(BenchSpec.ENCODED_LENGTH));
        }

        @Override
        void frame(ChannelHandlerContext ctx, int type, int length) {
            switch (type) {
                case HELLO -> {
                    byte[] bytes = new byte[length];
                    memory.getBytes(0, bytes);
                    spec = BenchSpec.decode(bytes);
                    memory = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(spec.size()));
                }
                case DATA -> {
                    if (spec.mode() == BenchMode.LAT) {
                        ctx.write(header(ctx, RESPONSE, length), ctx.voidPromise());
                        ctx.writeAndFlush(memory.retainedSlice(0, length), ctx.voidPromise());
                    }
                }
                case SYNC -> ctx.writeAndFlush(header(ctx, RESPONSE, 0), ctx.voidPromise());
                case READ -> {
                    ctx.write(header(ctx, RESPONSE, length), ctx.voidPromise());
                    ctx.write(memory.retainedSlice(0, length), ctx.voidPromise());
                }
                default -> throw new IllegalStateException("unknown baseline frame type " + type);
            }
        }

        @Override
        void failed(Throwable cause) {
        }
    }

    /** The client: one socket per connection, each running the spec's pattern. */
    static final class Client implements BenchTransport, AutoCloseable {
        private final EventLoopGroup group;
        private final Class<? extends Channel> type;
        private final InetSocketAddress server;

        Client(int threads, boolean epoll, InetSocketAddress server) {
            this.group = group(threads, epoll);
            this.type = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
            this.server = server;
        }

        @Override
        public String name() {
            return "tcp";
        }

        @Override
        public List<Connection> connect(BenchSpec spec, int count, LongAdder progress, Limit limit) {
            List<ChannelFuture> futures = new ArrayList<>();
            List<Connection> connections = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ByteBuf memory = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(spec.size()));
                Connection connection = spec.mode() == BenchMode.BW ? new Stream(spec, limit, progress, memory)
                        : new PingPong(spec, limit, progress, memory);
                connections.add(connection);
                futures.add(new Bootstrap().group(group).channel(type).option(ChannelOption.TCP_NODELAY, true)
                        .handler((io.netty.channel.ChannelHandler) connection).connect(server));
            }
            byte[] hello = spec.encode();
            for (ChannelFuture future : futures) {
                Channel channel = future.syncUninterruptibly().channel();
                channel.write(Unpooled.buffer(8).writeInt(BaselineFrames.HELLO).writeInt(hello.length));
                channel.writeAndFlush(Unpooled.wrappedBuffer(hello)).syncUninterruptibly();
            }
            return connections;
        }

        @Override
        public void close() {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** The bandwidth pattern over one socket. */
    private static final class Stream extends BaselineFrames implements BenchTransport.Connection {
        private final Pattern pattern;

        Stream(BenchSpec spec, Limit limit, LongAdder progress, ByteBuf memory) {
            super(memory);
            this.pattern = new Pattern(spec, limit, progress);
        }

        private final class Pattern extends StreamPattern {
            private final ChannelFutureListener onWritten = future -> {
                if (future.isSuccess()) {
                    completed(((IndexedPromise) future).index);
                } else {
                    failed(future.cause());
                }
            };
            private long responses;

            Pattern(BenchSpec spec, Limit limit, LongAdder progress) {
                super(spec, limit, progress);
            }

            @Override
            void post(long index, boolean signaled) {
                int size = spec.size();
                if (spec.op().answered()) {
                    // A Read (or an atomic's 8 octets) completes when its response is in (see response()).
                    ctx.write(header(ctx, READ, size), ctx.voidPromise());
                    return;
                }
                ctx.write(header(ctx, DATA, size), ctx.voidPromise());
                if (signaled) {
                    IndexedPromise promise = new IndexedPromise(ctx.channel(), index);
                    promise.addListener(onWritten);
                    ctx.write(memory.retainedSlice(0, size), promise);
                } else {
                    ctx.write(memory.retainedSlice(0, size), ctx.voidPromise());
                }
            }

            @Override
            void flushPosts() {
                ctx.flush();
            }

            @Override
            void sync() {
                ctx.write(header(ctx, SYNC, 0), ctx.voidPromise());
            }

            /** Responses come in request order: the Reads' first, then the sync's. */
            void response() {
                if (spec.op().answered() && responses < posted) {
                    long index = responses++;
                    if ((index + 1) % spec.cqMod() == 0 || !limit.timed() && index + 1 == limit.iterations()) {
                        completed(index);
                    }
                } else {
                    synced();
                }
            }
        }

        @Override
        void frame(ChannelHandlerContext ctx, int type, int length) {
            pattern.response();
        }

        @Override
        void failed(Throwable cause) {
            pattern.failed(cause);
        }

        @Override
        public void begin() {
            ctx.executor().execute(pattern::start);
        }

        @Override
        public CompletableFuture<BenchTransport.Result> result() {
            return pattern.finished().thenApply(p -> new BenchTransport.Result(p.posted, p.startNanos, p.endNanos, p.latency()));
        }
    }

    /** A promise that knows which message it is for. */
    private static final class IndexedPromise extends io.netty.channel.DefaultChannelPromise {
        final long index;

        IndexedPromise(Channel channel, long index) {
            super(channel);
            this.index = index;
        }
    }

    /** The latency pattern over one socket: DATA echoed (Send, Write) or READ answered. */
    private static final class PingPong extends BaselineFrames implements BenchTransport.Connection {
        private final Pattern pattern;

        PingPong(BenchSpec spec, Limit limit, LongAdder progress, ByteBuf memory) {
            super(memory);
            this.pattern = new Pattern(spec, limit, progress);
        }

        private final class Pattern extends PingPongPattern {
            Pattern(BenchSpec spec, Limit limit, LongAdder progress) {
                super(spec, limit, progress);
            }

            @Override
            void ping(long index) {
                int size = spec.size();
                if (spec.op().answered()) {
                    ctx.writeAndFlush(header(ctx, READ, size), ctx.voidPromise());
                } else {
                    ctx.write(header(ctx, DATA, size), ctx.voidPromise());
                    ctx.writeAndFlush(memory.retainedSlice(0, size), ctx.voidPromise());
                }
            }
        }

        @Override
        void frame(ChannelHandlerContext ctx, int type, int length) {
            pattern.pong();
        }

        @Override
        void failed(Throwable cause) {
            pattern.failed(cause);
        }

        @Override
        public void begin() {
            ctx.executor().execute(pattern::start);
        }

        @Override
        public CompletableFuture<BenchTransport.Result> result() {
            return pattern.finished().thenApply(p -> new BenchTransport.Result(p.count, p.startNanos, p.endNanos, p.latency));
        }
    }
}
