package org.jiwarp.conformance.adversarial;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaAcceptor;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaResponderHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Replays the octets a raw initiator sent during MPA startup against jiwarp's responder handler on
 * an {@link EmbeddedChannel}, to learn the exact MPA error (RFC 5044 section 8) behind a close the
 * socket can only see as a close.
 */
final class MpaProbe {

    private MpaProbe() {
    }

    /** What the responder did with the octets. */
    record Result(TerminateError error, boolean closed, List<Throwable> exceptions) {
    }

    /**
     * @param hold the application never decides on the Request
     * @param elapse time to let pass afterwards (timers), or {@code null}
     */
    static Result responder(MpaSettings settings, byte[] inbound, boolean hold, Duration elapse) {
        List<Throwable> exceptions = new ArrayList<>();
        MpaAcceptor acceptor = hold ? request -> { } : request -> request.accept(new byte[0]);
        EmbeddedChannel channel = new EmbeddedChannel(new MpaResponderHandler(settings, acceptor),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        exceptions.add(cause);
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ReferenceCountUtil.release(msg);
                    }
                });
        try {
            if (inbound.length > 0) {
                channel.writeInbound(Unpooled.wrappedBuffer(inbound));
            }
            channel.runPendingTasks();
            if (elapse != null) {
                channel.advanceTimeBy(elapse.toNanos(), TimeUnit.NANOSECONDS);
                channel.runScheduledPendingTasks();
            }
            TerminateError error = null;
            for (Throwable t : exceptions) {
                if (t instanceof MpaException) {
                    error = ((MpaException) t).error();
                    break;
                }
            }
            return new Result(error, !channel.isActive(), exceptions);
        } finally {
            channel.finishAndReleaseAll();
        }
    }
}
