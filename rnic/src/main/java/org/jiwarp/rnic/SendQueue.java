package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayDeque;
import org.jiwarp.rdmap.OutboundReads;
import org.jiwarp.rdmap.RdmapTransmitter;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * A connected queue pair's send queue (siw's transmit side, above RDMAP): issues posted work to the
 * {@link RdmapTransmitter} in posting order, holds back fenced work and Reads beyond the ORD (RFC
 * 5040 sections 5.2 and 5.5), and reports completions strictly in posting order (section 5.5), so a
 * Send posted after a Read completes after it.
 *
 * <p>A signaled Write or Send completes once its last segment has reached TCP; unsignaled ones
 * retire silently with the next completion after them, or with the end of their batch (one
 * listener per batch, not per message). Everything here runs on the connection's event loop.
 */
final class SendQueue {

    /** A posted send work request and its progress. */
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
        /** RFC 7306: Immediate Data's 8 octets or an atomic's operands; {@code null} for the other opcodes. */
        final Operands operands;
        /** The value an atomic found (reported in its completion). */
        long original;
        boolean done;
        WcStatus status = WcStatus.SUCCESS;
        TerminateError error;
        SendQueue queue;
        /** The prepared request this slot belongs to, told when the slot leaves the queue; or {@code null}. */
        final PreparedSend prepared;

        SendSlot(SendWorkRequest wr) {
            this(wr, null);
        }

        SendSlot(SendWorkRequest wr, PreparedSend prepared) {
            this.prepared = prepared;
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
            // Only RFC 7306 work carries operands: the other slots stay small (one is made per post).
            this.operands = wr.immediateData() == 0 && wr.data() == 0 && wr.dataMask() == 0 && wr.compareData() == 0
                    && wr.compareMask() == 0 ? null : new Operands(wr.immediateData(), wr.data(), wr.dataMask(),
                    wr.compareData(), wr.compareMask());
        }

        /** The RFC 7306 operands, zeros when the request has none. */
        Operands operands() {
            return operands == null ? Operands.NONE : operands;
        }

        /** RFC 7306 operands of a work request (section 4: Immediate Data; section 5: the atomic's fields). */
        record Operands(long immediateData, long data, long dataMask, long compareData, long compareMask) {
            static final Operands NONE = new Operands(0, 0, 0, 0, 0);
        }

        /** How many times a prepared request's slot was posted: a late listener of an earlier post is ignored. */
        int generation;

