package org.jiwarp.rnic.tx;

import io.netty.channel.ChannelHandlerContext;
import java.util.function.Consumer;
import org.jiwarp.rdmap.ReadResponder;
import org.jiwarp.rnic.qp.QpStateMachine;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * When a connection's send side runs (siw's {@code siw_sq_start()}): work posted on the event loop
 * at once; work posted from other threads through the {@link Doorbell}, one wake-up for however
 * many posts; and, once the connection has drained below its low water mark, the send queue and the
 * Read responder again, in a task behind what the event loop already holds (other queue pairs'
 * doorbells and refills), so that queue pairs sharing the loop take it in turn. A task of its own
 * that meets an error the process cannot go on from (out of memory), which Netty would log and drop,
 * hands it to the connection's pipeline as any other failure.
 */
public final class SendScheduler {

    private final ChannelHandlerContext ctx;
    private final SendQueue sendQueue;
    private final ReadResponder readResponder;
    private final SegmentWriter output;
    private final QpStateMachine state;
    /** Flushes what was issued, once per batch. */
    private final Runnable flush;
    /** Terminates the stream (a Read's source invalidated under its response). */
    private final Consumer<TerminateError> terminate;
    /** Work posted from other threads, waiting for the event loop. */
    private final Doorbell doorbell;
    /** Takes work again once the channel has drained (one task object for the connection's life). */
    private final Runnable resume = () -> guarded(this::resume);
    private boolean resumeScheduled;

    public SendScheduler(ChannelHandlerContext ctx, SendQueue sendQueue, ReadResponder readResponder,
            SegmentWriter output, QpStateMachine state, Runnable flush, Consumer<TerminateError> terminate) {
        this.ctx = ctx;
        this.sendQueue = sendQueue;
        this.readResponder = readResponder;
        this.output = output;
        this.state = state;
        this.flush = flush;
        this.terminate = terminate;
        this.doorbell = new Doorbell(() -> guarded(this::answerDoorbellNow));
    }

    /** On the event loop: posts {@code slot} after anything rung in before it. */
    public void post(SendSlot slot) {
        doorbell.takeInto(sendQueue);
        sendQueue.enqueue(slot);
        sendQueue.issueWaiting();
        flush.run();
    }

    /** From any thread: queues {@code slot} for the event loop and wakes it unless a wake-up is pending. */
    public void ring(SendSlot slot) {
        queue(slot);
        wake();
    }

    /**
     * From any thread: queues {@code slot} for the event loop without waking it (a chain's posts, then
     * one {@link #wake()}, or {@link #answerDoorbellNow()} on the event loop).
     */
    public void queue(SendSlot slot) {
        doorbell.offer(slot);
    }

    /** Wakes the event loop for the doorbell unless a wake-up is pending. */
    public void wake() {
        doorbell.ring(ctx.executor());
    }

    /** On the event loop: posts what the doorbell holds and flushes. */
    public void answerDoorbellNow() {
        doorbell.takeInto(sendQueue);
        sendQueue.issueWaiting();
        flush.run();
    }

    /**
     * The channel's writability changed: drained below its low water mark, the send side runs again
     * in a task of its own, unless it is going on by itself (a flush it made drained the channel).
     */
    public void writabilityChanged() {
        if (ctx.channel().isWritable() && !resumeScheduled && !output.goingOn()) {
            resumeScheduled = true;
            ctx.executor().execute(resume);
        }
    }

    private void resume() {
        resumeScheduled = false;
        if (!state.running()) {
            return;
        }
        try {
            readResponder.issue();
        } catch (TerminateException e) {
            terminate.accept(e.error());
            return;
        }
        sendQueue.issueWaiting();
        flush.run();
    }

    private void guarded(Runnable task) {
        try {
            task.run();
        } catch (VirtualMachineError e) {
            ctx.fireExceptionCaught(e);
        }
    }
}
