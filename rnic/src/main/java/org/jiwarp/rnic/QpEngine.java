package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.DdpException;
import org.jiwarp.ddp.DdpSegmenter;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.rdmap.InboundReads;
import org.jiwarp.rdmap.OutboundReads;
import org.jiwarp.rdmap.RdmapException;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * The engine of one queue pair: the last handler of its connection's pipeline, above MPA. It turns
 * posted work into DDP segments (RFC 5041 section 5) and RDMAP messages (RFC 5040 section 4), and
 * inbound ULPDUs into placement and completions, with the checks of RFC 5041 section 7 and RFC 5040
 * section 7: any failure becomes exactly one Terminate, the connection closes, and outstanding work
 * completes in flush error.
 *
 * <p>Everything here runs on the connection's event loop. Send-queue completions are reported in
 * posting order (RFC 5040 section 5.5), so a Send posted after a Read completes after it.
 */
final class QpEngine extends ChannelInboundHandlerAdapter {

    /**
     * A posted send work request and its progress. A signaled Write or Send listens for its last
     * segment to reach TCP; unsignaled ones retire silently with the next completion after them, or
     * with the end of their batch (one listener per batch, not per message).
     */
    static final class SendSlot implements ChannelFutureListener {
        final long id;
        final SendWorkRequest.Opcode opcode;
        final Sge[] sgl;
        final long remoteAddress;
        final int rkey;
        final int invalidateStag;
        final boolean signaled;
        final boolean fence;
        final boolean solicited;
        final long length;
        boolean done;
        WcStatus status = WcStatus.SUCCESS;
        TerminateError error;
        QpEngine engine;

        SendSlot(SendWorkRequest wr) {
            this.id = wr.id();
            this.opcode = wr.opcode();
            this.sgl = wr.sglUnsafe(); // immutable once the request is built
            this.remoteAddress = wr.remoteAddress();
            this.rkey = wr.rkey();
            this.invalidateStag = wr.invalidateStag();
            this.signaled = wr.signaled();
            this.fence = wr.isFence();
            this.solicited = wr.isSolicited();
            this.length = wr.length();
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            engine.written(this, future.isSuccess());
        }
    }

    /** An inbound RDMA Read being answered. */
    private record ReadResponse(TaggedBuffer source, long sourceOffset, long length, int sinkStag, long sinkOffset) {
    }

    private final QueuePair qp;
    private final StagTable stags;
    private final int pd;
    private final CompletableFuture<QueuePair> established = new CompletableFuture<>();
    private final ArrayDeque<SendSlot> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<SendSlot> waiting = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private MpaParameters parameters;
    private UntaggedQueue receives;
    private OutboundReads outboundReads;
    private InboundReads<ReadResponse> inboundReads;
    private long sendMsn = 1;
    private long readRequestMsn = 1;
    private long terminateMsn = 1;
    private long expectedReadRequestMsn = 1;
    private boolean flushNeeded;
    /** Inside a read batch: what the inbound ULPDUs cause (Read Responses, reposted work) flushes once, at its end. */
    private boolean reading;
    private final ChannelFutureListener readResponseWritten = future -> inboundReads.finishCurrent();

    QpEngine(QueuePair qp, StagTable stags) {
        this.qp = qp;
        this.stags = stags;
        this.pd = qp.pd().id();
        this.receives = new UntaggedQueue(DdpHeaders.QN_SEND, qp.config().receiveDepth());
    }

    CompletableFuture<QueuePair> established() {
        return established;
    }

    MpaParameters parameters() {
        return parameters;
    }

    Channel channel() {
        return ctx == null ? null : ctx.channel();
    }

    boolean inEventLoop() {
        return ctx.executor().inEventLoop();
    }

