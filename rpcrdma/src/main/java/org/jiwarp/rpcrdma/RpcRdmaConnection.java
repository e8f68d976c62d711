package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;

/**
 * One accepted connection of an {@link RpcRdmaServer}: its calls from the receive to the reply's
 * Send completion, and the credits they hold (RFC 8166 section 3.3.1).
 *
 * <p>A call runs through: received (a credit taken) - its header checked (an RDMA_ERROR for what
 * section 4.5 names) - its Read chunks pulled with RDMA Read - its RPC message assembled and handed
 * to the handler on a worker - its reply pushed (RDMA Writes into the Write and Reply chunks, the
 * credit given back, the Send) - released on the Send's completion. Receives and completions come
 * on the queue pair's event loop, replies from workers; the state is guarded by this object.
 *
 * <p>At most {@code credits} calls are in service at once, from the pull of their Read chunks to
 * their reply's Send completion; a call that arrives beyond that waits, holding its credit and its
 * inline message only, until a Send completes. So a client that stops reading its socket (its
 * replies wait behind TCP and their Sends do not complete) holds the grant's calls in service,
 * the grant's calls waiting, and at most the grant's excess answers: a bound in calls that does
 * not depend on the send queue's depth.
 */
final class RpcRdmaConnection {

    private static final int KIND_READ = 0;
    private static final int KIND_WRITE = 1;
    private static final int KIND_SEND = 2;

    private final RpcRdmaServer server;
    private final QueuePair qp;
    private final int credits;
    private final int maxSegments;
    private final long maxChunk;
    /** What the client's private data lets this end send inline (RFC 8797 section 4.2). */
    private final int sendThreshold;
    private final boolean remoteInvalidation;
    private final Map<Long, Call> calls = new HashMap<>();
    private long nextCall;
    /** Calls holding a credit: from their receive until their reply is posted. */
    private int outstanding;
    /** SYSTEM_ERR answers to calls beyond the grant whose Send has not completed. */
    private int excessInFlight;
    /** Calls from the pull of their Read chunks to their reply's Send completion; at most {@link #credits}. */
    private int inService;
    /** Calls checked and waiting for a place in service, in arrival order. */
    private final ArrayDeque<Call> waiting = new ArrayDeque<>();
    private boolean closed;

    RpcRdmaConnection(RpcRdmaServer server, QueuePair qp, PrivateData client) {
        this.server = server;
        this.qp = qp;
        this.credits = server.options().credits();
        this.maxSegments = server.options().maxSegments();
        this.maxChunk = server.options().maxChunk();
        this.sendThreshold = PrivateData.sendThreshold(server.options().inlineSize(), client);
        this.remoteInvalidation = client != null && client.remoteInvalidation();
    }

    QueuePair queuePair() {
        return qp;
    }

    synchronized int callsInProgress() {
        return calls.size();
    }

