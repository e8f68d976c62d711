package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two real TCP sockets over loopback: MPA setup with CRC and markers required by both sides, then
 * {@code -Djiwarp.loopbackBytes} (1 GiB by default) of ULPDUs each way, every byte checked.
 * Nothing here is timed; the throughput is printed for information only.
 */
class MpaLoopbackTest {

    private static final long BYTES = Long.getLong("jiwarp.loopbackBytes", 1L << 30);
    /** Content at stream offset o is PATTERN[o % PATTERN.length]; the prime length keeps it off any boundary. */
    private static final byte[] PATTERN = new byte[65521];

    static {
        new SplittableRandom(0x5EED).nextBytes(PATTERN);
    }

    @Test
    void oneGibibyteEachWayWithMarkersAndCrc() throws Exception {
        // Paranoid leak detection records a stack trace on every buffer access, which turns a GiB into
        // minutes; this bulk run samples leaks instead (every other test in the module stays paranoid).
        io.netty.util.ResourceLeakDetector.Level level = io.netty.util.ResourceLeakDetector.getLevel();
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.SIMPLE);
        try {
            transfer();
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(level);
        }
    }

    private void transfer() throws Exception {
        MpaSettings settings = MpaSettings.builder().crc(CrcPolicy.REQUIRE).markers(MarkerPolicy.REQUEST).build();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        Transfer serverSide = new Transfer(BYTES, 2);
        Transfer clientSide = new Transfer(BYTES, 1);
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new MpaResponderHandler(settings, MpaAcceptor.ACCEPT_ALL), serverSide);
                        }
                    }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new MpaInitiatorHandler(settings, new byte[] {1, 2, 3}), clientSide);
                        }
                    }).connect(server.localAddress()).sync().channel();
            long start = System.nanoTime();
            try {
                // 24 s here with the machine otherwise idle; the module's test deadline (4 minutes) is
                // the bound, these only say which side did not finish.
                clientSide.done.get(3, TimeUnit.MINUTES);
                serverSide.done.get(3, TimeUnit.MINUTES);
            } catch (java.util.concurrent.ExecutionException e) {
                java.util.concurrent.TimeUnit.MILLISECONDS.sleep(200);
                throw new AssertionError("client: " + clientSide.failure + "; server: " + serverSide.failure, e);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("MPA loopback with CRC and markers: %d MiB each way in %.1f s (%.0f MiB/s each way)%n",
                    BYTES >> 20, seconds, (BYTES >> 20) / seconds);
            for (Transfer side : new Transfer[] {clientSide, serverSide}) {
                assertNull(side.failure, () -> String.valueOf(side.failure));
                assertEquals(BYTES, side.received);
                assertEquals(BYTES, side.sent);
                assertTrue(side.parameters.crc() && side.parameters.markersToPeer() && side.parameters.markersFromPeer());
            }
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Sends {@code total} octets in ULPDUs of seeded random sizes while writable; checks what arrives. */
    private static final class Transfer extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final long total;
        private final SplittableRandom sizes;
        private final SplittableRandom expectedSizes;
        volatile MpaParameters parameters;
        volatile Throwable failure;
        volatile long sent;
        volatile long received;
        private long ulpdus;

        Transfer(long total, long seed) {
            this.total = total;
            this.sizes = new SplittableRandom(seed);
            // The peer's sender uses the other seed; its sizes are regenerated here to check boundaries.
            this.expectedSizes = new SplittableRandom(3 - seed);
        }

        private static int nextSize(SplittableRandom random, int mulpdu) {
            // Mostly full FPDUs, sometimes small or empty ones; markers fall inside anything over 508 octets.
            int choice = random.nextInt(8);
            return choice == 0 ? random.nextInt(64) : choice == 1 ? random.nextInt(mulpdu + 1) : mulpdu;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                parameters = ((MpaEstablishedEvent) evt).parameters();
                pump(ctx);
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            pump(ctx);
            ctx.fireChannelWritabilityChanged();
        }

        private boolean pumping;

        private void pump(ChannelHandlerContext ctx) {
            // ctx.write() and flush() can fire channelWritabilityChanged() right here: don't re-enter.
            if (parameters == null || pumping) {
                return;
            }
            pumping = true;
            try {
                int mulpdu = parameters.mulpdu();
                while (sent < total && ctx.channel().isWritable()) {
                    int length = (int) Math.min(nextSize(sizes, mulpdu), total - sent);
                    ByteBuf ulpdu = ctx.alloc().directBuffer(length);
                    fill(ulpdu, sent, length);
                    sent += length;
                    ctx.write(ulpdu);
                }
                ctx.flush();
            } finally {
                pumping = false;
            }
            if (sent < total && ctx.channel().isWritable()) {
                ctx.executor().execute(() -> pump(ctx));
            }
        }

        private static void fill(ByteBuf out, long offset, int length) {
            int at = (int) (offset % PATTERN.length);
            while (length > 0) {
                int chunk = Math.min(length, PATTERN.length - at);
                out.writeBytes(PATTERN, at, chunk);
                length -= chunk;
                at = 0;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf ulpdu = (ByteBuf) msg;
            try {
                int expected = (int) Math.min(nextSize(expectedSizes, peerMulpdu()), total - received);
                if (ulpdu.readableBytes() != expected) {
                    fail(ctx, new AssertionError("ULPDU " + ulpdus + " has " + ulpdu.readableBytes()
                            + " octets, expected " + expected));
                    return;
                }
                int at = (int) (received % PATTERN.length);
                int index = ulpdu.readerIndex();
                int left = expected;
                while (left > 0) {
                    int chunk = Math.min(left, PATTERN.length - at);
                    if (!ByteBufUtil.equals(ulpdu, index, Unpooled.wrappedBuffer(PATTERN), at, chunk)) {
                        fail(ctx, new AssertionError("ULPDU " + ulpdus + " differs near stream offset " + received));
                        return;
                    }
                    index += chunk;
                    left -= chunk;
                    at = 0;
                }
                received += expected;
                ulpdus++;
                if (received == total) {
                    done.complete(null);
                }
            } finally {
                ulpdu.release();
            }
        }

        private int peerMulpdu() {
            // Both sides insert markers, so both have the same MULPDU.
            return parameters.mulpdu();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(ctx, cause);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (received < total) {
                fail(ctx, new AssertionError("connection closed after " + received + " octets"));
            }
        }

        private void fail(ChannelHandlerContext ctx, Throwable cause) {
            if (failure == null) {
                failure = cause;
            }
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
