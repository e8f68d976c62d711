package org.jiwarp.rnic.tx;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import org.jiwarp.mpa.FpduCodec;
import org.jiwarp.rdmap.OutboundReads;
import org.jiwarp.rdmap.RdmapTransmitter;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.cm.OctetsToTcp;
import org.jiwarp.rnic.cq.Completions;
import org.jiwarp.rnic.mem.LocalAccess;
import org.jiwarp.rnic.qp.QpStateMachine;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * A connected queue pair's send queue (siw's transmit side, above RDMAP): issues posted work to the
 * {@link RdmapTransmitter} in posting order, holds back fenced work and Reads beyond the ORD (RFC
 * 5040 sections 5.2 and 5.5), and reports completions strictly in posting order (section 5.5), so a
 * Send posted after a Read completes after it.
 *
 * <p>A signaled Write or Send completes once its last segment has reached TCP ({@link
 * WrittenToTcp}, no promise per message); unsignaled ones retire silently with the next completion
 * after them, or with the end of their batch. Everything here runs on the connection's event loop.
 */
public final class SendQueue {

    /** When what this queue issued has reached TCP, which completes it. */
    private final WrittenToTcp toTcp;
    private final ByteBufAllocator alloc;
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
    private final Consumer<TerminateError> localError;
    /** The Request Identifier of the next Atomic Request. */
    private int atomicRequestId;
    private final PostedSlots posted = new PostedSlots();
    private final ArrayDeque<SendSlot> waiting = new ArrayDeque<>();

    public SendQueue(ChannelHandlerContext ctx, FpduCodec codec, OctetsToTcp counter, RdmapTransmitter transmitter, OutboundReads outboundReads,
            Completions completions, ProtectionDomain pd, QpStateMachine state, boolean rfc7306,
            Consumer<TerminateError> localError) {
        this.localError = localError;
        this.toTcp = new WrittenToTcp(ctx, codec, counter, this::written);
        this.alloc = ctx.alloc();
        this.transmitter = transmitter;
        this.outboundReads = outboundReads;
        this.completions = completions;
        this.pd = pd;
        this.state = state;
        this.rfc7306 = rfc7306;
    }

    public void post(SendSlot slot) {
        enqueue(slot);
        issueWaiting();
    }

    /** Queues a slot behind the ones posted before it; {@link #issueWaiting} then issues them. */
    public void enqueue(SendSlot slot) {
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

    /**
     * Issues waiting work as far as fences, the ORD and the connection's writability allow ({@link
     * SegmentWriter#writable}). A connection that takes nothing more holds at most its high water
     * mark plus one message unsent, and waits until it drains (the connection's
     * writability event resumes it): queue pairs sharing an event loop take it in turn.
     */
    public void issueWaiting() {
        while (!waiting.isEmpty() && state.state() == QpState.RTS && transmitter.writable()) {
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
        }
    }

    /** After the connection flushed: see {@link WrittenToTcp#flushed}. */
    public void flushed() {
        toTcp.flushed();
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
                    ? transmitter.write(slot.rkey, slot.remoteAddress, source, index, length, false)
                    : transmitter.send(slot.solicited, slot.opcode == SendWorkRequest.Opcode.SEND_WITH_INVALIDATE,
                            slot.invalidateStag, source, index, length, false);
        } finally {
            if (gathered != null) {
                gathered.release();
            }
        }
        issued(slot, written);
    }

    /** Numbers a Write, Send or Immediate Data that went out ({@link #flushed} covers it). */
    private void issued(SendSlot slot, ChannelFuture written) {
        slot.issued = toTcp.issue(written);
    }

    /** Every Write and Send issued up to {@code upTo} has reached TCP, or the connection failed. */
    private void written(long upTo, boolean success) {
        for (int i = 0; i < posted.size(); i++) {
            SendSlot slot = posted.get(i);
            if (slot.issued > upTo) {
                break;
            }
            if (slot.issued != 0 && !slot.done && (success || slot.signaled)) {
                slot.done = true;
                slot.status = success ? WcStatus.SUCCESS : WcStatus.FATAL_ERROR;
            }
        }
        reportInOrder();
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
            issued(slot, transmitter.immediateData(slot.solicited, slot.operands().immediateData(), false));
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
    public void atomicCompleted(Object atomic, long original) {
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
        CompositeByteBuf message = alloc.compositeBuffer(Math.max(2, sgl.length));
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

    /** The Read whose response has been placed completes; work it held back may go. */
    public void readCompleted(Object read) {
        finish((SendSlot) read, WcStatus.SUCCESS, null);
        issueWaiting();
    }

    /** A Read or Atomic Response failed its checks: the oldest outstanding request completes in error itself. */
    /**
     * A received segment failed its checks: when it was the response to one of this queue's Reads or
     * atomics, that request completes in error itself; the rest is flushed on close.
     */
    public void segmentFailed(TerminateError error, ByteBuf offending) {
        RdmapOpcode opcode = offending != null && offending.readableBytes() >= 2
                ? RdmapHeaders.opcode(offending, offending.readerIndex()) : null;
        if (opcode == RdmapOpcode.RDMA_READ_RESPONSE && DdpHeaders.tagged(offending, offending.readerIndex())
                || opcode == RdmapOpcode.ATOMIC_RESPONSE) {
            readFailed(error);
        }
    }

    public void readFailed(TerminateError error) {
        for (Object read : outboundReads.flush()) {
            SendSlot slot = (SendSlot) read;
            if (!slot.done) {
                finish(slot, WcStatus.LOCAL_QP_OPERATION_ERROR, error);
                return;
            }
        }
    }

    /** The peer's Terminate: the oldest unfinished work carries its error (RFC 5040 section 5.6). */
    public void remoteTerminate(TerminateError error) {
        for (int i = 0; i < posted.size(); i++) {
            SendSlot slot = posted.get(i);
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
    public void flush() {
        for (int i = 0; i < posted.size(); i++) {
            SendSlot slot = posted.get(i);
            if (!slot.done) {
                slot.done = true;
                slot.status = WcStatus.WORK_REQUEST_FLUSH_ERROR;
            }
        }
        waiting.clear();
        toTcp.clear();
        outboundReads.flush();
        reportInOrder();
    }

    private void finish(SendSlot slot, WcStatus status, TerminateError error) {
        slot.done = true;
        slot.status = status;
        slot.error = error;
        // Unsignaled Writes and Sends issued before it have reached TCP too (the stream is in order); an
        // unsignaled Read retires with its own response, or with a later Read's. The head has none (no iterator).
        if (status == WcStatus.SUCCESS && posted.peekFirst() != slot) {
            boolean read = slot.opcode.awaitsResponse();
            for (int i = 0; i < posted.size(); i++) {
                SendSlot earlier = posted.get(i);
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
                slot.prepared.run();
            }
            if (slot.signaled || status != WcStatus.SUCCESS) {
                completions.send(slot.id, status, WcOpcode.of(slot.opcode), status == WcStatus.SUCCESS ? slot.length : 0,
                        error, slot.original);
            } else {
                completions.sendRetired();
            }
            if (slot.prepared == null) {
                completions.recycle(slot);
            }
        }
    }
}
