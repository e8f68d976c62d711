package org.jiwarp.rnic.cm;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.FpduCodec;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.qp.QpStateMachine;

/**
 * How a queue pair's TCP connection (the LLP stream) is closed, short of an abortive close: after a
 * Terminate (RFC 5040 section 5.6: the stream ends once the Terminate is out) and at the user's
 * graceful disconnect (once everything issued has gone to TCP). The queue pair's state has moved
 * already ({@link QpStateMachine}); this is only what happens to the socket.
 *
 * <p>Every close is bounded, whatever the peer does ({@link RnicOptions#closeTimeout}): what must
 * be written first (the Terminate, the work issued before a disconnect) has that long to reach
 * TCP, and the half-close that follows waits {@link #LINGER} for the peer's own close. A peer that
 * stops reading cannot hold the connection past either: it is then aborted, closed with a TCP
 * reset, which also frees what the kernel still holds for it, and the queue pair goes to ERROR
 * with its work flushed as the connection goes inactive.
 */
public final class LlpClose {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(LlpClose.class);

    /** How long an end that half-closed reads on, waiting for the peer's close, before it aborts. */
    static final Duration LINGER = Duration.ofSeconds(1);

    private LlpClose() {
    }

    /**
     * The Terminate has been handed to the connection (RFC 5040 section 5.6: the stream ends once it
     * is out; it is the last thing written): half-closes once it is written, and aborts if that has
     * not happened within {@code bound}.
     */
    public static void afterTerminate(ChannelHandlerContext ctx, ChannelFuture terminateWritten, Duration bound) {
        abortAfter(ctx, bound);
        terminateWritten.addListener(written -> halfCloseAndLinger(ctx));
    }

    /**
     * The user's graceful disconnect: {@code coverIssued} accounts for the work issued so far, then,
     * once everything written before has gone to TCP (an empty write at the head of the pipeline,
     * below the FPDU framer, completes then), the connection half-closes. A responder still holding
     * its ULPDUs until the initiator's first FPDU (RFC 5044 section 7.1.2) does all this once they
     * are written. Whatever is not done within {@code bound} is aborted. A connection that is already
     * gone has nothing left to send (and may have no handlers left).
     */
    public static void onceWritten(ChannelHandlerContext ctx, FpduCodec codec, OctetsToTcp counter,
            Runnable coverIssued, Duration bound) {
        if (!ctx.channel().isActive() || ctx.isRemoved()) {
            ctx.channel().close();
            return;
        }
        abortAfter(ctx, bound);
        codec.whenOpen(() -> {
            coverIssued.run();
            ChannelFuture atHead = counter.writeEmptyAndFlush();
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
     * Sends FIN and reads on until the peer closes too (the channel then closes by itself), for
     * {@link #LINGER} at most, then aborts. Closing at once would reset the connection whenever the
     * peer's last octets were still unread, and a reset may discard what this end sent last before
     * the peer has read it (the Terminate, or the last message of a graceful close).
     */
    private static void halfCloseAndLinger(ChannelHandlerContext ctx) {
        Channel channel = ctx.channel();
        if (channel instanceof DuplexChannel && channel.isActive()) {
            ((DuplexChannel) channel).shutdownOutput();
            abortAfter(ctx, LINGER);
        } else {
            ctx.close();
        }
    }

    /** Aborts the connection if it is still open {@code bound} from now. */
    private static void abortAfter(ChannelHandlerContext ctx, Duration bound) {
        ctx.executor().schedule(() -> {
            if (ctx.channel().isOpen()) {
                abort(ctx.channel());
            }
        }, bound.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Closes with a TCP reset (SO_LINGER 0): nothing more is sent, and the kernel lets go of what it
     * still held to send.
     */
    public static void abort(Channel channel) {
        try {
            channel.config().setOption(ChannelOption.SO_LINGER, 0);
        } catch (RuntimeException e) {
            LOG.debug("{}: SO_LINGER 0 refused ({}); closing without it", channel, e.toString());
        }
        channel.close();
    }

    /**
     * An established connection failed below RDMAP, where no Terminate can be sent any more: a TCP
     * error (a reset) is the peer's or the network's business and logged quietly; anything else is a
     * local failure, logged with its trace so that it is never silent.
     */
    public static void failed(String queuePair, Throwable cause) {
        if (cause instanceof IOException) {
            LOG.debug("{}: the connection failed: {}", queuePair, cause.toString());
        } else {
            LOG.warn("{}: a local failure closes the connection", queuePair, cause);
        }
    }
}
