package org.jiwarp.conformance.soak;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A pipeline handler that damages the byte stream passing through it, once the stream has carried
 * {@code after} octets: it drops, truncates (closes the connection mid-stream), corrupts (flips a
 * bit) or, harmlessly, re-segments (passes the bytes on in small random pieces) and delays them.
 * It sits on the inbound side of one leg of {@link FaultyProxy}, so what it passes on is written to
 * the other leg.
 */
final class FaultInjector extends ChannelInboundHandlerAdapter {

    /** What to do to the stream. */
    enum Fault {
        /** Deliver everything, in pieces of 1 to 2048 octets, some held back a few milliseconds. */
        RESEGMENT_AND_DELAY(false),
        /** Remove 1 to 16 octets once. */
        DROP(true),
        /** Flip one bit once. */
        CORRUPT(true),
        /** Close both legs in the middle of the stream. */
        TRUNCATE(true);

        final boolean destructive;

        Fault(boolean destructive) {
            this.destructive = destructive;
        }
    }

    private final Fault fault;
    private final long after;
    private final SplittableRandom random;
    private final AtomicLong injected;
    private final java.util.function.Consumer<Object> forward;
    private final Runnable closeBoth;
    private final java.util.ArrayDeque<ByteBuf> held = new java.util.ArrayDeque<>();
    private long seen;
    private boolean done;
    private boolean holding;

    /**
     * @param forward  where the (possibly damaged) bytes go: the other leg's write
     * @param closeBoth closes both legs (for {@link Fault#TRUNCATE})
     * @param injected counts destructive faults injected
     */
    FaultInjector(Fault fault, long after, long seed, AtomicLong injected, java.util.function.Consumer<Object> forward,
            Runnable closeBoth) {
        this.fault = fault;
        this.after = after;
        this.random = new SplittableRandom(seed);
        this.injected = injected;
        this.forward = forward;
        this.closeBoth = closeBoth;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        long start = seen;
        seen += in.readableBytes();
        if (fault == Fault.RESEGMENT_AND_DELAY) {
            resegment(ctx, in);
            return;
        }
        if (done || seen <= after) {
            forward.accept(in);
            return;
        }
        done = true;
        injected.incrementAndGet();
        int at = (int) Math.max(0, after - start);
        switch (fault) {
            case DROP -> {
                int n = Math.min(1 + random.nextInt(16), in.readableBytes() - at);
                ByteBuf out = ctx.alloc().buffer(in.readableBytes() - n);
                out.writeBytes(in, in.readerIndex(), at).writeBytes(in, in.readerIndex() + at + n,
                        in.readableBytes() - at - n);
                in.release();
                forward.accept(out);
            }
            case CORRUPT -> {
                int index = in.readerIndex() + at;
                in.setByte(index, in.getByte(index) ^ (1 << random.nextInt(8)));
                forward.accept(in);
            }
            case TRUNCATE -> {
                forward.accept(in.retainedSlice(in.readerIndex(), at));
                in.release();
                closeBoth.run();
            }
            default -> throw new IllegalStateException(fault.toString());
        }
    }

    /** Passes {@code in} on in small pieces, now and then a few milliseconds later, order kept. */
    private void resegment(ChannelHandlerContext ctx, ByteBuf in) {
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
                for (ByteBuf next; (next = held.poll()) != null; ) {
                    split(next);
                }
            }, 1 + random.nextInt(5), TimeUnit.MILLISECONDS);
            return;
        }
        split(in);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        for (ByteBuf next; (next = held.poll()) != null; ) {
            next.release();
        }
        ctx.fireChannelInactive();
    }

    /** Into pieces of 1 to 2048 octets (each its own write, so TCP segments differ from the sender's). */
    private void split(ByteBuf in) {
        while (in.readableBytes() > 2048) {
            forward.accept(in.readRetainedSlice(1 + random.nextInt(2048)));
        }
        forward.accept(in);
    }
}