    /** A message arrived (a copy, now this connection's); on the event loop. */
    void received(ByteBuf message) {
        if (message.readableBytes() < RpcRdmaHeader.MIN_LENGTH) {
            message.release(); // RFC 8166 section 4.5: shorter than any header, its xid is not to be trusted
            server.droppedOne();
            return;
        }
        int xid = message.getInt(message.readerIndex());
        int version = message.getInt(message.readerIndex() + 4);
        int procedure = message.getInt(message.readerIndex() + 12);
        if (version == RpcRdmaHeader.VERSION
                && (procedure == RpcRdmaHeader.RDMA_ERROR || procedure == RpcRdmaHeader.RDMA_DONE)) {
            // Never a call: a responder drops an RDMA_ERROR (section 4.2.4) and an RDMA_DONE (section 4.6.2) unanswered.
            message.release();
            server.droppedOne();
            return;
        }
        Call call;
        synchronized (this) {
            if (closed) {
                message.release();
                server.droppedOne();
                return;
            }
            if (outstanding >= credits) {
                // Beyond the grant, which RFC 8166 section 3.3.1 forbids the requester; the answer is this server's.
                message.release();
                server.excessCall();
                if (excessInFlight >= credits) {
                    failed(); // a client that floods on: bounded, it goes
                    return;
                }
                excessInFlight++;
                Call excess = newCall(xid, false);
                excess.excess = true;
                ByteBuf rpc = PooledByteBufAllocator.DEFAULT.heapBuffer(24);
                Rpc.putAcceptedReply(rpc, xid, Rpc.SYSTEM_ERR);
                post(excess, RpcRdmaHeader.message(xid, credits, RpcRdmaHeader.RDMA_MSG, List.of(), List.of(), null),
                        rpc, List.of(), 0);
                return;
            }
            outstanding++;
            call = newCall(xid, true);
        }
        RpcRdmaHeader header;
        try {
            header = RpcRdmaHeader.decode(message);
        } catch (XdrException e) {
            message.release();
            sendError(call, RpcRdmaHeader.ERR_CHUNK); // section 4.5.2: a header that cannot be parsed
            return;
        }
        if (header.version() != RpcRdmaHeader.VERSION) {
            message.release();
            // Section 4.5.1, in the call's own version (section 4.5), naming 1 as the lowest and highest.
            sendError(call, header.version(), RpcRdmaHeader.ERR_VERS);
            return;
        }
        int error = check(header, message.readableBytes());
        if (error != 0) {
            message.release();
            sendError(call, error);
            return;
        }
        call.header = header;
        call.inline = message;
        synchronized (this) {
            if (inService >= credits) {
                waiting.add(call); // until a reply's Send completes
                return;
            }
            enterService(call);
        }
        beginService(call);
    }

    /** Under this object's lock. */
    private void enterService(Call call) {
        call.inService = true;
        inService++;
    }

    /** A call in service: its Read chunks pulled, or straight to the handler without any. */
    private void beginService(Call call) {
        if (call.header.readList().isEmpty()) {
            assemble(call);
        } else {
            pull(call);
        }
    }

    /** 0 when the header is served, else the RDMA_ERROR code that answers it. */
    private int check(RpcRdmaHeader header, int inlineLength) {
        int procedure = header.procedure();
        if (procedure != RpcRdmaHeader.RDMA_MSG && procedure != RpcRdmaHeader.RDMA_NOMSG) {
            // RDMA_MSGP (RFC 8166 section 4.6.1: no longer supported, a responder answers ERR_CHUNK).
            return RpcRdmaHeader.ERR_CHUNK;
        }
        if (header.readList().size() > maxSegments || header.writeList().size() > maxSegments) {
            return RpcRdmaHeader.ERR_CHUNK;
        }
        long total = 0;
        boolean positionZero = false;
        for (ReadSegment read : header.readList()) {
            int position = read.position();
            if (position < 0 || (position & 3) != 0) {
                return RpcRdmaHeader.ERR_CHUNK; // section 3.4.5: an XDR position, a multiple of 4
            }
            if (position == 0) {
                positionZero = true;
            } else if (procedure == RpcRdmaHeader.RDMA_MSG && position > inlineLength) {
                return RpcRdmaHeader.ERR_CHUNK;
            }
            total += Integer.toUnsignedLong(read.segment().length());
        }
        if (total > maxChunk) {
            return RpcRdmaHeader.ERR_CHUNK;
        }
        // Section 3.5.3: RDMA_NOMSG carries the whole call in a Position Zero Read chunk; RDMA_MSG inline.
        if (positionZero != (procedure == RpcRdmaHeader.RDMA_NOMSG)) {
            return RpcRdmaHeader.ERR_CHUNK;
        }
        for (List<RdmaSegment> chunk : header.writeList()) {
            if (chunk.isEmpty() || chunk.size() > maxSegments || RpcRdmaHeader.chunkLength(chunk) > maxChunk) {
                return RpcRdmaHeader.ERR_CHUNK;
            }
        }
        List<RdmaSegment> reply = header.replyChunk();
        if (reply != null && (reply.size() > maxSegments || RpcRdmaHeader.chunkLength(reply) > maxChunk)) {
            return RpcRdmaHeader.ERR_CHUNK;
        }
        return 0;
    }

