package org.jiwarp.rnic.tx;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.jiwarp.mpa.PayloadViews;
import org.jiwarp.rdmap.SegmentOutput;
import org.jiwarp.rnic.cm.OctetsToTcp;

/**
 * Where a queue pair's RDMAP layer writes its DDP segments: down its pipeline from the
 * queue pair's connection through the FPDU framer, flushed once per batch by the connection, with the
 * octets handed to TCP counted by the {@link OctetsToTcp} at the head of the pipeline.
 */
public final class SegmentWriter implements SegmentOutput {

    private final ChannelHandlerContext ctx;
    private final OctetsToTcp octets;
    private final PayloadViews payloadViews;
    private boolean flushNeeded;
    private boolean goingOn;

    /**
     * @param ctx          the queue pair's connection's context
     * @param octets       the connection's count of octets handed to TCP, first in its pipeline
     * @param payloadViews the connection's recycled views of registered memory and overhead
     */
    public SegmentWriter(ChannelHandlerContext ctx, OctetsToTcp octets, PayloadViews payloadViews) {
        this.ctx = ctx;
        this.octets = octets;
        this.payloadViews = payloadViews;
    }

    @Override
    public ByteBufAllocator alloc() {
        return ctx.alloc();
    }

    @Override
    public PayloadViews payloadViews() {
        return payloadViews;
    }

    @Override
    public void write(Object segment) {
        flushNeeded = true;
        ctx.write(segment, ctx.voidPromise());
    }

    @Override
    public ChannelFuture writeLast(Object segment) {
        flushNeeded = true;
        return ctx.write(segment);
    }

    @Override
    public long written() {
        return octets.written();
    }

    @Override
    public long sent() {
        return octets.sent();
    }

    /**
     * Whether the connection takes more now. Above its high water mark it does not, unless it is
     * alone: what it holds is then handed to TCP at once, and if the socket took enough it goes on.
     * So a queue pair fills its socket's own buffer (TCP's bound, as large as the kernel makes it)
     * when nothing else waits on its event loop, and takes turns at the mark when something does
     * (another queue pair's doorbell or refill, queued as tasks): fairness costs nothing when there
     * is nobody to be fair to.
     */
    @Override
    public boolean writable() {
        Channel channel = ctx.channel();
        if (channel.isWritable()) {
            return true;
        }
        if (!flushNeeded || othersWaiting()) {
            return false;
        }
        goingOn = true;
        try {
            flush();
        } finally {
            goingOn = false;
        }
        return channel.isWritable();
    }

    /**
     * Whether the connection is flushing in {@link #writable()} to go on writing: the writer that
     * asked goes on by itself if the flush drained the channel, so nobody needs to resume it then.
     */
    public boolean goingOn() {
        return goingOn;
    }

    /** Whether other work waits on this connection's event loop (tasks queued for it). */
    private boolean othersWaiting() {
        EventExecutor loop = ctx.executor();
        return !(loop instanceof SingleThreadEventExecutor) || ((SingleThreadEventExecutor) loop).pendingTasks() > 0;
    }

    /** Flushes what was written since the last flush, if anything. */
    public void flushIfNeeded() {
        if (flushNeeded) {
            flush();
        }
    }

    public void flush() {
        flushNeeded = false;
        ctx.flush();
    }
}