    void execute(Runnable task) {
        if (ctx.executor().inEventLoop()) {
            task.run();
        } else {
            ctx.executor().execute(task);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof MpaEstablishedEvent) {
            start(((MpaEstablishedEvent) evt).parameters());
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void start(MpaParameters parameters) {
        this.parameters = parameters;
        this.outboundReads = new OutboundReads(Math.max(parameters.ord(), 0));
        this.inboundReads = new InboundReads<>(Math.max(parameters.ird(), 0));
        if (parameters.rtr() == RtrType.READ) {
            // RFC 6581: the zero-length Read RTR used MSN 1 of queue 1.
            if (parameters.initiator()) {
                readRequestMsn = 2;
            } else {
                expectedReadRequestMsn = 2;
            }
        }
        qp.attach(this);
        qp.state(QpState.RTS);
        established.complete(qp);
    }

    // ---------------------------------------------------------------------------------------------
    // Posting

    /** Posts a receive from any thread (the queue takes posts concurrently with placement). */
    void postReceive(ReceiveBuffer buffer) {
        QpState state = qp.state();
        if (state == QpState.ERROR || state == QpState.TERMINATE || !receives.post(buffer)) {
            flushReceive(buffer);
            return;
        }
        if (qp.state() == QpState.ERROR) {
            // Raced with the way down: flush whatever the event loop's flush missed.
            execute(this::flushReceives);
        }
    }

    private void flushReceive(ReceiveBuffer buffer) {
        qp.receiveCompleted();
        qp.receiveCq().add(new WorkCompletion().set(buffer.workRequestId(), WcStatus.WORK_REQUEST_FLUSH_ERROR,
                WcOpcode.RECEIVE, 0, qp, 0, false, null));
    }

    private void flushReceives() {
        for (ReceiveBuffer buffer : receives.flush()) {
            flushReceive(buffer);
        }
    }

    void post(SendSlot slot) {
        enqueue(slot);
        issueWaiting();
        flushIfNeeded();
    }

    /** A chain of work requests ({@code ibv_post_send} with a list): one flush for all of them. */
    void post(SendSlot[] slots, int count) {
        for (int i = 0; i < count; i++) {
            enqueue(slots[i]);
        }
        issueWaiting();
        flushIfNeeded();
    }

    private void enqueue(SendSlot slot) {
        slot.engine = this;
        sendQueue.addLast(slot);
        if (qp.state() != QpState.RTS) {
            slot.done = true;
            slot.status = WcStatus.WORK_REQUEST_FLUSH_ERROR;
            reportInOrder();
            return;
        }
        waiting.addLast(slot);
    }

    private void issueWaiting() {
        SendSlot unsignaled = null;
        while (!waiting.isEmpty() && qp.state() == QpState.RTS) {
            SendSlot slot = waiting.peekFirst();
            // RFC 5040 section 5.5: a fenced operation waits for every earlier RDMA Read to complete.
            if (slot.fence && outboundReads.outstanding() > 0) {
                break;
            }
            // RFC 5040 section 5.2: no more Read Requests outstanding than the ORD.
            if (slot.opcode == SendWorkRequest.Opcode.RDMA_READ && !outboundReads.hasCredit()) {
                break;
            }
            waiting.pollFirst();
            issue(slot);
            if (slot.opcode != SendWorkRequest.Opcode.RDMA_READ) {
                // The batch's last Write or Send (a Read after it may fail, so it cannot retire it).
                unsignaled = !slot.done && !slot.signaled ? slot : null;
            }
        }
        if (unsignaled != null) {
            // The batch's last Write or Send is unsignaled: one empty write below the framer (nothing
            // goes on the wire) tells when it and those before it have reached TCP, and retires them.
            ctx.pipeline().firstContext().write(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(unsignaled);
        }
    }

    private void issue(SendSlot slot) {
        if (slot.opcode == SendWorkRequest.Opcode.RDMA_READ) {
            issueRead(slot);
            return;
        }
        // One SGE (the usual case) is read in place; several are gathered into a composite.
        ByteBuf gathered = null;
        ByteBuf source;
        int index;
        int length;
        try {
            if (slot.sgl.length == 1) {
                Sge sge = slot.sgl[0];
                source = qp.checked(sge, 0).buffer();
                index = (int) sge.offset();
                length = sge.length();
            } else {
                gathered = gather(slot.sgl);
                source = gathered;
                index = gathered.readerIndex();
                length = gathered.readableBytes();
            }
        } catch (IllegalArgumentException e) {
            finish(slot, WcStatus.LOCAL_PROTECTION_ERROR, null);
            return;
        }
        SegmentWriter writer = segmentWriter;
        int inline = qp.config().inlineThreshold();
        try {
            if (slot.opcode == SendWorkRequest.Opcode.RDMA_WRITE) {
                DdpSegmenter.segmentTagged(ctx.alloc(), RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), slot.rkey,
                        slot.remoteAddress, source, index, length, parameters.mulpdu(), inline, writer);
            } else {
                RdmapOpcode opcode = slot.opcode == SendWorkRequest.Opcode.SEND_WITH_INVALIDATE
                        ? (slot.solicited ? RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE : RdmapOpcode.SEND_WITH_INVALIDATE)
                        : (slot.solicited ? RdmapOpcode.SEND_WITH_SE : RdmapOpcode.SEND);
                DdpSegmenter.segmentUntagged(ctx.alloc(), RdmapHeaders.controlByte(opcode),
                        opcode.invalidates() ? slot.invalidateStag : 0, DdpHeaders.QN_SEND, sendMsn++, source, index,
                        length, parameters.mulpdu(), inline, writer);
            }
        } finally {
            if (gathered != null) {
                gathered.release();
            }
        }
        if (slot.signaled) {
            writer.finish().addListener(slot);
        } else {
            writer.finishVoid();
        }
    }

    /**
     * A Write or Send reached TCP: a signaled one, or the last unsignaled one of a batch. A failed
     * write means the connection is going down, which flushes unsignaled work.
     */
    void written(SendSlot slot, boolean success) {
        if (!slot.done && (success || slot.signaled)) {
            finish(slot, success ? WcStatus.SUCCESS : WcStatus.FATAL_ERROR, null);
        }
    }

    /** Writes every segment but the last with the void promise, the last with a real one (or void). */
    private final class SegmentWriter implements Consumer<Object> {
        private Object held;

        @Override
        public void accept(Object segment) {
            if (held != null) {
                ctx.write(held, ctx.voidPromise());
            }
            held = segment;
        }

        ChannelFuture finish() {
            flushNeeded = true;
            ChannelFuture future = ctx.write(held);
            held = null;
            return future;
        }

        void finishVoid() {
            flushNeeded = true;
            ctx.write(held, ctx.voidPromise());
            held = null;
        }
    }

    private final SegmentWriter segmentWriter = new SegmentWriter();

    private void issueRead(SendSlot slot) {
        Sge sink = slot.sgl[0];
        MemoryRegion region = sink.region();
        try {
            qp.checkedSlice(sink, Access.LOCAL_WRITE);
        } catch (IllegalArgumentException e) {
            finish(slot, WcStatus.LOCAL_PROTECTION_ERROR, null);
            return;
        }
        long sinkOffset = region.address() + sink.offset();
        ByteBuf request = DdpSegmenter.flat(ctx.alloc(), DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        DdpHeaders.writeUntagged(request, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, readRequestMsn++, 0);
        ReadRequestHeader.write(request, region.stag(), sinkOffset, sink.length(), slot.rkey, slot.remoteAddress);
        outboundReads.sent(slot, region.stag(), sinkOffset, sink.length());
        ctx.write(request, ctx.voidPromise());
        flushNeeded = true;
    }

    /** The gather list as one buffer of slices of the registered memory (no copy). */
    private ByteBuf gather(Sge[] sgl) {
        if (sgl.length == 1) {
            return qp.checkedSlice(sgl[0], 0).retain();
        }
        CompositeByteBuf message = ctx.alloc().compositeBuffer(Math.max(2, sgl.length));
        try {
            for (Sge sge : sgl) {
                message.addComponent(true, qp.checkedSlice(sge, 0).retain());
            }
        } catch (IllegalArgumentException e) {
            message.release();
            throw e;
        }
        return message;
    }

    private void finish(SendSlot slot, WcStatus status, TerminateError error) {
        slot.done = true;
        slot.status = status;
        slot.error = error;
        if (status == WcStatus.SUCCESS) {
            // Unsignaled Writes and Sends issued before it have reached TCP too (the stream is in
            // order); an unsignaled Read retires with its own response, or with a later Read's.
            boolean read = slot.opcode == SendWorkRequest.Opcode.RDMA_READ;
            for (SendSlot earlier : sendQueue) {
                if (earlier == slot) {
                    break;
                }
                if (!earlier.done && !earlier.signaled && (read || earlier.opcode != SendWorkRequest.Opcode.RDMA_READ)) {
                    earlier.done = true;
                }
            }
        }
        reportInOrder();
    }

    /** Reports finished send work from the head of the queue, in posting order. */
    private void reportInOrder() {
        while (!sendQueue.isEmpty() && sendQueue.peekFirst().done) {
            SendSlot slot = sendQueue.pollFirst();
            qp.sendCompleted();
            if (slot.signaled || slot.status != WcStatus.SUCCESS) {
                qp.sendCq().add(new WorkCompletion().set(slot.id, slot.status, wcOpcode(slot.opcode),
                        slot.status == WcStatus.SUCCESS ? slot.length : 0, qp, 0, false, slot.error));
            }
        }
    }

    static WcOpcode wcOpcode(SendWorkRequest.Opcode opcode) {
        switch (opcode) {
            case RDMA_WRITE:
                return WcOpcode.RDMA_WRITE;
            case RDMA_READ:
                return WcOpcode.RDMA_READ;
            default:
                return WcOpcode.SEND;
        }
    }

    private void flushIfNeeded() {
        if (flushNeeded && !reading) {
            flushNeeded = false;
            ctx.flush();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Receiving

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        reading = true;
        try {
            QpState state = qp.state();
            if (state == QpState.RTS || state == QpState.CLOSING) {
                receive(ulpdu);
            }
        } catch (DdpException e) {
            terminate(e.error(), ulpdu);
        } catch (RdmapException e) {
            terminate(e.error(), ulpdu);
        } finally {
            ulpdu.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        reading = false;
        flushIfNeeded();
        ctx.fireChannelReadComplete();
    }

    private void receive(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        int length = ulpdu.readableBytes();
        if (length < 2) {
            throw new DdpException(TerminateError.DDP_LOCAL_CATASTROPHIC, "ULPDU of " + length + " octets");
        }
        boolean tagged = DdpHeaders.tagged(ulpdu, at);
        // RFC 5041 section 7.2: a DDP version other than 1 is refused, by buffer model.
        if (DdpHeaders.version(ulpdu, at) != DdpHeaders.DDP_VERSION) {
            throw new DdpException(tagged ? TerminateError.DDP_TAGGED_INVALID_VERSION
                    : TerminateError.DDP_UNTAGGED_INVALID_VERSION, "DDP version " + DdpHeaders.version(ulpdu, at));
        }
        int header = tagged ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH;
        if (length < header) {
            throw new DdpException(TerminateError.DDP_LOCAL_CATASTROPHIC, "ULPDU of " + length
                    + " octets is shorter than its DDP header");
        }
        // RFC 5040 section 7.2: RDMAP version 1 only.
        if (RdmapHeaders.version(ulpdu, at) != RdmapHeaders.RDMAP_VERSION) {
            throw new RdmapException(TerminateError.RDMAP_INVALID_VERSION, "RDMAP version "
                    + RdmapHeaders.version(ulpdu, at));
        }
        RdmapOpcode opcode = RdmapHeaders.opcode(ulpdu, at);
        // RFC 5040 section 7.2: reserved and unsupported opcodes, or one on the wrong buffer model.
        if (opcode == null || opcode.code() > RdmapOpcode.TERMINATE.code() || opcode.tagged() != tagged) {
            throw new RdmapException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "opcode "
                    + RdmapHeaders.opcodeCode(ulpdu, at) + (tagged ? " tagged" : " untagged"));
        }
        // The payload is read in place: no slice per ULPDU.
        int payload = at + header;
        int payloadLength = length - header;
        boolean last = DdpHeaders.last(ulpdu, at);
        if (tagged) {
            receiveTagged(ulpdu, at, opcode, payload, payloadLength, last);
        } else {
            receiveUntagged(ulpdu, at, opcode, payload, payloadLength, last);
        }
    }

    private void receiveTagged(ByteBuf ulpdu, int at, RdmapOpcode opcode, int payload, int length, boolean last) {
        int stag = DdpHeaders.stag(ulpdu, at);
        long offset = DdpHeaders.taggedOffset(ulpdu, at);
        if (opcode == RdmapOpcode.RDMA_WRITE) {
            TaggedBuffer sink = TaggedPlacement.checkSink(stags, stag, offset, length, pd, Access.REMOTE_WRITE);
            TaggedPlacement.place(sink, offset, ulpdu, payload, length);
            return;
        }
        OutboundReads.Outstanding completed = outboundReads.response(stag, offset, length, last);
        TaggedBuffer sink = TaggedPlacement.checkSink(stags, stag, offset, length, pd, Access.LOCAL_WRITE);
        TaggedPlacement.place(sink, offset, ulpdu, payload, length);
        if (completed != null) {
            finish((SendSlot) completed.context(), WcStatus.SUCCESS, null);
            issueWaiting();
        }
    }

    private void receiveUntagged(ByteBuf ulpdu, int at, RdmapOpcode opcode, int payload, int length,
            boolean last) {
        long qn = DdpHeaders.qn(ulpdu, at);
        long msn = DdpHeaders.msn(ulpdu, at);
        long mo = DdpHeaders.mo(ulpdu, at);
        // RFC 5041 section 7.2 / RFC 5040 section 5.1: RDMAP uses queues 0, 1 and 2.
        if (qn > DdpHeaders.QN_TERMINATE) {
            throw new DdpException(TerminateError.DDP_UNTAGGED_INVALID_QN, "queue number " + qn);
        }
        if (qn != opcode.queueNumber()) {
            throw new RdmapException(TerminateError.RDMAP_UNEXPECTED_OPCODE, opcode.displayName() + " on queue " + qn);
        }
        if (qn == DdpHeaders.QN_SEND) {
            UntaggedQueue.Placement placement = receives.place(msn, mo, last, ulpdu, payload, length);
            if (placement.completed()) {
                int invalidated = 0;
                if (opcode.invalidates()) {
                    invalidated = RdmapHeaders.invalidateStag(ulpdu, at);
                    try {
                        TaggedPlacement.invalidateRemote(stags, invalidated, pd);
                    } catch (DdpException e) {
                        // The receive is used up: it completes in error, then the Terminate goes out.
                        qp.receiveCompleted();
                        qp.receiveCq().add(new WorkCompletion().set(placement.buffer().workRequestId(),
                                WcStatus.LOCAL_QP_OPERATION_ERROR, WcOpcode.RECEIVE, placement.messageLength(), qp,
                                0, opcode.solicitedEvent(), e.error()));
                        throw e;
                    }
                }
                qp.receiveCompleted();
                qp.receiveCq().add(new WorkCompletion().set(placement.buffer().workRequestId(), WcStatus.SUCCESS,
                        WcOpcode.RECEIVE, placement.messageLength(), qp, invalidated, opcode.solicitedEvent(), null));
            }
        } else if (qn == DdpHeaders.QN_READ_REQUEST) {
            receiveReadRequest(msn, mo, last, ulpdu, payload, length);
        } else {
            // RFC 5040 section 4.8: a Terminate is one segment (L set, MO 0), the first on queue 2.
            // A malformed one is not trusted (as Linux siw): just close.
            if (!last || mo != 0 || msn != 1) {
                ctx.close();
                return;
            }
            remoteTerminate(TerminateMessages.read(ulpdu));
        }
    }

    private void receiveReadRequest(long msn, long mo, boolean last, ByteBuf ulpdu, int at, int length) {
        // RFC 5041 section 5.3: messages on a queue arrive in MSN order, each Read Request in one segment.
        if (msn != expectedReadRequestMsn) {
            throw new DdpException(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, "Read Request MSN " + msn
                    + ", expected " + expectedReadRequestMsn);
        }
        if (mo != 0) {
            throw new DdpException(TerminateError.DDP_UNTAGGED_INVALID_MO, "Read Request at MO " + mo);
        }
        if (!last || length != ReadRequestHeader.LENGTH) {
            throw new DdpException(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, "Read Request of "
                    + length + " octets" + (last ? "" : " without L"));
        }
        long size = ReadRequestHeader.readSize(ulpdu, at);
        int sourceStag = ReadRequestHeader.sourceStag(ulpdu, at);
        long sourceOffset = ReadRequestHeader.sourceTaggedOffset(ulpdu, at);
        // IRD first (a DDP queue 1 "no buffer"), then the source STag (RDMAP remote protection).
        inboundReads.checkRoom();
        TaggedBuffer source = TaggedPlacement.checkSource(stags, sourceStag, sourceOffset, size, pd);
        expectedReadRequestMsn++;
        ReadResponse response = new ReadResponse(source, sourceOffset, size, ReadRequestHeader.sinkStag(ulpdu, at),
                ReadRequestHeader.sinkTaggedOffset(ulpdu, at));
        inboundReads.accept(response);
        answer(response);
    }

    /** Sends the whole Read Response; the IRD slot frees when its last segment has gone to TCP. */
    private void answer(ReadResponse response) {
        TaggedBuffer source = response.source();
        DdpSegmenter.segmentTagged(ctx.alloc(), RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE),
                response.sinkStag(), response.sinkOffset(), source.memory(),
                (int) (response.sourceOffset() - source.baseTaggedOffset()), (int) response.length(),
                parameters.mulpdu(), qp.config().inlineThreshold(), segmentWriter);
        SegmentWriter writer = segmentWriter;
        writer.finish().addListener(readResponseWritten);
    }

    // ---------------------------------------------------------------------------------------------
    // Terminate and the way down

    /** A local error: one Terminate (RFC 5040 section 5.6), then the connection closes. */
    private void terminate(TerminateError error, ByteBuf offending) {
        QpState state = qp.state();
        if (state == QpState.TERMINATE || state == QpState.ERROR) {
            return;
        }
        qp.state(QpState.TERMINATE);
        if (offending != null && offending.readableBytes() >= 2 && DdpHeaders.tagged(offending, offending.readerIndex())
                && RdmapHeaders.opcode(offending, offending.readerIndex()) == RdmapOpcode.RDMA_READ_RESPONSE) {
            // The Read whose response failed completes in error itself; the rest is flushed on close.
            for (Object read : outboundReads.flush()) {
                SendSlot slot = (SendSlot) read;
                if (!slot.done) {
                    finish(slot, WcStatus.LOCAL_QP_OPERATION_ERROR, error);
                    break;
                }
            }
        }
        ByteBuf message = TerminateMessages.build(ctx.alloc(), error, terminateMsn++, offending);
        ctx.writeAndFlush(message).addListener((ChannelFutureListener) future -> {
            if (future.isSuccess()) {
                qp.terminateSent(error);
            }
            closeAfterTerminate();
        });
    }

    /**
     * Half-closes after a Terminate and reads (discarding) until the peer closes too, or a second
     * passes: closing at once could reset the connection under the peer's own writes and lose the
     * Terminate before the peer has read it.
     */
    private void closeAfterTerminate() {
        Channel channel = ctx.channel();
        if (channel instanceof io.netty.channel.socket.DuplexChannel && channel.isActive()) {
            ((io.netty.channel.socket.DuplexChannel) channel).shutdownOutput();
            ctx.executor().schedule(() -> ctx.close(), 1, java.util.concurrent.TimeUnit.SECONDS);
        } else {
            ctx.close();
        }
    }

    private void remoteTerminate(TerminateMessages.Received received) {
        if (qp.state() == QpState.TERMINATE || qp.state() == QpState.ERROR) {
            return;
        }
        qp.state(QpState.TERMINATE);
        qp.terminateReceived(received);
        // The oldest unfinished send work carries the peer's error; the rest is flushed on close.
        for (SendSlot slot : sendQueue) {
            if (!slot.done) {
                TerminateError error = received == null ? null : received.error();
                slot.done = true;
                slot.status = error != null && error.layer() != TerminateLayer.LLP && error.errorType() == 1
                        ? WcStatus.REMOTE_ACCESS_ERROR : WcStatus.REMOTE_OPERATION_ERROR;
                slot.error = error;
                break;
            }
        }
        reportInOrder();
        ctx.close();
    }

    /** Stops issuing work and closes the connection once what was issued has gone out. */
    void disconnect() {
        if (qp.state() == QpState.RTS) {
            qp.state(QpState.CLOSING);
        }
        // An empty write at the head of the pipeline (below the FPDU framer, so nothing goes on the
        // wire) completes once everything written before it has gone to TCP; then close. A
        // connection that is already gone has nothing left to send (and may have no handlers left).
        ChannelHandlerContext first = ctx.pipeline().firstContext();
        if (first == null || !ctx.channel().isActive()) {
            ctx.channel().close();
            return;
        }
        first.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof MpaException && ((MpaException) cause).error() != null && parameters != null) {
            // An FPDU failed its CRC or marker check: report it at the LLP layer, carrying nothing.
            terminate(((MpaException) cause).error(), null);
        } else if (!established.isDone()) {
            established.completeExceptionally(cause);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!established.isDone()) {
            established.completeExceptionally(new MpaException(TerminateError.LLP_CONNECTION_LOST,
                    "the connection closed before it was established"));
        }
        qp.state(QpState.ERROR);
        // Work still outstanding completes in flush error (the verbs' behaviour on the way to ERROR).
        for (SendSlot slot : sendQueue) {
            if (!slot.done) {
                slot.done = true;
                slot.status = WcStatus.WORK_REQUEST_FLUSH_ERROR;
            }
        }
        waiting.clear();
        if (outboundReads != null) {
            outboundReads.flush();
        }
        if (inboundReads != null) {
            inboundReads.clear();
        }
        reportInOrder();
        flushReceives();
        qp.toError();
        ctx.fireChannelInactive();
    }
}