    /** Pulls the call's Read chunks with RDMA Read into one sink, in position order. */
    private void pull(Call call) {
        List<ReadSegment> sorted = new ArrayList<>(call.header.readList());
        sorted.sort(Comparator.comparingInt(ReadSegment::position)); // stable: a chunk's segments keep their order
        long total = 0;
        int reads = 0;
        for (ReadSegment read : sorted) {
            total += Integer.toUnsignedLong(read.segment().length());
            reads += read.segment().length() == 0 ? 0 : 1;
        }
        ByteBuf sink = PooledByteBufAllocator.DEFAULT.directBuffer((int) total).writerIndex((int) total);
        List<SendWorkRequest> wrs = new ArrayList<>(reads);
        synchronized (this) {
            call.buffers.add(sink);
            if (closed) {
                release(call);
                return;
            }
            call.sorted = sorted;
            call.sink = sink;
            call.readsPending = reads;
            if (reads > 0) {
                MemoryRegion region = server.register(sink, Access.LOCAL_WRITE);
                call.regions.add(region);
                long offset = 0;
                for (ReadSegment read : sorted) {
                    RdmaSegment s = read.segment();
                    if (s.length() != 0) {
                        wrs.add(SendWorkRequest.read(wrId(call, KIND_READ), s.offset(), s.handle(),
                                new Sge(region, offset, s.length())));
                    }
                    offset += Integer.toUnsignedLong(s.length());
                }
            }
        }
        if (reads == 0) {
            assemble(call);
            return;
        }
        try {
            for (SendWorkRequest wr : wrs) {
                qp.postSend(wr);
            }
        } catch (RuntimeException e) {
            failed();
        }
    }

    /**
     * The RPC message as the client meant it (RFC 8166 section 3.5.3): the inline message, or the
     * Position Zero Read chunk's data, with every other Read chunk's data inserted at its position
     * (an offset in that message) followed by its XDR roundup, which the client leaves out
     * (section 3.4.5.2). Then to the handler.
     */
    private void assemble(Call call) {
        RpcRdmaHeader header = call.header;
        List<ReadSegment> sorted = call.sorted == null ? List.of() : call.sorted;
        ByteBuf base;
        int sinkOffset = 0;
        int i = 0;
        if (header.procedure() == RpcRdmaHeader.RDMA_NOMSG) {
            while (i < sorted.size() && sorted.get(i).position() == 0) {
                sinkOffset += sorted.get(i).segment().length();
                i++;
            }
            base = call.sink.slice(0, sinkOffset);
        } else {
            base = call.inline;
        }
        CompositeByteBuf whole = PooledByteBufAllocator.DEFAULT.compositeBuffer(2 + 3 * sorted.size());
        int cursor = 0;
        while (i < sorted.size()) {
            int position = sorted.get(i).position();
            int length = 0;
            while (i < sorted.size() && sorted.get(i).position() == position) {
                length += sorted.get(i).segment().length();
                i++;
            }
            if (position > base.readableBytes()) {
                whole.release();
                sendError(call, RpcRdmaHeader.ERR_CHUNK); // a Read chunk beyond the message it belongs in
                return;
            }
            whole.addComponent(true, base.retainedSlice(base.readerIndex() + cursor, position - cursor));
            whole.addComponent(true, call.sink.retainedSlice(sinkOffset, length));
            if (Xdr.pad(length) != 0) {
                whole.addComponent(true, Unpooled.wrappedBuffer(new byte[Xdr.pad(length)]));
            }
            sinkOffset += length;
            cursor = position;
        }
        whole.addComponent(true, base.retainedSlice(base.readerIndex() + cursor, base.readableBytes() - cursor));
        RpcCall rpcCall;
        try {
            rpcCall = Rpc.getCall(whole);
        } catch (XdrException e) {
            reply(call, RpcReply.garbageArgs());
            return;
        } finally {
            whole.release();
        }
        synchronized (this) {
            if (closed) {
                rpcCall.arguments().release();
                release(call);
                return;
            }
            call.handling = true;
        }
        try {
            server.workers().execute(() -> serve(call, rpcCall));
        } catch (RejectedExecutionException e) {
            rpcCall.arguments().release(); // the server is closing
            synchronized (this) {
                release(call);
            }
        }
    }

