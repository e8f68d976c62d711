package org.jiwarp.rnic.cm;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SetupFailureListener;

/**
 * A listener's cap on connections in MPA setup ({@link RnicOptions#maxSetups(int)}). A connection
 * counts from TCP accept until its setup ends: established, rejected, timed out or closed.
 */
public final class SetupLimit {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(SetupLimit.class);

    private final int max;
    private final AtomicInteger inProgress = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    private volatile SetupFailureListener failures;

    public SetupLimit(int max) {
        this.max = max;
    }

    /** Counts {@code channel} in, or refuses it (the caller closes it) when the cap is reached. */
    public boolean admit(Channel channel) {
        if (inProgress.incrementAndGet() > max) {
            inProgress.decrementAndGet();
            long n = refused.incrementAndGet();
            if (n == 1 || n % 1000 == 0) {
                LOG.warn("{} connections already in MPA setup: closing {} ({} refused so far)", max,
                        channel.remoteAddress(), n);
            }
            return false;
        }
        return true;
    }

    public int inProgress() {
        return inProgress.get();
    }

    public long refused() {
        return refused.get();
    }

    public void failures(SetupFailureListener listener) {
        this.failures = listener;
    }

    /** Counts the channel out when its setup ends, then leaves the pipeline. */
    public ChannelInboundHandlerAdapter watcher(Channel channel) {
        return new ChannelInboundHandlerAdapter() {
            private boolean counted = true;

            private void done(ChannelHandlerContext ctx) {
                if (counted) {
                    counted = false;
                    inProgress.decrementAndGet();
                    ctx.pipeline().remove(this);
                }
            }

            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt instanceof MpaEstablishedEvent) {
                    done(ctx);
                }
                ctx.fireUserEventTriggered(evt);
            }

            /** A failed setup (timeout, bad frame): the MPA handler closes the connection; nothing else to do. */
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                if (cause instanceof org.jiwarp.mpa.MpaException) {
                    LOG.debug("MPA setup with {} failed: {}", ctx.channel().remoteAddress(), cause.getMessage());
                    SetupFailureListener listener = failures;
                    if (listener != null) {
                        listener.onSetupFailure((java.net.InetSocketAddress) ctx.channel().remoteAddress(),
                                ((org.jiwarp.mpa.MpaException) cause).error(), cause.getMessage());
                    }
                    ctx.close();
                } else {
                    ctx.fireExceptionCaught(cause);
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                done(ctx);
                ctx.fireChannelInactive();
            }
        };
    }
}
