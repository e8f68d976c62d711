package org.jiwarp.rpcrdma;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * ONC RPC over TCP (RFC 5531 section 11, record marking), serving the same {@link RpcHandler}s as
 * {@link RpcRdmaServer}: NFSv3 over TCP, and MOUNT, which NFS over RDMA still reaches over TCP (RFC
 * 8267 section 5.1).
 *
 * <ul>
 *   <li>Records: each fragment's 4-octet mark holds the last-fragment bit and the length; the
 *       fragments of a record are joined (without copying) up to {@link Options#maxRecord} octets;
 *       a record longer than that closes its connection, and only that one. Every reply goes as one
 *       fragment.</li>
 *   <li>Calls: the header is read as {@link RpcRdmaServer} reads it ({@link Rpc#getCall}) and
 *       denied by the same rules ({@link Rpc#denial}: RPC_MISMATCH for an RPC version other than
 *       2, AUTH_BADCRED for a credential other than AUTH_NONE and AUTH_SYS); a record that is not a
 *       call header at all closes the connection, since nothing after it can be trusted. The
 *       handler runs on a pool of {@link Options#workers} threads and may block; replies go back
 *       in the order they are ready, each with its call's xid.</li>
 *   <li>A reply's DDP-eligible item ({@link RpcReply#ddpData}) follows the results with its XDR
 *       padding, written from the handler's buffer without a copy.</li>
 *   <li>Bounds: a connection has at most {@link Options#maxCallsInProgress} calls being handled or
 *       with replies not yet written to the socket; at that many, or while its channel is not
 *       writable (the client does not read its replies and the write buffer passed its high water
 *       mark), the server stops reading it, so what it holds for one connection is the calls in
 *       progress, their replies, and at most one record being received. Other connections go on
 *       being served. Connections beyond {@link Options#maxConnections} are closed when they are
 *       accepted.</li>
 * </ul>
 */
public final class RpcTcpServer implements AutoCloseable {

    /** How the server serves. */
    public record Options(int maxRecord, int maxCallsInProgress, int maxConnections, int workers) {

        public Options {
            if (maxRecord < 1024) {
                throw new IllegalArgumentException("a record of at least 1024 octets must be accepted");
            }
            if (maxCallsInProgress < 1 || maxConnections < 1 || workers < 1) {
                throw new IllegalArgumentException("limits must be positive");
            }
        }

        /**
         * Records up to 1 MiB + 64 KiB (a 1 MiB NFS WRITE and its header), 32 calls in progress per
         * connection, 64 connections, 4 workers.
         */
        public static Options defaults() {
            return new Options((1 << 20) + (64 << 10), 32, 64, 4);
        }

        public Options maxRecord(int maxRecord) {
            return new Options(maxRecord, maxCallsInProgress, maxConnections, workers);
        }

        public Options maxCallsInProgress(int maxCallsInProgress) {
            return new Options(maxRecord, maxCallsInProgress, maxConnections, workers);
        }

        public Options maxConnections(int maxConnections) {
            return new Options(maxRecord, maxCallsInProgress, maxConnections, workers);
        }

        public Options workers(int workers) {
            return new Options(maxRecord, maxCallsInProgress, maxConnections, workers);
        }
    }

    /** A reply's socket writes stop above this many octets queued, and go on below the low mark. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 << 10, 64 << 10);

    private static final long CLOSE_WAIT_MILLIS = 5_000;

    private final RpcHandler handler;
    private final Options options;
    private final EventLoopGroup group;
    private final ExecutorService workers;
    private final Channel serverChannel;
    private final Set<RpcTcpConnection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong closedForErrors = new AtomicLong();
    private volatile boolean closed;

    private RpcTcpServer(InetSocketAddress address, RpcHandler handler, Options options) {
        this.handler = handler;
        this.options = options;
        this.group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        this.workers = Executors.newFixedThreadPool(options.workers(), r -> {
            Thread t = new Thread(r, "rpc-tcp-server-worker");
            t.setDaemon(true);
            return t;
        });
        ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        accepted(ch);
                    }
                });
        ChannelFuture bound = bootstrap.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            workers.shutdownNow();
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new RpcException("cannot listen on " + address.getHostString() + " port " + address.getPort()
                    + " over TCP: " + Failures.describe(bound.cause()), bound.cause());
        }
        this.serverChannel = bound.channel();
    }

    /**
     * Listens on {@code address} (NFS over TCP: port 2049; port 0 picks a free one, see {@link
     * #localAddress}) and serves each connection's calls with {@code handler}.
     *
     * @throws RpcException when the address cannot be bound (a port in use, say)
     */
    public static RpcTcpServer listen(InetSocketAddress address, RpcHandler handler, Options options) {
        return new RpcTcpServer(address, handler, options);
    }

    /** The address bound, with the port chosen when 0 was asked for. */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public Options options() {
        return options;
    }

    /** Connections open now. */
    public int connections() {
        return connections.size();
    }

    /** Connections closed on acceptance because {@link Options#maxConnections} were open. */
    public long refusedConnections() {
        return refused.get();
    }

    /** Connections closed for what they sent: a record too long, a record that is not a call. */
    public long connectionsClosedForErrors() {
        return closedForErrors.get();
    }

    /**
     * Octets held for all connections: records received and not yet handed to the handler, calls in
     * progress' replies not yet written to the socket. For the tests of the bounds.
     */
    long octetsHeld() {
        long n = 0;
        for (RpcTcpConnection c : connections) {
            n += c.octetsHeld();
        }
        return n;
    }

    /** Calls being handled or with replies not yet written, over all connections. */
    int callsInProgress() {
        int n = 0;
        for (RpcTcpConnection c : connections) {
            n += c.callsInProgress();
        }
        return n;
    }

    /** The most calls one connection has had in progress at once. */
    int peakCallsInProgress() {
        int n = 0;
        for (RpcTcpConnection c : connections) {
            n = Math.max(n, c.peakCallsInProgress());
        }
        return n;
    }

    private void accepted(SocketChannel ch) {
        synchronized (connections) {
            if (closed || connections.size() >= options.maxConnections()) {
                refused.incrementAndGet();
                ch.close();
                return;
            }
            RpcTcpConnection connection = new RpcTcpConnection(this, ch);
            connections.add(connection);
            ch.closeFuture().addListener(f -> connections.remove(connection));
            ch.pipeline().addLast(connection);
        }
    }

    RpcHandler handler() {
        return handler;
    }

    ExecutorService workers() {
        return workers;
    }

    void closedForError() {
        closedForErrors.incrementAndGet();
    }

    /**
     * Stops listening, closes every connection (calls in progress are answered into a closed
     * channel and dropped), and waits at most 5 s for the handlers and 5 s for the event loops.
     */
    @Override
    public void close() {
        List<Channel> open = new ArrayList<>();
        synchronized (connections) {
            closed = true;
            for (RpcTcpConnection c : connections) {
                open.add(c.channel());
            }
        }
        serverChannel.close().awaitUninterruptibly(CLOSE_WAIT_MILLIS);
        for (Channel ch : open) {
            ch.close();
        }
        workers.shutdown();
        try {
            if (!workers.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                workers.shutdownNow();
            }
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        group.shutdownGracefully(0, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(CLOSE_WAIT_MILLIS);
    }
}