    /** On a worker: the handler's answer, or the server's own denial (RFC 5531 section 9). */
    private void serve(Call call, RpcCall rpcCall) {
        RpcReply reply;
        try {
            ByteBuf denied = Rpc.denial(rpcCall);
            if (denied != null) {
                push(call, denied, null);
                return;
            }
            reply = Rpc.answer(server.handler(), rpcCall);
        } finally {
            rpcCall.arguments().release();
        }
        reply(call, reply);
    }

    private void reply(Call call, RpcReply reply) {
        ByteBuf rpc = Unpooled.buffer(64 + (reply.results() == null ? 0 : reply.results().readableBytes()));
        reply.encode(rpc, call.xid);
        if (reply.results() != null) {
            reply.results().release();
        }
        push(call, rpc, reply.ddpData());
    }

    /**
     * Sends the reply {@code rpc} (header and results) with the DDP-eligible {@code ddp} (or null),
     * as RFC 8166 section 3.5 says: {@code ddp} into the first Write chunk, or inline after the
     * results when the call has none; the whole inline when it fits the client's receive size,
     * else into the Reply chunk; RDMA_ERROR ERR_CHUNK when a chunk the reply needs is missing or too
     * small.
     */
    private void push(Call call, ByteBuf rpc, ByteBuf ddp) {
        synchronized (this) {
            call.handling = false;
            if (ddp != null) {
                call.buffers.add(ddp);
            }
            if (closed) {
                rpc.release();
                if (release(call)) {
                    server.droppedOne();
                }
                return;
            }
        }
        RpcRdmaHeader call0 = call.header;
        int ddpLength = ddp == null ? 0 : ddp.readableBytes();
        List<List<RdmaSegment>> writeList = new ArrayList<>(call0.writeList().size());
        List<Push> pushes = new ArrayList<>(2);
        for (int c = 0; c < call0.writeList().size(); c++) {
            List<RdmaSegment> chunk = call0.writeList().get(c);
            if (c == 0 && ddpLength > 0) {
                if (RpcRdmaHeader.chunkLength(chunk) < ddpLength) {
                    rpc.release();
                    sendError(call, RpcRdmaHeader.ERR_CHUNK); // the Write chunk cannot hold the data item
                    return;
                }
                writeList.add(RpcRdmaHeader.written(chunk, ddpLength));
                ByteBuf source = ddp;
                if (!ddp.isDirect() || ddp.nioBufferCount() != 1) {
                    // A region is one run of memory: an item in pieces (or on the heap) is gathered once.
                    source = PooledByteBufAllocator.DEFAULT.directBuffer(ddpLength).writeBytes(ddp, ddp.readerIndex(),
                            ddpLength);
                    synchronized (this) {
                        call.buffers.add(source);
                    }
                }
                pushes.add(new Push(source, chunk));
            } else {
                writeList.add(RpcRdmaHeader.written(chunk, 0)); // section 3.4.6: unused, each segment says 0
            }
        }
        if (ddpLength > 0 && pushes.isEmpty()) {
            rpc.writeBytes(ddp, ddp.readerIndex(), ddpLength);
            rpc.writeZero(Xdr.pad(ddpLength));
        }
        RpcRdmaHeader header = RpcRdmaHeader.message(call.xid, credits, RpcRdmaHeader.RDMA_MSG, List.of(), writeList,
                null);
        ByteBuf inline = rpc;
        if (header.encodedLength() + rpc.readableBytes() > sendThreshold) {
            // Section 3.5.3: a long reply goes in the Reply chunk, the Send carries RDMA_NOMSG.
            List<RdmaSegment> replyChunk = call0.replyChunk();
            if (replyChunk == null || RpcRdmaHeader.chunkLength(replyChunk) < rpc.readableBytes()) {
                rpc.release();
                sendError(call, RpcRdmaHeader.ERR_CHUNK);
                return;
            }
            header = RpcRdmaHeader.message(call.xid, credits, RpcRdmaHeader.RDMA_NOMSG, List.of(), writeList,
                    RpcRdmaHeader.written(replyChunk, rpc.readableBytes()));
            ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(rpc.readableBytes()).writeBytes(rpc);
            rpc.release();
            synchronized (this) {
                call.buffers.add(direct);
            }
            pushes.add(new Push(direct, replyChunk));
            inline = null;
        }
        post(call, header, inline, pushes, remoteInvalidation ? anyHandle(call0) : 0);
    }

