package org.jiwarp.rnic;

import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
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
    /** Send slots whose completion was reported: taken by posting threads, given back by the event loop. */
    private final Queue<SendQueue.SendSlot> freeSlots;

    Completions(QueuePair qp, QpConfig config) {
        this.qp = qp;
        this.config = config;
        this.freeSlots = PlatformDependent.newFixedMpmcQueue(Math.max(config.sendDepth(), 2));
    }

    /** A send slot for an admitted post of {@code wr}: one given back, or a new one. */
    SendQueue.SendSlot slot(SendWorkRequest wr) {
        SendQueue.SendSlot slot = freeSlots.poll();
        return slot != null ? slot.fill(wr) : new SendQueue.SendSlot(wr);
    }

    /** A slot whose completion was reported and that nothing holds any more. */
    void recycle(SendQueue.SendSlot slot) {
        slot.sgl = null;
        freeSlots.offer(slot);
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

    void receiveFlushed(long id) {
        receive(id, WcStatus.WORK_REQUEST_FLUSH_ERROR, 0, 0, false, null);
    }
}
