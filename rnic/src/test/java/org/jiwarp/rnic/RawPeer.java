package org.jiwarp.rnic;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.mpa.MpaInitiatorHandler;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * A hostile iWARP initiator for tests: a bare Netty NIO client that sets up MPA with
 * {@link MpaInitiatorHandler} like any initiator, and from then on sends whatever ULPDUs a test
 * hand-crafts, however wrong. Every {@link ByteBuf} it sends is one ULPDU, framed into one FPDU by
 * the {@code FpduFramer} MPA installed; every inbound ULPDU is copied and released at once.
 *
 * <pre>
 *   socket -> [corrupter] -> FpduDeframer -> FpduFramer -> recorder
 * </pre>
 *
 * <p>The corrupter, at the head of the pipeline, flips one octet of the next FPDU after its CRC was
 * computed, when a test asks for it ({@link #sendCorrupted(ByteBuf)}). The recorder keeps untagged
 * ULPDUs (Read Requests, Terminates, Sends) as byte arrays; tagged Read Responses, which a test may
 * provoke by the megabyte, are only counted.
 */
public final class RawPeer implements AutoCloseable {

    /** The longest the peer waits for its own connect, write or close. */
    private static final long WAIT_SECONDS = 10;

    private final EventLoopGroup group;
    private final Channel channel;
    private final Recorder recorder = new Recorder();
    private final Corrupter corrupter = new Corrupter();
    private final MpaParameters parameters;

    private RawPeer(InetSocketAddress server, MpaSettings settings, byte[] privateData, int receiveBuffer)
            throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast("corrupter", corrupter);
                            ch.pipeline().addLast("mpa", new MpaInitiatorHandler(settings, privateData));
                            ch.pipeline().addLast("recorder", recorder);
                        }
                    });
            if (receiveBuffer > 0) {
                // A fixed receive buffer (no autotuning): with auto-read off the peer then holds back
                // the server's sends after at most this many octets.
                bootstrap.option(ChannelOption.SO_RCVBUF, receiveBuffer);
            }
            channel = awaitDone(bootstrap.connect(server), "connecting to " + server).channel();
            parameters = recorder.established.get(10, TimeUnit.SECONDS);
        } catch (Exception | Error e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** Connects to {@code server} and completes MPA setup; the kernel picks the receive buffer. */
    public static RawPeer connect(InetSocketAddress server, MpaSettings settings) throws Exception {
        return new RawPeer(server, settings, new byte[] {'r', 'a', 'w'}, 0);
    }

    /** As {@link #connect(InetSocketAddress, MpaSettings)} with a fixed SO_RCVBUF of {@code receiveBuffer}. */
    public static RawPeer connect(InetSocketAddress server, MpaSettings settings, int receiveBuffer) throws Exception {
        return new RawPeer(server, settings, new byte[] {'r', 'a', 'w'}, receiveBuffer);
    }

    /** What MPA negotiated. */
    public MpaParameters parameters() {
        return parameters;
    }

    public Channel channel() {
        return channel;
    }

    /** A heap buffer to build a ULPDU in. */
    public static ByteBuf buffer() {
        return Unpooled.buffer(64);
    }

    /**
     * Sends {@code ulpdu} (taking ownership) as one FPDU and waits until it went to the socket.
     *
     * @return a copy of the ULPDU's octets, to compare with what a Terminate carries
     */
    public byte[] send(ByteBuf ulpdu) {
        byte[] copy = ByteBufUtil.getBytes(ulpdu);
        awaitDone(channel.writeAndFlush(ulpdu), "sending a ULPDU of " + copy.length + " octets (the server reads no more?)");
        return copy;
    }

    /** Sends {@code ulpdu} with one octet of its FPDU flipped after the CRC was computed. */
    public byte[] sendCorrupted(ByteBuf ulpdu) {
        return sendCorrupted(ulpdu, -1, 0x01);
    }

    /**
     * Sends {@code ulpdu} with the bits {@code mask} of its octet {@code offset} flipped on the wire
     * after its FPDU's CRC was computed (-1: its last octet), as a bit error on the link would;
     * returns the ULPDU as it was before the flip.
     */
    public byte[] sendCorrupted(ByteBuf ulpdu, int offset, int mask) {
        corrupter.offset = offset;
        corrupter.mask = mask;
        corrupter.armed = true;
        return send(ulpdu);
    }

    /** Sends every ULPDU in one flush (so they reach the server in as few TCP segments as possible). */
    public List<byte[]> sendBurst(List<ByteBuf> ulpdus) {
        List<byte[]> copies = new ArrayList<>(ulpdus.size());
        for (ByteBuf ulpdu : ulpdus) {
            copies.add(ByteBufUtil.getBytes(ulpdu));
            channel.write(ulpdu);
        }
        channel.flush();
        return copies;
    }

    public void autoRead(boolean on) {
        channel.config().setAutoRead(on);
    }

    /** The first recorded untagged ULPDU matching {@code match}, waiting up to {@code millis}. */
    public byte[] await(Predicate<byte[]> match, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (recorder) {
            while (true) {
                for (byte[] ulpdu : recorder.ulpdus) {
                    if (match.test(ulpdu)) {
                        return ulpdu;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                TimeUnit.NANOSECONDS.timedWait(recorder, left);
            }
        }
    }

    /** The Terminate the server sent (untagged, opcode 7, QN 2); fails after 10 s. */
    public byte[] awaitTerminate() throws InterruptedException {
        byte[] terminate = await(Ulpdus::isTerminate, 10_000);
        if (terminate == null) {
            throw new AssertionError("no Terminate within 10 s; received " + describeReceived());
        }
        return terminate;
    }

    /** The next Read Request the server sent (untagged, opcode 1, QN 1); fails after 10 s. */
    public byte[] awaitReadRequest() throws InterruptedException {
        byte[] request = await(
                u -> Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST, DdpHeaders.QN_READ_REQUEST), 10_000);
        if (request == null) {
            throw new AssertionError("no Read Request within 10 s; received " + describeReceived());
        }
        return request;
    }

    /** Every untagged ULPDU received so far. */
    public List<byte[]> received() {
        synchronized (recorder) {
            return new ArrayList<>(recorder.ulpdus);
        }
    }

    /** Octets of Read Response payload received so far (counted, not kept). */
    public long readResponseOctets() {
        return recorder.readResponseOctets.get();
    }

    private String describeReceived() {
        StringBuilder s = new StringBuilder();
        for (byte[] ulpdu : received()) {
            s.append(ByteBufUtil.hexDump(ulpdu, 0, Math.min(ulpdu.length, 24))).append(' ');
        }
        return s.append("(+").append(readResponseOctets()).append(" Read Response octets), channel ")
                .append(channel.isActive() ? "open" : "closed").toString();
    }

    /** Waits until the server closed the connection (or it closed here); fails after 10 s. */
    public void awaitClose() {
        if (!channel.closeFuture().awaitUninterruptibly(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the connection is still open after 10 s");
        }
    }

    /** Closes with FIN (an orderly TCP close, in whatever state the iWARP stream is). */
    public void closeGracefully() {
        awaitDone(channel.close(), "closing");
    }

    /** Resets the connection: SO_LINGER 0, then close, so TCP sends RST. */
    public void reset() {
        channel.config().setOption(ChannelOption.SO_LINGER, 0);
        awaitDone(channel.close(), "resetting");
    }

    @Override
    public void close() {
        awaitDone(channel.close(), "closing");
        if (!group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("the raw peer's event loop did not stop within " + WAIT_SECONDS + " s");
        }
    }

    /**
     * Waits for {@code future} at most {@value #WAIT_SECONDS} s (Netty's own {@code sync} waits
     * forever); rethrows its failure, and fails saying what did not finish.
     */
    private static ChannelFuture awaitDone(ChannelFuture future, String what) {
        if (!future.awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("the raw peer is still " + what + " after " + WAIT_SECONDS + " s");
        }
        future.syncUninterruptibly(); // done: rethrows its failure, if any
        return future;
    }

    /** Completes setup and keeps what arrives. Not sharable. */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        final CompletableFuture<MpaParameters> established = new CompletableFuture<>();
        final List<byte[]> ulpdus = new ArrayList<>();
        final AtomicLong readResponseOctets = new AtomicLong();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                established.complete(((MpaEstablishedEvent) evt).parameters());
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf ulpdu = (ByteBuf) msg;
            try {
                int at = ulpdu.readerIndex();
                if (ulpdu.readableBytes() >= DdpHeaders.TAGGED_HEADER_LENGTH && DdpHeaders.tagged(ulpdu, at)
                        && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.RDMA_READ_RESPONSE) {
                    readResponseOctets.addAndGet(ulpdu.readableBytes() - DdpHeaders.TAGGED_HEADER_LENGTH);
                    return;
                }
                byte[] copy = ByteBufUtil.getBytes(ulpdu);
                synchronized (this) {
                    ulpdus.add(copy);
                    notifyAll();
                }
            } finally {
                ulpdu.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            established.completeExceptionally(new IllegalStateException("closed during MPA setup"));
            synchronized (this) {
                notifyAll();
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A raw peer expects to be terminated and reset; what matters is what arrived.
            established.completeExceptionally(cause);
        }
    }

    /**
     * Flips the last ULPDU octet of the next FPDU once armed (the CRC no longer matches). The framer
     * writes an FPDU as several buffers (length field, ULPDU pieces, pad and CRC): the octet is
     * counted from the first buffer after arming, whichever buffer it falls in is copied and flipped.
     */
    private static final class Corrupter extends ChannelOutboundHandlerAdapter {
        volatile boolean armed;
        /** The ULPDU octet to flip (-1: the last), and the bits. */
        volatile int offset = -1;
        volatile int mask = 0x01;
        /** Octets still to pass before the one to flip, or -1 until the next FPDU's length is seen. */
        private int untilTarget = -1;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (!armed || !(msg instanceof ByteBuf) || !((ByteBuf) msg).isReadable()) {
                ctx.write(msg, promise);
                return;
            }
            ByteBuf piece = (ByteBuf) msg;
            if (untilTarget < 0) {
                // No markers here: the FPDU starts with ULPDU_LENGTH, then the ULPDU.
                untilTarget = Fpdu.HEADER_LENGTH + (offset >= 0 ? offset
                        : Fpdu.ulpduLength(piece, piece.readerIndex()) - 1);
            }
            int length = piece.readableBytes();
            if (untilTarget >= length) {
                untilTarget -= length;
                ctx.write(msg, promise);
                return;
            }
            ByteBuf copy = ctx.alloc().buffer(length);
            copy.writeBytes(piece, piece.readerIndex(), length);
            piece.release();
            copy.setByte(untilTarget, copy.getByte(untilTarget) ^ mask);
            armed = false;
            untilTarget = -1;
            ctx.write(copy, promise);
        }
    }
}
