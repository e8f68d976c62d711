package org.jiwarp.rnic.cq;

import java.util.concurrent.atomic.AtomicInteger;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.SharedReceives;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.tx.SendSlot;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A queue pair's two work queues as the completion side sees them: how many work requests each
 * holds (bounded by its depth), and the work completions it reports to its completion queues.
 * Safe from any thread.
 */
public final class Completions {

    private final int number;
    private final QpConfig config;
    private final CompletionSink sendCq;
    private final CompletionSink receiveCq;
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
     * Receive buffers whose completion was reported: the queue pair's own, or its shared receive
     * queue's, to which the buffers taken there go back.
     */
    private final ReceivePool freeReceives;
    /** The shared receive queue's receives as this queue pair takes them; {@code null} without one. */
    private final SharedReceives sharedReceives;
    /** On the event loop only: a failed receive's completion waiting for its Terminate. */
    private FailedReceive failedReceive;

    /**
     * @param number the queue pair's number, to name it in errors
     * @param sendCq where its send queue's completions go, {@code receiveCq} its receive queue's
     * @param shared the receives of the shared receive queue the queue pair takes its receives from;
     *     {@code null} when it has a receive queue of its own
     */
    public Completions(int number, QpConfig config, CompletionSink sendCq, CompletionSink receiveCq,
            PostedReceives shared) {
        this.number = number;
        this.config = config;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.freeReceives = shared == null ? new ReceivePool() : shared.pool();
        // A receive taken from the shared queue is this queue pair's until it completes or is flushed.
        this.sharedReceives = shared == null ? null : shared.takenBy(receiveOutstanding::incrementAndGet);
    }

    /**
     * Where the queue pair's untagged queue takes its receives, one per message, when it has a
     * shared receive queue; {@code null} when it has a receive queue of its own.
     */
    public SharedReceives sharedReceives() {
        return sharedReceives;
    }

    /** A send slot for an admitted post of {@code wr}: one given back, or a new one. */
    public SendSlot slot(SendWorkRequest wr, Sge[] sgl) {
        SendSlot slot;
        synchronized (freeLock) {
            slot = freeSlots;
            if (slot != null) {
                freeSlots = slot.nextFree;
                slot.nextFree = null;
            }
        }
        return slot != null ? slot.fill(wr, sgl) : new SendSlot(wr, sgl);
    }

    /**
     * A receive buffer for a post of work request {@code id} of {@code segments} SGEs, its scatter
     * list empty: one given back, or a new one.
     */
    public ReceiveBuffer receiveBuffer(long id, int segments) {
        return freeReceives.take(id, segments);
    }

    /**
     * A receive completed (and is in no queue): its buffer is given back before its completion shows,
     * so that whoever sees the completion and posts again reuses it.
     */
    private void recycle(ReceiveBuffer buffer) {
        freeReceives.giveBack(buffer);
    }

    /** A receive completed: its buffer goes back, then its completion is reported. */
    public void receiveCompleted(ReceiveBuffer buffer, long length, int invalidatedStag, boolean solicited) {
        long id = buffer.workRequestId();
        recycle(buffer);
        receive(id, WcStatus.SUCCESS, length, invalidatedStag, solicited, null);
    }

    /** A receive used up by Immediate Data: its buffer goes back, then its completion is reported. */
    public void receiveImmediateCompleted(ReceiveBuffer buffer, long immediateData, boolean solicited) {
        long id = buffer.workRequestId();
        recycle(buffer);
        receiveImmediate(id, immediateData, solicited);
    }

    /** A slot whose completion was reported and that nothing holds any more. */
    public void recycle(SendSlot slot) {
        slot.sgl = null;
        synchronized (freeLock) {
            slot.nextFree = freeSlots;
            freeSlots = slot;
        }
    }

    /** Takes a place on the send queue; {@code ibv_post_send}'s ENOMEM when it is full. */
    public void admitSend() {
        if (sendOutstanding.incrementAndGet() > config.sendDepth()) {
            sendOutstanding.decrementAndGet();
            throw new IllegalStateException("the send queue of QP " + number + " is full (" + config.sendDepth()
                    + ")");
        }
    }

    /** Takes a place on the receive queue. */
    public void admitReceive() {
        if (receiveOutstanding.incrementAndGet() > config.receiveDepth()) {
            receiveOutstanding.decrementAndGet();
            throw new IllegalStateException("the receive queue of QP " + number + " is full ("
                    + config.receiveDepth() + ")");
        }
    }

    /** A send work request retired without a completion (unsignaled, successful). */
    public void sendRetired() {
        sendOutstanding.decrementAndGet();
    }

    public void send(long id, WcStatus status, WcOpcode opcode, long length, TerminateError error) {
        sendOutstanding.decrementAndGet();
        sendCq.add(id, status, opcode, length, 0, false, error, 0);
    }

    public void receive(long id, WcStatus status, long length, int invalidatedStag, boolean solicited,
            TerminateError error) {
        receiveOutstanding.decrementAndGet();
        receiveCq.add(id, status, WcOpcode.RECEIVE, length, invalidatedStag, solicited, error, 0);
    }

    public void send(long id, WcStatus status, WcOpcode opcode, long length, TerminateError error, long value) {
        sendOutstanding.decrementAndGet();
        sendCq.add(id, status, opcode, length, 0, false, error, value);
    }

    /** A receive used up by an Immediate Data message (RFC 7306 section 6.3). */
    public void receiveImmediate(long id, long immediateData, boolean solicited) {
        receiveOutstanding.decrementAndGet();
        receiveCq.add(id, WcStatus.SUCCESS, WcOpcode.RECEIVE_IMMEDIATE_DATA, RdmapOpcode.IMMEDIATE_DATA_LENGTH, 0,
                solicited, null, immediateData);
    }

    /** Completes every receive {@code receives} still holds in flush error. */
    public void flushReceives(UntaggedQueue receives) {
        for (ReceiveBuffer buffer : receives.flush()) {
            receiveFlushed(buffer.workRequestId());
        }
    }

    public void receiveFlushed(long id) {
        receive(id, WcStatus.WORK_REQUEST_FLUSH_ERROR, 0, 0, false, null);
    }

    /**
     * Holds the completion of a receive used up by a segment that failed, until
     * {@link #releaseFailedReceive()}: the Terminate goes out first, so an application that disconnects
     * on the completion (rping's server does) cannot close the stream before it.
     */
    public void holdFailedReceive(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error) {
        failedReceive = new FailedReceive(buffer, length, solicited, error);
    }

    /** Completes the receive {@link #holdFailedReceive} held, if any. */
    public void releaseFailedReceive() {
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
