package org.jiwarp.mpa;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Holds the responder's outbound ULPDUs until the initiator's first FPDU has arrived (RFC 5044
 * section 7.1.2: the responder MUST NOT send an FPDU before it has received one). The deframer of
 * the same connection opens it ({@link FpduCodec}) once that FPDU is in, or damaged (so that the
 * Terminate answering it is not held back). Held writes count against the channel's writability,
 * as written ones do, and their promises fail if the connection closes first.
 *
 * <p>Whoever needs to know when what it wrote has reached TCP (a send queue completing its work, a
 * graceful close) asks {@link #isHolding} first: octets held here are not in the channel's outbound
 * buffer yet, and a write below the framer would overtake them.
 */
final class FirstFpduGate extends ChannelOutboundHandlerAdapter {

    private ChannelHandlerContext ctx;
    private PendingWriteQueue held;
    private boolean flushRequested;
    /** What runs once the held writes have been written on ({@link #whenOpen}). */
    private Runnable onOpen;

    /** Whether the gate still holds the responder's outbound ULPDUs back. */
    boolean isHolding() {
        return held != null;
    }

    /** Runs {@code task} once the held ULPDUs have been written on and flushed, at once when open. */
    void whenOpen(Runnable task) {
        if (held == null) {
            task.run();
        } else if (onOpen == null) {
            onOpen = task;
        } else {
            Runnable before = onOpen;
            onOpen = () -> {
                before.run();
                task.run();
            };
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        held = new PendingWriteQueue(ctx);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (held == null) {
            ctx.write(msg, promise);
        } else {
            held.add(msg, promise);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (held == null) {
            ctx.flush();
        } else {
            flushRequested = true;
        }
    }

    /** The initiator's first FPDU is in (or damaged): writes on what was held, then runs the waiting task. */
    void open() {
        PendingWriteQueue queue = held;
        if (queue == null) {
            return;
        }
        held = null;
        queue.removeAndWriteAll();
        if (flushRequested) {
            ctx.flush();
        }
        Runnable task = onOpen;
        onOpen = null;
        if (task != null) {
            task.run();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (held != null) {
            held.removeAndFailAll(new MpaException(TerminateError.LLP_CONNECTION_LOST,
                    "the connection closed before the initiator's first FPDU"));
            held = null;
        }
    }
}
