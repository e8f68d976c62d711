package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * The requester side of RPC-over-RDMA version 1 (RFC 8166) on a jiwarp queue pair: connects with
 * the RFC 8797 private data, keeps {@link Options#credits} receives posted of the inline size,
 * sends each call as RDMA_MSG (or, when it does not fit inline, as RDMA_NOMSG with a Position Zero
 * Read chunk), registers each call's chunks for that call only, and matches replies to calls by
 * xid. Calls in flight never exceed the credits the server granted (section 3.3.1), nor the
 * receives posted. When a reply arrives its chunk handles are invalidated, by the server's Send
 * with Invalidate (RFC 8797 section 4.1: offered in the private data) or locally, and deregistered.
 * Thread-safe: calls may come from several threads at once.
 */
public final class RpcRdmaClient implements RpcTransport {

    /** How the client connects. */
    public record Options(int credits, int inlineSize, boolean remoteInvalidation, Duration firstSendDelay,
            Duration callTimeout) {

        /**
         * 32 credits asked, 4 KiB inline each way, Remote Invalidation offered, 300 ms before the
         * first Send (siw's passive side loses FPDUs that arrive before its queue pair takes the
         * socket over; see the project's siw notes), 60 s for a reply.
         */
        public static Options defaults() {
            return new Options(32, PrivateData.DEFAULT_INLINE, true, Duration.ofMillis(300), Duration.ofSeconds(60));
        }

        public Options remoteInvalidation(boolean offer) {
            return new Options(credits, inlineSize, offer, firstSendDelay, callTimeout);
        }
    }

    private final Rnic rnic;
    private final Options options;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion receives;
    private final MemoryRegion sends;
    private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong remoteInvalidations = new AtomicLong();
    private final AtomicInteger xids = new AtomicInteger((int) System.nanoTime());
    private final PrivateData serverPrivateData;
    private final Object creditLock = new Object();
    private int granted = 1; // one call before the first grant (RFC 8166 section 3.3.3)
    private int inFlight;
    private volatile Throwable broken;

    private RpcRdmaClient(Rnic rnic, Options options, ProtectionDomain pd, CompletionQueue cq, QueuePair qp,
            MemoryRegion receives, MemoryRegion sends, PrivateData serverPrivateData) {
        this.rnic = rnic;
        this.options = options;
        this.pd = pd;
        this.cq = cq;
        this.qp = qp;
        this.receives = receives;
        this.sends = sends;
        this.serverPrivateData = serverPrivateData;
        for (int i = 0; i < options.credits(); i++) {
            freeSendSlots.add(i);
        }
    }

    /**
     * Connects to an RPC-over-RDMA server (NFS: port 20049).
     *
     * @throws RpcException when the connection cannot be made
     */
    public static RpcRdmaClient connect(Rnic rnic, InetSocketAddress server, Options options) {
        ProtectionDomain pd = rnic.allocatePd();
        CompletionQueue cq = rnic.createCq(4 * options.credits() + 16);
        int slotBytes = options.credits() * options.inlineSize();
        MemoryRegion receives = pd.register(PooledByteBufAllocator.DEFAULT.directBuffer(slotBytes).writerIndex(slotBytes),
                Access.LOCAL_WRITE);
        MemoryRegion sends = pd.register(PooledByteBufAllocator.DEFAULT.directBuffer(slotBytes).writerIndex(slotBytes), 0);
        QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(4 * options.credits())
                .receiveDepth(options.credits()).ird(16).ord(16));
        RpcRdmaClient[] self = new RpcRdmaClient[1];
        cq.onCompletion(wc -> self[0].completed(wc));
        for (int i = 0; i < options.credits(); i++) {
            qp.postReceive(new ReceiveWorkRequest(i, new Sge(receives, (long) i * options.inlineSize(), options.inlineSize())));
        }
        byte[] privateData = new PrivateData(1, options.remoteInvalidation(), options.inlineSize(), options.inlineSize())
                .encode();
        try {
            rnic.connect(qp, server, privateData).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new RpcException("cannot connect to " + server.getHostString() + " port " + server.getPort() + ": "
                    + Failures.describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new RpcException("no RDMA connection to " + server.getHostString() + " port " + server.getPort()
                    + " within 30 seconds");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("interrupted while connecting", e);
        }
        PrivateData peer = PrivateData.decode(qp.parameters().peerPrivateData());
        self[0] = new RpcRdmaClient(rnic, options, pd, cq, qp, receives, sends, peer);
        sleep(options.firstSendDelay());
        return self[0];
    }

    /** The server's RFC 8797 private data, or {@code null} when it sent none. */
    public PrivateData serverPrivateData() {
        return serverPrivateData;
    }

    /** The credits the server granted last. */
    public int granted() {
        synchronized (creditLock) {
            return granted;
        }
    }

    /** The inline threshold for what this end sends: the smaller of its own and the server's receive size. */
    public int sendInlineThreshold() {
        return PrivateData.sendThreshold(options.inlineSize(), serverPrivateData);
    }

    /** Replies that came by Send with Invalidate of one of their call's chunk handles. */
    public long remoteInvalidations() {
        return remoteInvalidations.get();
    }

    public QueuePair queuePair() {
        return qp;
    }

    /**
     * Makes a call and waits for its reply; the RPC reply header is not checked here (see
     * {@link Rpc#getAcceptedReply}).
     *
     * @throws RpcException on an RDMA_ERROR reply, a broken connection, or no reply in time
     */
    @Override
    public RpcRdmaReply call(RpcRdmaCall call, AuthSys credential) {
        int xid = xids.incrementAndGet();
        ByteBuf message = Unpooled.buffer(256);
        Rpc.putCall(message, xid, call.program(), call.version(), call.procedure(), credential);
        call.arguments().accept(message);
        List<MemoryRegion> regions = new ArrayList<>(3);
        List<ByteBuf> owned = new ArrayList<>(3);
        Pending p = new Pending(xid);
        int slot = acquire();
        try {
            List<ReadSegment> readList = new ArrayList<>();
            if (call.readChunk() != null && call.readChunk().isReadable()) {
                MemoryRegion region = pd.register(call.readChunk(), Access.REMOTE_READ);
                regions.add(region);
                readList.add(new ReadSegment(message.readableBytes(), segment(region)));
            }
            List<List<RdmaSegment>> writeList = List.of();
            if (call.writeChunk() > 0) {
                p.writeRegion = pd.register(owned(owned, call.writeChunk()), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                regions.add(p.writeRegion);
                writeList = List.of(List.of(segment(p.writeRegion)));
            }
            List<RdmaSegment> replyChunk = null;
            if (call.replyChunk() > 0) {
                p.replyRegion = pd.register(owned(owned, call.replyChunk()), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                regions.add(p.replyRegion);
                replyChunk = List.of(segment(p.replyRegion));
            }
            int procedure = RpcRdmaHeader.RDMA_MSG;
            RpcRdmaHeader header = RpcRdmaHeader.message(xid, options.credits(), procedure, readList, writeList, replyChunk);
            if (header.encodedLength() + message.readableBytes() > sendInlineThreshold()) {
                // A long call: the whole RPC message goes in a Position Zero Read chunk (section 3.5.3).
                if (!readList.isEmpty()) {
                    throw new RpcException("a call with a Read chunk whose inline part exceeds "
                            + sendInlineThreshold() + " octets");
                }
                ByteBuf whole = owned(owned, message.readableBytes()).clear();
                whole.writeBytes(message, message.readerIndex(), message.readableBytes());
                MemoryRegion region = pd.register(whole, Access.REMOTE_READ);
                regions.add(region);
                header = RpcRdmaHeader.message(xid, options.credits(), RpcRdmaHeader.RDMA_NOMSG,
                        List.of(new ReadSegment(0, segment(region))), writeList, replyChunk);
                message.clear();
            }
            ByteBuf out = sends.buffer().slice(slot * options.inlineSize(), options.inlineSize()).clear();
            header.encode(out);
            out.writeBytes(message);
            pending.put(xid, p);
            qp.postSend(SendWorkRequest.send(slot, new Sge(sends, (long) slot * options.inlineSize(), out.readableBytes())));
            RpcRdmaReply reply = await(p);
            if (reply.invalidatedStag() != 0) {
                if (regions.stream().noneMatch(r -> r.stag() == reply.invalidatedStag())) {
                    reply.release();
                    throw new RpcException(String.format("the server's Send with Invalidate names STag 0x%08x, "
                            + "not a handle of the call it answers", reply.invalidatedStag()));
                }
                remoteInvalidations.incrementAndGet();
            }
            if (reply.header().procedure() == RpcRdmaHeader.RDMA_ERROR) {
                reply.release();
                throw new RpcException(reply.header().error() == RpcRdmaHeader.ERR_VERS
                        ? "the server does not speak RPC-over-RDMA version 1 (it speaks " + reply.header().versLow()
                                + " to " + reply.header().versHigh() + ")"
                        : "the server could not process the call's chunks (ERR_CHUNK)");
            }
            return reply;
        } finally {
            pending.remove(xid);
            message.release();
            for (MemoryRegion region : regions) {
                if (region.valid()) {
                    region.invalidate();
                }
                region.deregister();
            }
            owned.forEach(ByteBuf::release);
            release(slot);
        }
    }

    private RpcRdmaReply await(Pending p) {
        try {
            return p.future.get(options.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new RpcException("no reply within " + options.callTimeout().toSeconds() + " seconds (xid 0x"
                    + Integer.toHexString(p.xid) + ")");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RpcException r ? r : new RpcException(Failures.describe(e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("interrupted while waiting for a reply", e);
        }
    }

    // Runs on the queue pair's event loop.
    private void completed(WorkCompletion wc) {
        if (wc.status() != WcStatus.SUCCESS) {
            fail(new RpcException("the connection failed: " + wc.status() + " on " + wc.opcode()));
            return;
        }
        if (wc.opcode() != WcOpcode.RECEIVE) {
            return;
        }
        int slot = (int) wc.workRequestId();
        ByteBuf in = receives.buffer().slice(slot * options.inlineSize(), (int) wc.byteLength());
        RpcRdmaHeader header;
        try {
            header = RpcRdmaHeader.decode(in);
        } catch (XdrException e) {
            repost(slot);
            fail(new RpcException("a malformed RPC-over-RDMA header: " + e.getMessage()));
            return;
        }
        if (header.version() == RpcRdmaHeader.VERSION && (header.procedure() == RpcRdmaHeader.RDMA_MSGP
                || header.procedure() == RpcRdmaHeader.RDMA_DONE)) {
            repost(slot); // RFC 8166 sections 4.6.1 and 4.6.2: a requester drops both unread
            return;
        }
        Pending p = pending.get(header.xid());
        if (p == null) {
            repost(slot);
            return; // a reply to a call that timed out
        }
        synchronized (creditLock) {
            granted = Math.max(1, header.credits());
            creditLock.notifyAll();
        }
        if (header.version() != RpcRdmaHeader.VERSION) {
            repost(slot);
            p.future.completeExceptionally(new RpcException("a reply of RPC-over-RDMA version " + header.version()));
            return;
        }
        try {
            ByteBuf message;
            if (header.procedure() == RpcRdmaHeader.RDMA_NOMSG) {
                if (header.replyChunk() == null || p.replyRegion == null) {
                    throw new RpcException("an RDMA_NOMSG reply to a call that offered no Reply chunk");
                }
                long length = RpcRdmaHeader.chunkLength(header.replyChunk());
                if (length > p.replyRegion.length()) {
                    throw new RpcException("the server reports " + length + " octets in a Reply chunk of "
                            + p.replyRegion.length());
                }
                // The Reply chunk's own buffer, kept past the call (its region is gone by then): no copy.
                message = p.replyRegion.buffer().retainedSlice(0, (int) length);
            } else {
                message = Unpooled.copiedBuffer(in);
            }
            ByteBuf written = Unpooled.EMPTY_BUFFER;
            if (p.writeRegion != null && !header.writeList().isEmpty()) {
                long length = RpcRdmaHeader.chunkLength(header.writeList().get(0));
                if (length > p.writeRegion.length()) {
                    message.release();
                    throw new RpcException("the server reports " + length + " octets in a Write chunk of "
                            + p.writeRegion.length());
                }
                // As the Reply chunk: the data stays where the server's RDMA Write placed it.
                written = p.writeRegion.buffer().retainedSlice(0, (int) length);
            }
            p.future.complete(new RpcRdmaReply(header, message, written, wc.invalidatedStag()));
        } catch (RpcException e) {
            p.future.completeExceptionally(e);
        } finally {
            repost(slot);
        }
    }

    private void repost(int slot) {
        if (broken == null) {
            qp.postReceive(new ReceiveWorkRequest(slot,
                    new Sge(receives, (long) slot * options.inlineSize(), options.inlineSize())));
        }
    }

    private void fail(Throwable cause) {
        broken = cause;
        pending.values().forEach(p -> p.future.completeExceptionally(cause));
        synchronized (creditLock) {
            creditLock.notifyAll();
        }
    }

    private int acquire() {
        synchronized (creditLock) {
            while (inFlight >= Math.min(granted, options.credits()) && broken == null) {
                try {
                    creditLock.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RpcException("interrupted while waiting for a credit", e);
                }
            }
            if (broken != null) {
                throw new RpcException("the connection is broken: " + broken.getMessage(), broken);
            }
            inFlight++;
            return freeSendSlots.removeFirst();
        }
    }

    private void release(int slot) {
        synchronized (creditLock) {
            inFlight--;
            freeSendSlots.addFirst(slot);
            creditLock.notifyAll();
        }
    }

    private static RdmaSegment segment(MemoryRegion region) {
        return new RdmaSegment(region.stag(), (int) region.length(), region.address());
    }

    /** A direct buffer of {@code octets} readable octets that the call owns and releases. */
    private static ByteBuf owned(List<ByteBuf> owned, int octets) {
        ByteBuf buffer = PooledByteBufAllocator.DEFAULT.directBuffer(octets).writerIndex(octets);
        owned.add(buffer);
        return buffer;
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        try {
            qp.disconnect().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            // closing anyway
        }
        try {
            qp.destroy().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            // the region and PD cleanup below may then refuse; the RNIC's close ends it all
        }
        cq.destroy();
        receives.deregister();
        sends.deregister();
        receives.buffer().release();
        sends.buffer().release();
        pd.destroy();
    }

    private static final class Pending {
        final int xid;
        final CompletableFuture<RpcRdmaReply> future = new CompletableFuture<>();
        MemoryRegion writeRegion;
        MemoryRegion replyRegion;

        Pending(int xid) {
            this.xid = xid;
        }
    }
}