        /** Ready to be posted again (a prepared request's slot). */
        void reset() {
            generation++;
            done = false;
            status = WcStatus.SUCCESS;
            error = null;
            original = 0;
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            queue.written(this, future.isSuccess());
        }
    }

    private final ChannelHandlerContext ctx;
    private final RdmapTransmitter transmitter;
    private final OutboundReads outboundReads;
    private final Completions completions;
    private final ProtectionDomain pd;
    private final QpStateMachine state;
    /** Whether the peer implements RFC 7306 ({@link QpConfig#rfc7306}). */
    private final boolean rfc7306;
    /**
     * Strict mode's report of a local error building an outgoing request (RFC 5040 section 7.1 rule
     * 1: a Terminate "sent instead of the request"), or {@code null}: verbs behaviour, the work
     * request completes in error and the queue pair goes on.
     */
    private final java.util.function.Consumer<TerminateError> localError;
    /** The Request Identifier of the next Atomic Request. */
    private int atomicRequestId;
    private final ArrayDeque<SendSlot> posted = new ArrayDeque<>();
    private final ArrayDeque<SendSlot> waiting = new ArrayDeque<>();

    SendQueue(ChannelHandlerContext ctx, RdmapTransmitter transmitter, OutboundReads outboundReads,
            Completions completions, ProtectionDomain pd, QpStateMachine state, boolean rfc7306) {
        this(ctx, transmitter, outboundReads, completions, pd, state, rfc7306, null);
    }

    SendQueue(ChannelHandlerContext ctx, RdmapTransmitter transmitter, OutboundReads outboundReads,
            Completions completions, ProtectionDomain pd, QpStateMachine state, boolean rfc7306,
            java.util.function.Consumer<TerminateError> localError) {
        this.localError = localError;
        this.ctx = ctx;
        this.transmitter = transmitter;
        this.outboundReads = outboundReads;
        this.completions = completions;
        this.pd = pd;
        this.state = state;
        this.rfc7306 = rfc7306;
    }

    /** Posts {@code count} slots in order; the caller flushes. */
    void post(SendSlot[] slots, int count) {
        for (int i = 0; i < count; i++) {
            enqueue(slots[i]);
        }
        issueWaiting();
    }

    void post(SendSlot slot) {
        enqueue(slot);
        issueWaiting();
    }

    private void enqueue(SendSlot slot) {
        slot.queue = this;
        posted.addLast(slot);
        if (state.state() != QpState.RTS) {
            // Posted in any other state: flushed at once (in posting order behind what is still out).
            slot.done = true;
            slot.status = WcStatus.WORK_REQUEST_FLUSH_ERROR;
            reportInOrder();
            return;
        }
        waiting.addLast(slot);
    }

    /** Issues waiting work as far as fences and the ORD allow. */
    void issueWaiting() {
        SendSlot unsignaled = null;
        while (!waiting.isEmpty() && state.state() == QpState.RTS) {
            SendSlot slot = waiting.peekFirst();
            // RFC 5040 section 5.5: a fenced operation waits for every earlier RDMA Read to complete.
            if (slot.fence && outboundReads.outstanding() > 0) {
                break;
            }
            // RFC 5040 section 5.2, RFC 7306 section 5.4: no more Read and Atomic Requests outstanding than the ORD.
            if (slot.opcode.awaitsResponse() && !outboundReads.hasCredit()) {
                break;
            }
            waiting.pollFirst();
            issue(slot);
            if (!slot.opcode.awaitsResponse() && !slot.done) {
                // The batch's last Write or Send that went out (a Read after it may fail, so it cannot
                // retire it; one that failed its local checks went nowhere and retires nothing).
                unsignaled = slot.signaled ? null : slot;
            }
        }
        if (unsignaled != null) {
            // The batch's last Write or Send is unsignaled: one empty write below the framer (nothing
            // goes on the wire) tells when it and those before it have reached TCP, and retires them.
            ChannelFuture reached = ctx.pipeline().firstContext().write(Unpooled.EMPTY_BUFFER);
            if (unsignaled.prepared == null) {
                reached.addListener(unsignaled);
            } else {
                // A prepared slot may retire earlier (with a later completion) and be posted again
                // before this fires: the listener must know which post it belongs to.
                SendSlot slot = unsignaled;
                int generation = slot.generation;
                reached.addListener(future -> {
                    if (slot.generation == generation) {
                        written(slot, future.isSuccess());
                    }
                });
            }
        }
    }

    private void issue(SendSlot slot) {
        if (slot.opcode == SendWorkRequest.Opcode.RDMA_READ) {
            issueRead(slot);
            return;
        }
        if (slot.opcode.atomic() || slot.opcode == SendWorkRequest.Opcode.IMMEDIATE_DATA) {
            issueRfc7306(slot);
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
                source = LocalAccess.checked(sge, pd, 0).buffer();
                index = (int) sge.offset();
                length = sge.length();
            } else {
                gathered = gather(slot.sgl);
                source = gathered;
                index = gathered.readerIndex();
                length = gathered.readableBytes();
            }
        } catch (IllegalArgumentException e) {
            failedBuilding(slot);
            return;
        }
        ChannelFuture written;
        try {
            written = slot.opcode == SendWorkRequest.Opcode.RDMA_WRITE
                    ? transmitter.write(slot.rkey, slot.remoteAddress, source, index, length, slot.signaled)
                    : transmitter.send(slot.solicited, slot.opcode == SendWorkRequest.Opcode.SEND_WITH_INVALIDATE,
                            slot.invalidateStag, source, index, length, slot.signaled);
        } finally {
            if (gathered != null) {
                gathered.release();
            }
        }
        if (written != null) {
            written.addListener(slot);
        }
    }

    private void issueRead(SendSlot slot) {
        Sge sink = slot.sgl[0];
        MemoryRegion region = sink.region();
        try {
            LocalAccess.checked(sink, pd, Access.LOCAL_WRITE);
        } catch (IllegalArgumentException e) {
            failedBuilding(slot);
            return;
        }
        long sinkOffset = region.address() + sink.offset();
        transmitter.readRequest(region.stag(), sinkOffset, sink.length(), slot.rkey, slot.remoteAddress);
        outboundReads.sent(slot, region.stag(), sinkOffset, sink.length());
    }

    /**
     * Immediate Data or an atomic (RFC 7306), only to a peer that implements it; the atomic's
     * result entry must be locally writable.
     */
    private void issueRfc7306(SendSlot slot) {
        if (!rfc7306) {
            finish(slot, WcStatus.LOCAL_QP_OPERATION_ERROR, null);
            return;
        }
        if (slot.opcode == SendWorkRequest.Opcode.IMMEDIATE_DATA) {
            ChannelFuture written = transmitter.immediateData(slot.solicited, slot.operands().immediateData(), slot.signaled);
            if (written != null) {
                written.addListener(slot);
            }
            return;
        }
        try {
            LocalAccess.checked(slot.sgl[0], pd, Access.LOCAL_WRITE);
        } catch (IllegalArgumentException e) {
            failedBuilding(slot);
            return;
        }
        int requestId = atomicRequestId++;
        transmitter.atomicRequest(AtomicOperations.wireCode(slot.opcode), requestId, slot.rkey, slot.remoteAddress,
                slot.operands().data(), slot.operands().dataMask(), slot.operands().compareData(),
                slot.operands().compareMask());
        outboundReads.sentAtomic(slot, requestId);
    }

    /**
     * A local protection error found while building the request (a gather list, Read sink or atomic
     * result entry this queue pair may not use): the work request completes in
     * {@link WcStatus#LOCAL_PROTECTION_ERROR}; in strict mode the peer is told too, with a Terminate
     * RDMAP / Local Catastrophic Error carrying no header, sent instead of the request (RFC 5040
     * section 7.1 rule 1; RFC 7306 section 8.1 for an atomic).
     */
    private void failedBuilding(SendSlot slot) {
        finish(slot, WcStatus.LOCAL_PROTECTION_ERROR, null);
        if (localError != null) {
            localError.accept(TerminateError.RDMAP_LOCAL_CATASTROPHIC);
        }
    }

    /** The Atomic Response arrived: the value before lands in the result entry, and the atomic completes. */
    void atomicCompleted(Object atomic, long original) {
        SendSlot slot = (SendSlot) atomic;
        Sge result = slot.sgl[0];
        try {
            LocalAccess.checked(result, pd, Access.LOCAL_WRITE).buffer().setLong((int) result.offset(), original);
        } catch (IllegalArgumentException e) {
            // Deregistered while the atomic was out.
            finish(slot, WcStatus.LOCAL_PROTECTION_ERROR, null);
            issueWaiting();
            return;
        }
        slot.original = original;
        finish(slot, WcStatus.SUCCESS, null);
        issueWaiting();
    }

    /** The gather list as one buffer of slices of the registered memory (no copy). */
    private ByteBuf gather(Sge[] sgl) {
        CompositeByteBuf message = ctx.alloc().compositeBuffer(Math.max(2, sgl.length));
        try {
            for (Sge sge : sgl) {
                message.addComponent(true, LocalAccess.checkedSlice(sge, pd, 0).retain());
            }
        } catch (IllegalArgumentException e) {
            message.release();
            throw e;
        }
        return message;
    }

    /**
     * A Write or Send reached TCP: a signaled one, or the last unsignaled one of a batch. A failed
     * write means the connection is going down, which flushes unsignaled work.
     */
    private void written(SendSlot slot, boolean success) {
        if (!slot.done && (success || slot.signaled)) {
            finish(slot, success ? WcStatus.SUCCESS : WcStatus.FATAL_ERROR, null);
        }
    }

    /** The Read whose response has been placed completes; work it held back may go. */
    void readCompleted(Object read) {
        finish((SendSlot) read, WcStatus.SUCCESS, null);
        issueWaiting();
    }

    /** A Read or Atomic Response failed its checks: the oldest outstanding request completes in error itself. */
    void readFailed(TerminateError error) {
        for (Object read : outboundReads.flush()) {
            SendSlot slot = (SendSlot) read;
            if (!slot.done) {
                finish(slot, WcStatus.LOCAL_QP_OPERATION_ERROR, error);
                return;
            }
        }
    }

    /** The peer's Terminate: the oldest unfinished work carries its error (RFC 5040 section 5.6). */
    void remoteTerminate(TerminateError error) {
        for (SendSlot slot : posted) {
            if (!slot.done) {
                slot.done = true;
                slot.status = error != null && error.layer() != TerminateLayer.LLP && error.errorType() == 1
                        ? WcStatus.REMOTE_ACCESS_ERROR : WcStatus.REMOTE_OPERATION_ERROR;
                slot.error = error;
                break;
            }
        }
        reportInOrder();
    }

    /** On the way to ERROR: everything still outstanding completes in flush error, once. */
    void flush() {
        for (SendSlot slot : posted) {
            if (!slot.done) {
                slot.done = true;
                slot.status = WcStatus.WORK_REQUEST_FLUSH_ERROR;
            }
        }
        waiting.clear();
        outboundReads.flush();
        reportInOrder();
    }

    private void finish(SendSlot slot, WcStatus status, TerminateError error) {
        slot.done = true;
        slot.status = status;
        slot.error = error;
        if (status == WcStatus.SUCCESS) {
            // Unsignaled Writes and Sends issued before it have reached TCP too (the stream is in
            // order); an unsignaled Read retires with its own response, or with a later Read's.
            boolean read = slot.opcode.awaitsResponse();
            for (SendSlot earlier : posted) {
                if (earlier == slot) {
                    break;
                }
                if (!earlier.done && !earlier.signaled && (read || !earlier.opcode.awaitsResponse())) {
                    earlier.done = true;
                }
            }
        }
        reportInOrder();
    }

    /** Reports finished work from the head of the queue, in posting order. */
    private void reportInOrder() {
        while (!posted.isEmpty() && posted.peekFirst().done) {
            SendSlot slot = posted.pollFirst();
            WcStatus status = slot.status;
            TerminateError error = slot.error;
            if (slot.prepared != null) {
                // Free before its completion shows, so that whoever sees the completion may post it
                // again (even from a completion listener, which resets the slot at once).
                slot.prepared.retired();
            }
            if (slot.signaled || status != WcStatus.SUCCESS) {
                completions.send(slot.id, status, WcOpcode.of(slot.opcode), status == WcStatus.SUCCESS ? slot.length : 0,
                        error, slot.original);
            } else {
                completions.sendRetired();
            }
        }
    }
}