    /**
     * A handle of the call's chunks for Send with Invalidate (RFC 8797 section 4.1: the client's
     * private data accepts it, and each such Send invalidates one handle of the call it answers):
     * the first Write chunk's, else the Reply chunk's, else the Read list's; 0 when it has none.
     */
    private static int anyHandle(RpcRdmaHeader header) {
        if (!header.writeList().isEmpty()) {
            return header.writeList().get(0).get(0).handle();
        }
        if (header.replyChunk() != null && !header.replyChunk().isEmpty()) {
            return header.replyChunk().get(0).handle();
        }
        if (!header.readList().isEmpty()) {
            return header.readList().get(0).segment().handle();
        }
        return 0;
    }

    private void sendError(Call call, int error) {
        sendError(call, RpcRdmaHeader.VERSION, error);
    }

    private void sendError(Call call, int version, int error) {
        server.errorSent();
        post(call, RpcRdmaHeader.error(call.xid, version, credits, error), null, List.of(), 0);
    }

    /**
     * Posts the RDMA Writes of {@code pushes} (unsignaled: the Send after them completes after
     * them) and the Send of {@code header} with {@code inline} after it, giving back the call's
     * credit first (the client may send again once it has the reply).
     */
    private void post(Call call, RpcRdmaHeader header, ByteBuf inline, List<Push> pushes, int invalidate) {
        int length = header.encodedLength() + (inline == null ? 0 : inline.readableBytes());
        ByteBuf send = PooledByteBufAllocator.DEFAULT.directBuffer(length);
        header.encode(send);
        if (inline != null) {
            send.writeBytes(inline);
            inline.release();
        }
        List<SendWorkRequest> wrs = new ArrayList<>();
        synchronized (this) {
            call.buffers.add(send);
            if (closed) {
                if (release(call)) {
                    server.droppedOne();
                }
                return;
            }
            for (Push push : pushes) {
                MemoryRegion region = server.register(push.source(), 0);
                call.regions.add(region);
                long offset = 0;
                long left = push.source().readableBytes();
                for (RdmaSegment s : push.chunk()) {
                    int octets = (int) Math.min(left, Integer.toUnsignedLong(s.length()));
                    if (octets == 0) {
                        break;
                    }
                    wrs.add(SendWorkRequest.write(wrId(call, KIND_WRITE), s.offset(), s.handle(),
                            new Sge(region, offset, octets)).unsignaled());
                    offset += octets;
                    left -= octets;
                }
            }
            MemoryRegion region = server.register(send, 0);
            call.regions.add(region);
            wrs.add(invalidate != 0 ? SendWorkRequest.sendWithInvalidate(wrId(call, KIND_SEND), invalidate,
                    Sge.of(region)) : SendWorkRequest.send(wrId(call, KIND_SEND), Sge.of(region)));
            if (call.counted) {
                call.counted = false;
                outstanding--;
            }
        }
        try {
            for (SendWorkRequest wr : wrs) {
                qp.postSend(wr);
            }
            server.replyPosted();
        } catch (RuntimeException e) {
            failed();
        }
    }

