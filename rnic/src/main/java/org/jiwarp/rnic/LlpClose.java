package org.jiwarp.rnic;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DuplexChannel;
import java.util.concurrent.TimeUnit;

/**
 * How a queue pair's TCP connection (the LLP stream) is closed, short of an abortive close: after a
 * Terminate (RFC 5040 section 5.6: the stream ends once the Terminate is out) and at the user's
 * graceful disconnect (once everything issued has gone to TCP). The queue pair's state has moved
 * already ({@link QpStateMachine}); this is only what happens to the socket.
 */
final class LlpClose {

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
        ChannelFuture atHead = ctx.channel().isActive() ? OctetsToTcp.writeEmptyAtHead(ctx.pipeline()) : null;
        if (atHead == null) {
            ctx.channel().close();
            return;
        }
        atHead.addListener(ChannelFutureListener.CLOSE);
    }
}
