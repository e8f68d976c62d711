package org.jiwarp.conformance.soak;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Passes what {@link FaultInjector} lets through to the other leg of the proxy in pieces of 1 to
 * 2048 octets, each its own write (so that TCP segments differ from the sender's), now and then
 * holding everything for a few milliseconds, order kept. Nothing is lost on the way: what is held
 * when the leg's input ends or the leg closes goes out before the other leg is shut or closed
 * ({@link FaultyProxy}'s close handler comes after this one), and at {@link FaultInjector#CUT_HERE}
 * what is held goes out before both legs are closed.
 */
final class Resegmenter extends ChannelInboundHandlerAdapter {

    private final SplittableRandom random;
    private final Function<ByteBuf, ChannelFuture> forward;
    private final Runnable closeBoth;
    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();
    private boolean holding;
    private ChannelFuture lastWrite;

    /**
     * @param forward   writes to the other leg
     * @param closeBoth closes both legs (after a cut)
     */
    Resegmenter(long seed, Function<ByteBuf, ChannelFuture> forward, Runnable closeBoth) {
        this.random = new SplittableRandom(seed);
        this.forward = forward;
        this.closeBoth = closeBoth;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg == FaultInjector.CUT_HERE) {
            holding = false;
            passHeld();
            if (lastWrite == null) {
                closeBoth.run();
            } else {
                lastWrite.addListener(written -> closeBoth.run());
            }
            return;
        }
        ByteBuf in = (ByteBuf) msg;
        if (holding) {
            held.add(in);
            return;
        }
        if (random.nextInt(32) == 0) {
            // Hold this read, and every read after it until the delay ends.
            holding = true;
            held.add(in);
            ctx.executor().schedule(() -> {
                holding = false;
                passHeld();
            }, 1 + random.nextInt(5), TimeUnit.MILLISECONDS);
            return;
        }
        split(in);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof ChannelInputShutdownEvent) {
            holding = false;
            passHeld(); // before the FIN it announces goes on
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        holding = false;
        passHeld();
        ctx.fireChannelInactive();
    }

    private void passHeld() {
        for (ByteBuf next; (next = held.poll()) != null; ) {
            split(next);
        }
    }

    /** Into pieces of 1 to 2048 octets, each its own write. */
    private void split(ByteBuf in) {
        while (in.readableBytes() > 2048) {
            lastWrite = forward.apply(in.readRetainedSlice(1 + random.nextInt(2048)));
        }
        lastWrite = forward.apply(in);
    }
}