    /** A send-queue completion; on the event loop. */
    void sent(long id, WcStatus status) {
        if (status != WcStatus.SUCCESS) {
            failed(); // the call is released once the queue pair is down
            return;
        }
        long callId = id >>> 2;
        int kind = (int) (id & 3);
        if (kind == KIND_READ) {
            Call call;
            synchronized (this) {
                call = calls.get(callId);
                if (call == null || --call.readsPending > 0) {
                    return;
                }
            }
            assemble(call);
        } else if (kind == KIND_SEND) {
            List<Call> admitted = List.of();
            synchronized (this) {
                Call call = calls.get(callId);
                if (call == null) {
                    return;
                }
                if (call.excess) {
                    excessInFlight--;
                }
                release(call);
                while (inService < credits && !waiting.isEmpty()) {
                    if (admitted.isEmpty()) {
                        admitted = new ArrayList<>();
                    }
                    Call next = waiting.poll();
                    enterService(next);
                    admitted.add(next);
                }
            }
            admitted.forEach(this::beginService);
        }
    }

    /** Takes the queue pair down; {@link #closed} follows once its work is flushed. */
    void failed() {
        qp.modifyToError();
    }

    /**
     * The queue pair is down and its work flushed: every call not on a worker is dropped and
     * released now, one on a worker when its handler returns; the queue pair goes.
     */
    void closed() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            waiting.clear();
            for (Call call : new ArrayList<>(calls.values())) {
                if (!call.handling) {
                    server.droppedOne();
                    release(call);
                }
            }
        }
        server.gone(this);
    }

    private Call newCall(int xid, boolean counted) {
        Call call = new Call(nextCall++, xid);
        call.counted = counted;
        calls.put(call.id, call);
        return call;
    }

    /**
     * Frees what {@code call} holds and forgets it; true when it was still held. Under this object's
     * lock. A worker may add a buffer to a call that the connection's close has already released
     * (the close came between its checks), and releases it again after: so this frees whatever the
     * call holds now, each thing once.
     */
    private boolean release(Call call) {
        boolean held = calls.remove(call.id) != null;
        if (call.counted) {
            call.counted = false;
            outstanding--;
        }
        if (call.inService) {
            call.inService = false;
            inService--;
        }
        for (MemoryRegion region : call.regions) {
            server.deregister(region);
        }
        call.regions.clear();
        call.buffers.forEach(ByteBuf::release);
        call.buffers.clear();
        if (call.inline != null) {
            call.inline.release();
            call.inline = null;
        }
        return held;
    }

    private static long wrId(Call call, int kind) {
        return call.id << 2 | kind;
    }

    /** The octets of {@code source} to write across {@code chunk}'s segments. */
    private record Push(ByteBuf source, List<RdmaSegment> chunk) {
    }

    /** One call's state and what it holds; guarded by the connection. */
    private static final class Call {
        final long id;
        final int xid;
        final List<MemoryRegion> regions = new ArrayList<>(3);
        final List<ByteBuf> buffers = new ArrayList<>(3);
        RpcRdmaHeader header;
        ByteBuf inline;
        List<ReadSegment> sorted;
        ByteBuf sink;
        int readsPending;
        boolean counted;
        boolean inService;
        boolean excess;
        boolean handling;

        Call(long id, int xid) {
            this.id = id;
            this.xid = xid;
        }
    }
}
