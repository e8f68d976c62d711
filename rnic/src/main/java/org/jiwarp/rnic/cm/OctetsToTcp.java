package org.jiwarp.rnic.cm;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;

/**
 * Counts the octets a queue pair's connection hands to TCP, and tells how many of them TCP has
 * taken, without a future per message: the first handler of the pipeline (below the FPDU framer and
 * the capture), it adds to a running count what each write adds to the channel's outbound buffer
 * ({@link ChannelOutboundBuffer#totalPendingWriteBytes()}, which counts a message until the socket
 * has taken all of it). The octets sent are then the count minus what the buffer still holds, and
 * a message has gone to TCP exactly when that reaches the count read right after writing it: the
 * moment its own write future would have completed. The IRD entries of Read and Atomic Responses
 * are freed by it (RFC 5040 section 5.2, {@link org.jiwarp.rdmap.InboundReads}).
 *
 * <p>The count is the buffer's own measure (octets plus Netty's fixed overhead per message), taken
 * as a difference around each write, so it holds whatever the capture or the framer below the writer
 * does, as long as each message reaches the buffer during its write. A write from another thread
 * counts in the buffer before it reaches here and only delays {@link #sent()}; every write of a
 * queue pair's connection runs on its event loop.
 *
 * <p>Runs on the connection's event loop.
 */
public final class OctetsToTcp extends ChannelOutboundHandlerAdapter {

    private ChannelHandlerContext ctx;
    private long written;
    /** Inside a counted write: a write it causes (a writability event's) is in its difference already. */
    private boolean writing;

    /** Puts a counter first in {@code pipeline}, where everything on its way to the socket passes. */
    static OctetsToTcp addFirst(ChannelPipeline pipeline) {
        OctetsToTcp counter = new OctetsToTcp();
        pipeline.addFirst("octets-to-tcp", counter);
        return counter;
    }

    /**
     * An empty write here, at the head of the pipeline (below the FPDU framer, so nothing goes on the
     * wire), flushed: its future completes once everything written before it has gone to TCP.
     *
     * @return that future, or {@code null} when the connection is gone (its handlers removed)
     */
    public ChannelFuture writeEmptyAndFlush() {
        if (ctx == null || ctx.isRemoved()) {
            return null;
        }
        ChannelPromise promise = ctx.newPromise();
        pass(Unpooled.EMPTY_BUFFER, promise);
        ctx.flush();
        return promise;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        // What the channel still holds from before (the MPA exchange) is counted as written already.
        written = unsent();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        pass(msg, promise);
    }

    /** The position after everything written so far. */
    public long written() {
        return written;
    }

    /** The position up to which everything written has gone to TCP. */
    public long sent() {
        return written - unsent();
    }

    private void pass(Object msg, ChannelPromise promise) {
        if (writing) {
            ctx.write(msg, promise);
            return;
        }
        writing = true;
        long before = unsent();
        try {
            ctx.write(msg, promise);
        } finally {
            writing = false;
        }
        // Negative only when the write found the channel closing (its buffer gone): nothing was added.
        written += Math.max(0, unsent() - before);
    }

    private long unsent() {
        ChannelOutboundBuffer buffer = ctx.channel().unsafe().outboundBuffer();
        return buffer == null ? 0 : buffer.totalPendingWriteBytes();
    }
}
