package org.jiwarp.rnic;

import java.util.concurrent.atomic.AtomicInteger;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A queue pair's two work queues as the completion side sees them: how many work requests each
 * holds (bounded by its depth), and the work completions it reports to its completion queues.
 * Safe from any thread.
 */
final class Completions {

    private final QueuePair qp;
    private final QpConfig config;
    private final AtomicInteger sendOutstanding = new AtomicInteger();
    private final AtomicInteger receiveOutstanding = new AtomicInteger();
    /**
     * Send slots whose completion was reported, linked through {@link SendSlot#nextFree}: taken by
     * posting threads, given back by the event loop, under this queue pair's lock on the list (no
     * array sized by the depth: an idle queue pair holds only the slots it has used).
     */
    private final Object freeLock = new Object();
    private SendSlot freeSlots;
    /**
     * Receive buffers whose completion was reported, taken by posting threads, given back by the
     * event loop (under {@link #freeLock}): a post of a receive allocates nothing in steady state.
     */
    private final java.util.ArrayDeque<ReceiveBuffer> freeReceives = new java.util.ArrayDeque<>(4);
    /** On the event loop only: a failed receive's completion waiting for its Terminate. */
    private FailedReceive failedReceive;

    Completions(QueuePair qp, QpConfig config) {
        this.qp = qp;
        this.config = config;
    }

    /** A send slot for an admitted post of {@code wr}: one given back, or a new one. */
    SendSlot slot(SendWorkRequest wr) {
        SendSlot slot;
        synchronized (freeLock) {
            slot = freeSlots;
            if (slot != null) {
                freeSlots = slot.nextFree;
                slot.nextFree = null;
            }
        }
        return slot != null ? slot.fill(wr) : new SendSlot(wr);
    }

    /**
     * A receive buffer for a post of work request {@code id} of {@code segments} SGEs, its scatter
     * list empty: one given back, or a new one.
     */
    ReceiveBuffer receiveBuffer(long id, int segments) {
        ReceiveBuffer buffer;
        synchronized (freeLock) {
            buffer = freeReceives.pollFirst();
        }
        return (buffer != null ? buffer : new ReceiveBuffer(segments)).repost(id);
    }

    /**
     * A receive completed (and is in no queue): its buffer is given back before its completion shows,
     * so that whoever sees the completion and posts again reuses it.
     */
    private void recycle(ReceiveBuffer buffer) {
        synchronized (freeLock) {
            freeReceives.addFirst(buffer);
        }
    }

    /** A receive completed: its buffer goes back, then its completion is reported. */
    void receiveCompleted(ReceiveBuffer buffer, long length, int invalidatedStag, boolean solicited) {
        long id = buffer.workRequestId();
        recycle(buffer);
        receive(id, WcStatus.SUCCESS, length, invalidatedStag, solicited, null);
    }

    /** A receive used up by Immediate Data: its buffer goes back, then its completion is reported. */
    void receiveImmediateCompleted(ReceiveBuffer buffer, long immediateData, boolean solicited) {
        long id = buffer.workRequestId();
        recycle(buffer);
        receiveImmediate(id, immediateData, solicited);
    }

    /** A slot whose completion was reported and that nothing holds any more. */
    void recycle(SendSlot slot) {
        slot.sgl = null;
        synchronized (freeLock) {
            slot.nextFree = freeSlots;
            freeSlots = slot;
        }
    }

    /** Takes a place on the send queue; {@code ibv_post_send}'s ENOMEM when it is full. */
    void admitSend() {
        if (sendOutstanding.incrementAndGet() > config.sendDepth()) {
            sendOutstanding.decrementAndGet();
            throw new IllegalStateException("the send queue of QP " + qp.number() + " is full (" + config.sendDepth()
                    + ")");
        }
    }

    /** Takes a place on the receive queue. */
    void admitReceive() {
        if (receiveOutstanding.incrementAndGet() > config.receiveDepth()) {
            receiveOutstanding.decrementAndGet();
            throw new IllegalStateException("the receive queue of QP " + qp.number() + " is full ("
                    + config.receiveDepth() + ")");
        }
    }

    /** A send work request retired without a completion (unsignaled, successful). */
    void sendRetired() {
        sendOutstanding.decrementAndGet();
    }

    void send(long id, WcStatus status, WcOpcode opcode, long length, TerminateError error) {
        sendOutstanding.decrementAndGet();
        config.sendCq().add(config.sendCq().entry().set(id, status, opcode, length, qp, 0, false, error));
    }

    void receive(long id, WcStatus status, long length, int invalidatedStag, boolean solicited,
            TerminateError error) {
        receiveOutstanding.decrementAndGet();
        config.receiveCq().add(config.receiveCq().entry().set(id, status, WcOpcode.RECEIVE, length, qp, invalidatedStag,
                solicited, error));
    }

    void send(long id, WcStatus status, WcOpcode opcode, long length, TerminateError error, long value) {
        sendOutstanding.decrementAndGet();
        config.sendCq().add(config.sendCq().entry().set(id, status, opcode, length, qp, 0, false, error)
                .immediateData(value));
    }

    /** A receive used up by an Immediate Data message (RFC 7306 section 6.3). */
    void receiveImmediate(long id, long immediateData, boolean solicited) {
        receiveOutstanding.decrementAndGet();
        config.receiveCq().add(config.receiveCq().entry().set(id, WcStatus.SUCCESS, WcOpcode.RECEIVE_IMMEDIATE_DATA,
                RdmapOpcode.IMMEDIATE_DATA_LENGTH, qp,
                0, solicited, null).immediateData(immediateData));
    }

    /** Completes every receive {@code receives} still holds in flush error. */
    void flushReceives(UntaggedQueue receives) {
        for (ReceiveBuffer buffer : receives.flush()) {
            receiveFlushed(buffer.workRequestId());
        }
    }

    void receiveFlushed(long id) {
        receive(id, WcStatus.WORK_REQUEST_FLUSH_ERROR, 0, 0, false, null);
    }

    /**
     * Holds the completion of a receive used up by a segment that failed, until
     * {@link #releaseFailedReceive()}: the Terminate goes out first, so an application that disconnects
     * on the completion (rping's server does) cannot close the stream before it.
     */
    void holdFailedReceive(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error) {
        failedReceive = new FailedReceive(buffer, length, solicited, error);
    }

    /** Completes the receive {@link #holdFailedReceive} held, if any. */
    void releaseFailedReceive() {
        FailedReceive failed = failedReceive;
        if (failed == null) {
            return;
        }
        failedReceive = null;
        // A receive whose memory went away under it is a local protection error, as in the verbs.
        WcStatus status = failed.error == TerminateError.DDP_LOCAL_CATASTROPHIC ? WcStatus.LOCAL_PROTECTION_ERROR
                : WcStatus.LOCAL_QP_OPERATION_ERROR;
        receive(failed.buffer.workRequestId(), status, failed.length, 0, failed.solicited, failed.error);
    }

    private record FailedReceive(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error) {
    }
}
