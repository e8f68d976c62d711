package org.jiwarp.rnic;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import org.jiwarp.mpa.PayloadViews;
import org.jiwarp.rdmap.SegmentOutput;

/**
 * Where a queue pair's RDMAP layer writes its DDP segments: down its pipeline from the
 * {@link QpConnection} through the FPDU framer, flushed once per batch by the connection, with the
 * octets handed to TCP counted by the {@link OctetsToTcp} at the head of the pipeline.
 */
final class SegmentWriter implements SegmentOutput {

    private final ChannelHandlerContext ctx;
    private final OctetsToTcp octets;
    private final PayloadViews payloadViews;
    private boolean flushNeeded;

    /**
     * @param ctx          the queue pair's connection's context; puts an {@link OctetsToTcp} first in its pipeline
     * @param payloadViews the connection's recycled views of registered memory and overhead
     */
    SegmentWriter(ChannelHandlerContext ctx, PayloadViews payloadViews) {
        this.ctx = ctx;
        this.octets = OctetsToTcp.addFirst(ctx.pipeline());
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

    /** Flushes what was written since the last flush, if anything. */
    void flushIfNeeded() {
        if (flushNeeded) {
            flush();
        }
    }

    void flush() {
        flushNeeded = false;
        ctx.flush();
    }
}
