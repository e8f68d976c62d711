package org.jiwarp.mpa;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;

/**
 * Holds the responder's outbound ULPDUs until the initiator's first FPDU has arrived (RFC 5044
 * section 7.1.2: the responder MUST NOT send an FPDU before it has received one), then gets out of
 * the way. Held writes are released and their promises failed if the connection closes first.
 *
 * <p>Whoever needs to know when what it wrote has reached TCP (a send queue completing its work, a
 * graceful close) asks {@link #isHolding} first: octets held here are not in the channel's outbound
 * buffer yet, and a write below the framer would overtake them.
 */
public final class FirstFpduGate extends ChannelDuplexHandler {

    private PendingWriteQueue held;
    private boolean flushRequested;
    /** What runs once the held writes have been written on ({@link #whenOpen}). */
    private Runnable onOpen;

    FirstFpduGate() {
    }

    /** Whether {@code pipeline}'s responder still holds its outbound ULPDUs back (RFC 5044 section 7.1.2). */
    public static boolean isHolding(ChannelPipeline pipeline) {
        return pipeline.get(MpaSetupHandler.GATE) != null;
    }

    /**
     * On the event loop: runs {@code task} once the held ULPDUs have been written on and flushed, at
     * once when nothing is held; never when the connection closes first.
     */
    public static void whenOpen(ChannelPipeline pipeline, Runnable task) {
        FirstFpduGate gate = (FirstFpduGate) pipeline.get(MpaSetupHandler.GATE);
        if (gate == null || gate.held == null) {
            task.run();
        } else if (gate.onOpen == null) {
            gate.onOpen = task;
        } else {
            Runnable before = gate.onOpen;
            gate.onOpen = () -> {
                before.run();
                task.run();
            };
        }
    }

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
        // The first FPDU goes up before the held writes go out, so that an answer it needs (the
        // zero-length Read Response to a Read RTR, RFC 6581 section 3) leaves first.
        open(ctx, msg);
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
        open(ctx, null);
    }

    /** Leaves the pipeline, passes {@code first} (if any) up, then writes on what was held. */
    private void open(ChannelHandlerContext ctx, Object first) {
        PendingWriteQueue queue = held;
        held = null;
        boolean flush = flushRequested;
        ctx.pipeline().remove(this);
        if (first != null) {
            ctx.fireChannelRead(first);
        }
        queue.removeAndWriteAll();
        if (flush) {
            ctx.flush();
        }
        Runnable task = onOpen;
        onOpen = null;
        if (task != null) {
            task.run();
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
