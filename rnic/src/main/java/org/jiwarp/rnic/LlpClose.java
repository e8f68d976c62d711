package org.jiwarp.rnic;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.FirstFpduGate;

/**
 * How a queue pair's TCP connection (the LLP stream) is closed, short of an abortive close: after a
 * Terminate (RFC 5040 section 5.6: the stream ends once the Terminate is out) and at the user's
 * graceful disconnect (once everything issued has gone to TCP). The queue pair's state has moved
 * already ({@link QpStateMachine}); this is only what happens to the socket.
 */
final class LlpClose {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(LlpClose.class);

    /** How long an end that half-closed reads on, waiting for the peer's close, before it closes. */
    private static final long LINGER_SECONDS = 1;

    private LlpClose() {
    }

    /**
     * Half-closes after a Terminate (RFC 5040 section 5.6: the stream ends once the Terminate is out;
     * the Terminate is the last thing written, so it is on its way when this is called).
     */
    static void afterTerminate(ChannelHandlerContext ctx) {
        halfCloseAndLinger(ctx);
    }

    /**
     * The user's graceful disconnect: {@code coverIssued} accounts for the work issued so far, then,
     * once everything written before has gone to TCP (an empty write at the head of the pipeline,
     * below the FPDU framer, completes then), the connection half-closes. A responder still holding
     * its ULPDUs until the initiator's first FPDU (RFC 5044 section 7.1.2) does all this once they
     * are written, and closes if that FPDU has not come within a second. A connection that is
     * already gone has nothing left to send (and may have no handlers left).
     */
    static void onceWritten(ChannelHandlerContext ctx, Runnable coverIssued) {
        if (!ctx.channel().isActive() || ctx.pipeline().firstContext() == null) {
            ctx.channel().close();
            return;
        }
        if (FirstFpduGate.isHolding(ctx.pipeline())) {
            ctx.executor().schedule(() -> {
                if (FirstFpduGate.isHolding(ctx.pipeline())) {
                    ctx.close();
                }
            }, LINGER_SECONDS, TimeUnit.SECONDS);
        }
        FirstFpduGate.whenOpen(ctx.pipeline(), () -> {
            coverIssued.run();
            ChannelFuture atHead = OctetsToTcp.writeEmptyAtHead(ctx.pipeline());
            if (atHead == null) {
                ctx.close();
                return;
            }
            atHead.addListener(written -> {
                if (written.isSuccess()) {
                    halfCloseAndLinger(ctx);
                } else {
                    ctx.close();
                }
            });
        });
    }

    /**
     * Sends FIN and reads on until the peer closes too (the channel then closes by itself), or a
     * second passes. Closing at once would reset the connection whenever the peer's last octets
     * were still unread, and a reset may discard what this end sent last before the peer has read
     * it (the Terminate, or the last message of a graceful close).
     */
    private static void halfCloseAndLinger(ChannelHandlerContext ctx) {
        Channel channel = ctx.channel();
        if (channel instanceof DuplexChannel && channel.isActive()) {
            ((DuplexChannel) channel).shutdownOutput();
            ctx.executor().schedule(() -> ctx.close(), LINGER_SECONDS, TimeUnit.SECONDS);
        } else {
            ctx.close();
        }
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
