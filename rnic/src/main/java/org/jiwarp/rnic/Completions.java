package org.jiwarp.rnic;

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

    Completions(QueuePair qp, QpConfig config) {
        this.qp = qp;
        this.config = config;
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
        config.sendCq().add(new WorkCompletion().set(id, status, opcode, length, qp, 0, false, error));
    }

    void receive(long id, WcStatus status, long length, int invalidatedStag, boolean solicited,
            TerminateError error) {
        receiveOutstanding.decrementAndGet();
        config.receiveCq().add(new WorkCompletion().set(id, status, WcOpcode.RECEIVE, length, qp, invalidatedStag,
                solicited, error));
    }

    void send(long id, WcStatus status, WcOpcode opcode, long length, TerminateError error, long value) {
        sendOutstanding.decrementAndGet();
        config.sendCq().add(new WorkCompletion().set(id, status, opcode, length, qp, 0, false, error)
                .immediateData(value));
    }

    /** A receive used up by an Immediate Data message (RFC 7306 section 6.3). */
    void receiveImmediate(long id, long immediateData, boolean solicited) {
        receiveOutstanding.decrementAndGet();
        config.receiveCq().add(new WorkCompletion().set(id, WcStatus.SUCCESS, WcOpcode.RECEIVE_IMMEDIATE_DATA,
                RdmapOpcode.IMMEDIATE_DATA_LENGTH, qp,
                0, solicited, null).immediateData(immediateData));
    }

    void receiveFlushed(long id) {
        receive(id, WcStatus.WORK_REQUEST_FLUSH_ERROR, 0, 0, false, null);
    }
}
