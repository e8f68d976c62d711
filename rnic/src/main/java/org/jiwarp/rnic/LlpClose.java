package org.jiwarp.rnic;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * How a queue pair's TCP connection (the LLP stream) is closed, short of an abortive close: after a
 * Terminate (RFC 5040 section 5.6: the stream ends once the Terminate is out) and at the user's
 * graceful disconnect (once everything issued has gone to TCP). The queue pair's state has moved
 * already ({@link QpStateMachine}); this is only what happens to the socket.
 */
final class LlpClose {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(LlpClose.class);

    /** How long the Terminate's sender reads (and discards) after its half-close before it closes. */
    private static final long TERMINATE_LINGER_SECONDS = 1;

    private LlpClose() {
    }

    /**
     * Half-closes after a Terminate and reads (discarding) until the peer closes too, or a second
     * passes: closing at once could reset the connection under the peer's own writes and lose the
     * Terminate before the peer has read it.
     */
    static void afterTerminate(ChannelHandlerContext ctx) {
        Channel channel = ctx.channel();
        if (channel instanceof DuplexChannel && channel.isActive()) {
            ((DuplexChannel) channel).shutdownOutput();
            ctx.executor().schedule(() -> ctx.close(), TERMINATE_LINGER_SECONDS, TimeUnit.SECONDS);
        } else {
            ctx.close();
        }
    }

    /**
     * Closes once everything written before has gone to TCP: an empty write at the head of the
     * pipeline (below the FPDU framer, so nothing goes on the wire) completes then. A connection
     * that is already gone has nothing left to send (and may have no handlers left).
     */
    static void onceWritten(ChannelHandlerContext ctx) {
        ChannelHandlerContext first = ctx.pipeline().firstContext();
        if (first == null || !ctx.channel().isActive()) {
            ctx.channel().close();
            return;
        }
        first.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /**
     * An established connection failed below RDMAP, where no Terminate can be sent any more: a TCP
     * error (a reset) is the peer's or the network's business and logged quietly; anything else is a
     * local failure, logged with its trace so that it is never silent.
     */
    static void failed(QueuePair qp, Throwable cause) {
        if (cause instanceof IOException) {
            LOG.debug("{}: the connection failed: {}", qp, cause.toString());
        } else {
            LOG.warn("{}: a local failure closes the connection", qp, cause);
        }
    }
}
