package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.SharedReceiveQueue;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * The responder side of RPC-over-RDMA version 1 (RFC 8166) on a jiwarp RNIC: listens, accepts
 * connections with the RFC 8797 private data, and serves their calls with an {@link RpcHandler}.
 *
 * <ul>
 *   <li>Receives: one shared receive queue for every connection, {@link Options#credits} receives
 *       of the inline size per connection it accepts ({@link Options#maxConnections}; a connection
 *       beyond them is rejected). A receive's message is copied out and the receive posted again
 *       at once, so the queue stays full.</li>
 *   <li>Credits (section 3.3.1): every reply grants {@link Options#credits}. A connection never has
 *       more calls in progress than that; a call beyond the grant (which section 3.3.1 forbids the
 *       requester, leaving the answer to the responder) is answered at once with an RPC SYSTEM_ERR,
 *       its chunks untouched; a connection with more such answers in flight than the grant is
 *       closed. At most the grant's calls are in service at once, from the pull of their Read
 *       chunks to their reply's Send completion; others wait for a Send to complete, so a client
 *       that stops reading holds a bounded number of calls whatever the send queue's depth.</li>
 *   <li>Calls: Read chunks are pulled with RDMA Read (a Position Zero Read chunk is the whole call,
 *       section 3.5.3) and spliced at their XDR position with their roundup; the call goes to the
 *       handler on a worker thread.</li>
 *   <li>Replies (section 3.5): a DDP-eligible item goes into the call's first Write chunk with
 *       RDMA Write; a reply that does not fit the client's inline receive size goes into the Reply
 *       chunk and the Send carries RDMA_NOMSG; without a Reply chunk, or with a chunk too small,
 *       the answer is RDMA_ERROR ERR_CHUNK. The reply is a Send with Invalidate of a handle of the
 *       call's chunks when the client's private data accepts Remote Invalidation (RFC 8797 section
 *       4.1), a plain Send otherwise.</li>
 *   <li>Errors (section 4.5): a message shorter than a header (28 octets) is dropped unanswered,
 *       as are RDMA_ERROR and RDMA_DONE from a client (sections 4.2.4 and 4.6.2); ERR_VERS, in the
 *       call's own version, for a version other than 1; ERR_CHUNK for a header or chunk list that
 *       does not decode or that this server does not serve (RDMA_MSGP, chunks beyond
 *       {@link Options#maxSegments} or {@link Options#maxChunk}, a Read chunk position that is not
 *       an XDR position, a Position Zero Read chunk in RDMA_MSG or none in RDMA_NOMSG).</li>
 *   <li>A connection that goes down (the client disconnects, resets, or its RNIC refuses an RDMA
 *       Read or Write): its outstanding work completes in error, its calls are dropped, their
 *       regions and buffers released, the queue pair destroyed; a handler still running finds its
 *       reply dropped. Other connections are not touched.</li>
 * </ul>
 */
public final class RpcRdmaServer implements AutoCloseable {

    /** How the server serves. */
    public record Options(int credits, int inlineSize, int maxConnections, int workers, int maxSegments,
            int maxChunk) {

        public Options {
            if (credits < 1) {
                throw new IllegalArgumentException("a responder grants at least one credit (RFC 8166 section 3.3.1)");
            }
            if (inlineSize < 1024 || inlineSize % 1024 != 0 || inlineSize > 256 * 1024) {
                throw new IllegalArgumentException("the inline size is a multiple of 1 KiB up to 256 KiB (RFC 8797)");
            }
            if (maxConnections < 1 || workers < 1 || maxSegments < 1 || maxChunk < 1) {
                throw new IllegalArgumentException("limits must be positive");
            }
        }

        /**
         * 32 credits, 4 KiB inline (what Linux 6.1's xprtrdma and svcrdma offer; the default of RFC
         * 8166 section 3.3.3 is 1 KiB), 64 connections, 4 workers, 16 segments in a chunk list,
         * 1 MiB + 64 KiB in a chunk (an NFS rsize/wsize of 1 MiB and its header).
         */
        public static Options defaults() {
            return new Options(32, PrivateData.DEFAULT_INLINE, 64, 4, 16, (1 << 20) + (64 << 10));
        }

        public Options credits(int credits) {
            return new Options(credits, inlineSize, maxConnections, workers, maxSegments, maxChunk);
        }

        public Options maxConnections(int maxConnections) {
            return new Options(credits, inlineSize, maxConnections, workers, maxSegments, maxChunk);
        }

        /** Receives in the shared receive queue: the credits of every connection. */
        int receives() {
            return credits * maxConnections;
        }
    }

    private final Rnic rnic;
    private final Options options;
    private final RpcHandler handler;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final SharedReceiveQueue srq;
    private final MemoryRegion receives;
    private final ExecutorService workers;
    private final Map<QueuePair, RpcRdmaConnection> connections = new ConcurrentHashMap<>();
    private final AtomicInteger regionsHeld = new AtomicInteger();
    private final AtomicLong excessCalls = new AtomicLong();
    private final AtomicLong errorsSent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong repliesPosted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final RnicListener listener;
    private volatile boolean closed;

    private RpcRdmaServer(Rnic rnic, InetSocketAddress address, RpcHandler handler, Options options) {
        this.rnic = rnic;
        this.options = options;
        this.handler = handler;
        this.pd = rnic.allocatePd();
        // Completions go to listeners on the queue pairs' event loops and are never queued: the
        // depth is not a bound here.
        this.sendCq = rnic.createCq(1024);
        this.receiveCq = rnic.createCq(1024);
        int slots = options.receives();
        int octets = slots * options.inlineSize();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(octets).writerIndex(octets);
        this.receives = pd.register(memory, Access.LOCAL_WRITE);
        this.srq = pd.createSrq(slots, 1, 0);
        this.workers = Executors.newFixedThreadPool(options.workers(), r -> {
            Thread t = new Thread(r, "rpcrdma-server-worker");
            t.setDaemon(true);
            return t;
        });
        receiveCq.onCompletionLent(this::received);
        sendCq.onCompletionLent(this::sent);
        for (int slot = 0; slot < slots; slot++) {
            repost(slot);
        }
        RnicListener bound;
        try {
            bound = rnic.listen(address, this::onConnectRequest);
        } catch (Exception e) { // a bind's failure comes as the checked BindException, thrown unchecked
            // A port in use: what was taken above is given back before the caller hears of it.
            closed = true;
            workers.shutdownNow();
            try {
                srq.destroy();
                receives.deregister();
                sendCq.destroy();
                receiveCq.destroy();
                pd.destroy();
            } finally {
                memory.release();
            }
            throw new RpcException("cannot listen on " + address.getHostString() + " port " + address.getPort()
                    + " for RPC-over-RDMA: " + Failures.describe(e), e);
        }
        this.listener = bound;
    }

    /**
     * Listens on {@code address} (NFS over RDMA: port 20049) and serves each accepted connection's
     * calls with {@code handler}. The RNIC stays the caller's.
     *
     * @throws RpcException when the address cannot be bound (a port in use, say)
     */
    public static RpcRdmaServer listen(Rnic rnic, InetSocketAddress address, RpcHandler handler, Options options) {
        return new RpcRdmaServer(rnic, address, handler, options);
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    public Options options() {
        return options;
    }

    /** Connections accepted and not yet gone. */
    public int connections() {
        return connections.size();
    }

    /** Calls received and not yet answered or dropped, over all connections. */
    public int callsInProgress() {
        int n = 0;
        for (RpcRdmaConnection c : connections.values()) {
            n += c.callsInProgress();
        }
        return n;
    }

    /** Memory regions the server holds for calls (RDMA Read sinks, RDMA Write sources, Sends). */
    public int regionsHeld() {
        return regionsHeld.get();
    }

    /** Calls received beyond the credits granted, answered with SYSTEM_ERR. */
    public long excessCalls() {
        return excessCalls.get();
    }

    /** RDMA_ERROR replies sent. */
    public long errorsSent() {
        return errorsSent.get();
    }

    /**
     * Messages dropped without an answer: shorter than a header, an RDMA_ERROR or RDMA_DONE from a
     * client, or a call whose connection went.
     */
    public long dropped() {
        return dropped.get();
    }

    /** Answers posted to a send queue: replies, SYSTEM_ERR answers and RDMA_ERRORs. */
    public long repliesPosted() {
        return repliesPosted.get();
    }

    /** Connection requests rejected because {@link Options#maxConnections} were up. */
    public long refusedConnections() {
        return refused.get();
    }

    private void onConnectRequest(ConnectRequest request) {
        PrivateData client = PrivateData.decode(request.privateData());
        byte[] ours = new PrivateData(1, false, options.inlineSize(), options.inlineSize()).encode();
        QueuePair qp;
        synchronized (connections) {
            if (closed || connections.size() >= options.maxConnections()) {
                refused.incrementAndGet();
                request.reject(ours);
                return;
            }
            // Each call may hold a Read per segment, a Write per segment and its Send in the queue.
            qp = rnic.createQp(new QpConfig(pd, sendCq, receiveCq).srq(srq)
                    .sendDepth(options.credits() * (3 * options.maxSegments() + 1) + options.credits())
                    .ird(16).ord(16));
            RpcRdmaConnection connection = new RpcRdmaConnection(this, qp, client);
            connections.put(qp, connection);
            qp.closeFuture().thenRun(connection::closed);
        }
        request.accept(qp, ours).whenComplete((q, e) -> {
            if (e != null) {
                qp.modifyToError();
            }
        });
    }

    // On a queue pair's event loop.
    private void received(WorkCompletion wc) {
        int slot = (int) wc.workRequestId();
        RpcRdmaConnection connection = connections.get(wc.queuePair());
        ByteBuf message = null;
        if (wc.status() == WcStatus.SUCCESS && connection != null) {
            int length = (int) wc.byteLength();
            message = PooledByteBufAllocator.DEFAULT.heapBuffer(length);
            message.writeBytes(receives.buffer(), slot * options.inlineSize(), length);
        }
        repost(slot);
        if (connection == null) {
            return;
        }
        if (message == null) {
            connection.failed();
            return;
        }
        connection.received(message);
    }

    // On a queue pair's event loop.
    private void sent(WorkCompletion wc) {
        RpcRdmaConnection connection = connections.get(wc.queuePair());
        if (connection != null) {
            connection.sent(wc.workRequestId(), wc.status());
        }
    }

    private void repost(int slot) {
        if (closed) {
            return;
        }
        try {
            srq.postReceive(new ReceiveWorkRequest(slot,
                    new Sge(receives, (long) slot * options.inlineSize(), options.inlineSize())));
        } catch (IllegalStateException e) {
            // destroyed while closing
        }
    }

    RpcHandler handler() {
        return handler;
    }

    ExecutorService workers() {
        return workers;
    }

    ProtectionDomain pd() {
        return pd;
    }

    MemoryRegion register(ByteBuf buffer, int access) {
        MemoryRegion region = pd.register(buffer, access);
        regionsHeld.incrementAndGet();
        return region;
    }

    void deregister(MemoryRegion region) {
        region.deregister();
        regionsHeld.decrementAndGet();
    }

    void excessCall() {
        excessCalls.incrementAndGet();
    }

    void errorSent() {
        errorsSent.incrementAndGet();
    }

    void droppedOne() {
        dropped.incrementAndGet();
    }

    void replyPosted() {
        repliesPosted.incrementAndGet();
    }

    /** The connection is down and its calls released: the queue pair goes. */
    void gone(RpcRdmaConnection connection) {
        connections.remove(connection.queuePair());
        connection.queuePair().destroy();
    }

    /**
     * Stops listening, closes every connection (their calls dropped), waits up to 5 s for them to
     * go, and frees the receive queue, completion queues and domain.
     */
    @Override
    public void close() {
        synchronized (connections) {
            closed = true;
        }
        listener.close();
        List<CompletableFuture<QueuePair>> down = new ArrayList<>();
        for (RpcRdmaConnection c : connections.values()) {
            down.add(c.queuePair().modifyToError());
        }
        try {
            CompletableFuture.allOf(down.toArray(new CompletableFuture<?>[0])).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            // the RNIC's close ends what is left
        }
        workers.shutdown();
        try {
            workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (RpcRdmaConnection c : connections.values()) {
            c.closed();
        }
        try {
            srq.destroy();
            receives.deregister();
            sendCq.destroy();
            receiveCq.destroy();
            pd.destroy();
        } catch (IllegalStateException e) {
            // a queue pair or a handler that outlived the waits above: the RNIC's close ends it
        } finally {
            receives.buffer().release();
        }
    }
}
