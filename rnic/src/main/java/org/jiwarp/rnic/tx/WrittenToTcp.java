package org.jiwarp.rnic.tx;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import org.jiwarp.mpa.FpduCodec;
import org.jiwarp.rnic.cm.OctetsToTcp;

/**
 * When the Writes, Sends and Immediate Data a send queue issued have reached TCP, which is when they
 * complete (a verbs send completion: the data has left the queue pair), without a channel promise
 * per message. Each is numbered as it is issued ({@link #issue}); after each flush of the connection
 * ({@link #flushed}) a channel that holds nothing unsent has put everything issued into TCP; one
 * that still holds octets gets one empty write at the head of the pipeline whose promise says so
 * later (the stream is in order; this is the one listener, and the promises complete in the order
 * written). A responder's ULPDUs held until the initiator's first FPDU (RFC 5044 section 7.1.2) are
 * not in the channel yet and are covered at the flush after it. Runs on the connection's event loop.
 */
final class WrittenToTcp implements ChannelFutureListener {

    /** Told when everything issued up to a number has reached TCP, or failed to. */
    interface Listener {
        void written(long upTo, boolean success);
    }

    private final ChannelHandlerContext ctx;
    private final FpduCodec codec;
    private final OctetsToTcp counter;
    private final Listener listener;
    /** Issue number of the last Write, Send or Immediate Data issued. */
    private long issued;
    /** Issue numbers whose promise is pending, oldest first. */
    private final IssueMarks awaited = new IssueMarks();
    /** The highest issue number known to have reached TCP or awaited by a pending promise. */
    private long covered;
    /** Inside {@link #flushed}, and whether it was asked again meanwhile. */
    private boolean inFlushed;
    private boolean flushedAgain;
    /** Set once the MPA responder's first-FPDU gate has gone (it never comes back). */
    private boolean released;

    WrittenToTcp(ChannelHandlerContext ctx, FpduCodec codec, OctetsToTcp counter, Listener listener) {
        this.ctx = ctx;
        this.codec = codec;
        this.counter = counter;
        this.listener = listener;
    }

    /**
     * Numbers a Write, Send or Immediate Data just issued; {@code written}, when not {@code null}, is
     * its last segment's promise, which covers it.
     */
    long issue(ChannelFuture written) {
        long number = ++issued;
        if (written != null) {
            await(number, written);
        }
        return number;
    }

    /**
     * After the connection flushed: what was issued since the last call has reached TCP when the
     * channel holds nothing unsent now, else an empty write tells when it has. A completion listener
     * that posts and flushes again from here is taken in the same loop.
     */
    void flushed() {
        if (inFlushed) {
            flushedAgain = true;
            return;
        }
        inFlushed = true;
        try {
            do {
                flushedAgain = false;
                coverIssued();
            } while (flushedAgain);
        } finally {
            inFlushed = false;
        }
    }

    /** The connection is going down: no promise pending is waited for any more. */
    void clear() {
        awaited.clear();
    }

    private void coverIssued() {
        if (issued <= covered || held()) {
            return;
        }
        long upTo = issued;
        covered = upTo;
        Channel channel = ctx.channel();
        ChannelOutboundBuffer unsent = channel.unsafe().outboundBuffer();
        if (channel.isActive() && unsent != null && unsent.totalPendingWriteBytes() == 0) {
            listener.written(upTo, true);
            return;
        }
        ChannelFuture atHead = counter.writeEmptyAndFlush();
        if (atHead == null) {
            listener.written(upTo, false);
            return;
        }
        await(upTo, atHead);
    }

    /** Whether the MPA responder still holds what was issued (RFC 5044 section 7.1.2). */
    private boolean held() {
        if (released) {
            return false;
        }
        released = !codec.isHolding();
        return !released;
    }

    /** {@code written} completes once everything issued up to {@code upTo} has reached TCP. */
    private void await(long upTo, ChannelFuture written) {
        awaited.add(upTo);
        covered = Math.max(covered, upTo);
        written.addListener(this);
    }

    /**
     * The oldest pending promise completed: everything issued up to it has reached TCP. A failed
     * write means the connection is going down.
     */
    @Override
    public void operationComplete(ChannelFuture future) {
        if (!awaited.isEmpty()) { // else cleared meanwhile
            listener.written(awaited.poll(), future.isSuccess());
        }
    }
}
