package org.jiwarp.mpa;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;

/**
 * Holds the responder's outbound ULPDUs until the initiator's first FPDU has arrived (RFC 5044
 * section 7.1.2: the responder MUST NOT send an FPDU before it has received one), then gets out of
 * the way. Held writes are released and their promises failed if the connection closes first.
 */
final class FirstFpduGate extends ChannelDuplexHandler {

    private PendingWriteQueue held;
    private boolean flushRequested;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        held = new PendingWriteQueue(ctx);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        held.add(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        flushRequested = true;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        PendingWriteQueue queue = held;
        held = null;
        boolean flush = flushRequested;
        ctx.pipeline().remove(this);
        // The first FPDU goes up before the held writes go out, so that an answer it needs (the
        // zero-length Read Response to a Read RTR, RFC 6581 section 3) leaves first.
        ctx.fireChannelRead(msg);
        queue.removeAndWriteAll();
        if (flush) {
            ctx.flush();
        }
    }

    /**
     * A damaged FPDU is still the initiator's first FPDU: open the gate, so that the Terminate the
     * layer above sends in answer (RFC 5040 section 5.6) is not held back.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (held != null && cause instanceof MpaException) {
            open(ctx);
        }
        ctx.fireExceptionCaught(cause);
    }

    private void open(ChannelHandlerContext ctx) {
        PendingWriteQueue queue = held;
        held = null;
        boolean flush = flushRequested;
        ctx.pipeline().remove(this);
        queue.removeAndWriteAll();
        if (flush) {
            ctx.flush();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (held != null) {
            held.removeAndFailAll(new MpaException(org.jiwarp.wire.rdmap.TerminateError.LLP_CONNECTION_LOST,
                    "the connection closed before the initiator's first FPDU"));
        }
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (held != null) {
            held.removeAndFailAll(new MpaException(org.jiwarp.wire.rdmap.TerminateError.LLP_CONNECTION_LOST,
                    "removed before the initiator's first FPDU"));
            held = null;
        }
    }
}
