package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The MPA negotiation as octets on a real TCP connection, against a hand-written peer: what jiwarp's
 * responder puts in its Reply for each kind of Request (RFC 5044 section 7.1, RFC 6581 sections 6,
 * 9 and 10), what jiwarp's initiator puts in its Request, and the first FPDUs of full operation
 * (markers and CRC as negotiated, the ULPDU the same either way). {@link MpaNegotiationTableTest}
 * checks every combination jiwarp-to-jiwarp; this checks the bytes a foreign peer sees.
 */
class MpaNegotiationOnTheWireTest {

    private static final byte[] FROM_PEER = "ulpdu-from-peer".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FROM_JIWARP = "ulpdu-from-jiwarp".getBytes(StandardCharsets.US_ASCII);
    private static final int MILLIS = 5000;

    private static EventLoopGroup group;

    @BeforeAll
    static void start() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** A frame as it crossed the wire. */
    record Frame(int flags, int revision, byte[] privateData) {

        int reserved(boolean rfc6581) {
            return flags & (rfc6581 ? MpaFrames.RESERVED_MASK : MpaFrames.RESERVED_MASK_RFC5044);
        }

        boolean enhanced() {
            return (flags & MpaFrames.ENHANCED_FLAG) != 0;
        }

        int irdWord() {
            return (privateData[0] & 0xFF) << 8 | privateData[1] & 0xFF;
        }

        int ordWord() {
            return (privateData[2] & 0xFF) << 8 | privateData[3] & 0xFF;
        }

        static Frame read(DataInputStream in, byte[] key) throws IOException {
            byte[] header = new byte[MpaFrames.HEADER_LENGTH];
            in.readFully(header);
            byte[] seenKey = new byte[MpaFrames.KEY_LENGTH];
            System.arraycopy(header, 0, seenKey, 0, seenKey.length);
            assertArrayEquals(key, seenKey, "key: " + new String(seenKey, StandardCharsets.US_ASCII));
            byte[] data = new byte[(header[18] & 0xFF) << 8 | header[19] & 0xFF];
            in.readFully(data);
            return new Frame(header[MpaFrames.FLAGS_OFFSET] & 0xFF, header[MpaFrames.REVISION_OFFSET] & 0xFF, data);
        }
    }

    /** A Request or Reply's octets; enhanced frames carry the RFC 6581 words first. */
    private static byte[] frame(boolean reply, int flags, int revision, int ird, int ord, Set<RtrType> rtr, byte[] ulp) {
        ByteBuf data = Unpooled.buffer();
        ByteBuf out = Unpooled.buffer();
        try {
            if ((flags & MpaFrames.ENHANCED_FLAG) != 0) {
                MpaEnhanced.write(data, ird, ord, !rtr.isEmpty(), rtr.contains(RtrType.SEND), rtr.contains(RtrType.WRITE),
                        rtr.contains(RtrType.READ));
            }
            data.writeBytes(ulp);
            MpaFrames.write(out, reply, flags, revision, data);
            return ByteBufUtil.getBytes(out);
        } finally {
            data.release();
            out.release();
        }
    }

    /** An FPDU without markers: length, ULPDU, pad, and the CRC (little-endian) or zero. */
    private static byte[] fpdu(byte[] ulpdu, boolean crc) {
        int padded = (2 + ulpdu.length + 3) & ~3;
        ByteBuf out = Unpooled.buffer(padded + 4);
        try {
            out.writeShort(ulpdu.length).writeBytes(ulpdu).writeZero(padded - 2 - ulpdu.length);
            out.writeIntLE(crc ? Crc32c.compute(out, 0, padded) : 0);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** The application above jiwarp's MPA handler: sends one ULPDU once established, records what arrives. */
    private static final class Application extends ChannelInboundHandlerAdapter {
        final CompletableFuture<MpaParameters> established = new CompletableFuture<>();
        final List<byte[]> received = new CopyOnWriteArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                established.complete(((MpaEstablishedEvent) evt).parameters());
                ctx.writeAndFlush(Unpooled.wrappedBuffer(FROM_JIWARP));
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                received.add(ByteBufUtil.getBytes(buf));
            } finally {
                buf.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            established.completeExceptionally(cause);
            ctx.close();
        }
    }

    /** jiwarp responds; the raw peer sends {@code request} and returns the Reply it read. */
    private static Frame respond(MpaSettings settings, byte[] request, Application app, RawPeer after) throws Exception {
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new MpaResponderHandler(settings, MpaAcceptor.ACCEPT_ALL), app);
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        try (Socket socket = new Socket()) {
            socket.connect(server.localAddress(), MILLIS);
            socket.setSoTimeout(MILLIS);
            socket.getOutputStream().write(request);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            Frame reply = Frame.read(in, MpaFrames.replyKey());
            if (after != null) {
                after.run(socket, in, reply);
            }
            return reply;
        } finally {
            server.close().sync();
        }
    }

    /** What the raw peer does after the Reply. */
    @FunctionalInterface
    private interface RawPeer {
        void run(Socket socket, DataInputStream in, Frame reply) throws Exception;
    }

    @Test
    void theReplyAnswersEachKindOfRequestInKind() throws Exception {
        MpaSettings settings = MpaSettings.builder().peerToPeer(true).rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ))
                .build();
        byte[] ulp = {7, 7};
        // RFC 6581 section 6 and 10: a revision 1 Request is still accepted, with a revision 1 Reply
        // (RFC 5044 section 7.1.1: the Reply carries the revision in use); not enhanced.
        Frame rev1 = respond(settings, frame(false, 0, MpaFrames.REVISION_1, 0, 0, Set.of(), ulp), new Application(), null);
        assertEquals(MpaFrames.REVISION_1, rev1.revision());
        assertEquals(0, rev1.flags() & MpaFrames.REJECT_FLAG, "a revision 1 Request is accepted");
        assertEquals(0, rev1.reserved(false), "RFC 5044 Res bits");
        assertArrayEquals(new byte[0], rev1.privateData(), "private data exactly as the application gave it (none)");
        // RFC 6581 section 10: an unenhanced revision 2 Request gets an unenhanced Reply.
        Frame plain = respond(settings, frame(false, 0, MpaFrames.REVISION_2, 0, 0, Set.of(), ulp), new Application(), null);
        assertEquals(MpaFrames.REVISION_2, plain.revision());
        assertFalse(plain.enhanced(), "unenhanced Request, enhanced Reply");
        assertEquals(0, plain.reserved(true), "RFC 6581 section 6: Res bits");
        assertArrayEquals(new byte[0], plain.privateData(), "no IRD/ORD words in an unenhanced Reply");
        // RFC 6581 section 10: an enhanced Request gets an enhanced Reply, its ORD within our IRD (9.1).
        Frame enhanced = respond(settings, frame(false, MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, 3, 5, Set.of(),
                ulp), new Application(), null);
        assertTrue(enhanced.enhanced(), "enhanced Request, unenhanced Reply");
        assertEquals(0, enhanced.reserved(true), "RFC 6581 section 6: Res bits");
        assertEquals(MpaEnhanced.LENGTH, enhanced.privateData().length, "the IRD/ORD words and nothing else");
        assertTrue((enhanced.ordWord() & MpaEnhanced.VALUE_MASK) <= 3, "Reply ORD above the Request's IRD 3");
        assertEquals(0, enhanced.irdWord() & MpaEnhanced.PEER_TO_PEER, "A set without a peer-to-peer Request");
    }

    @Test
    void aPeerToPeerReplySetsOnlyOfferedRtrOptionsAndAtLeastOne() throws Exception {
        MpaSettings settings = MpaSettings.builder().peerToPeer(true).rtrOffers(EnumSet.allOf(RtrType.class)).build();
        for (Set<RtrType> offered : List.of(EnumSet.of(RtrType.WRITE), EnumSet.of(RtrType.READ), EnumSet.of(RtrType.SEND),
                EnumSet.allOf(RtrType.class))) {
            Frame reply = respond(settings, frame(false, MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, 4, 4, offered,
                    new byte[0]), new Application(), null);
            assertTrue(reply.enhanced(), offered + ": enhanced");
            // RFC 6581 section 9.2: A set, at least one of the offered options, none that was not offered.
            assertTrue((reply.irdWord() & MpaEnhanced.PEER_TO_PEER) != 0, offered + ": A");
            Set<RtrType> chosen = EnumSet.noneOf(RtrType.class);
            if ((reply.irdWord() & MpaEnhanced.SEND_RTR) != 0) {
                chosen.add(RtrType.SEND);
            }
            if ((reply.ordWord() & MpaEnhanced.WRITE_RTR) != 0) {
                chosen.add(RtrType.WRITE);
            }
            if ((reply.ordWord() & MpaEnhanced.READ_RTR) != 0) {
                chosen.add(RtrType.READ);
            }
            assertFalse(chosen.isEmpty(), offered + ": no RTR option in the Reply");
            assertTrue(offered.containsAll(chosen), offered + ": the Reply chose " + chosen);
        }
    }

    @Test
    void fullOperationCarriesMarkersAndCrcAsNegotiatedAndTheSameUlpdus() throws Exception {
        for (boolean crc : new boolean[] {false, true}) {
            Application app = new Application();
            MpaSettings settings = MpaSettings.builder().crc(CrcPolicy.ACCEPT).markers(MarkerPolicy.ACCEPT).build();
            byte[] request = frame(false, crc ? MpaFrames.CRC_FLAG : 0, MpaFrames.REVISION_2, 0, 0, Set.of(), new byte[0]);
            Frame reply = respond(settings, request, app, (socket, in, r) -> {
                // RFC 5044 section 7.1.1: a responder honours C = 1; CRCs then run both ways.
                assertEquals(crc, (r.flags() & MpaFrames.CRC_FLAG) != 0, "C in the Reply");
                socket.getOutputStream().write(fpdu(FROM_PEER, crc));
                // M = 0 in the Request: no marker in what the responder sends (the first would lead its first FPDU).
                byte[] expected = fpdu(FROM_JIWARP, crc);
                byte[] seen = new byte[expected.length];
                in.readFully(seen);
                assertArrayEquals(expected, seen, "the responder's first FPDU, crc=" + crc);
            });
            assertEquals(0, reply.flags() & MpaFrames.MARKER_FLAG, "the responder asked for markers");
            MpaParameters parameters = app.established.get(MILLIS, TimeUnit.MILLISECONDS);
            // RFC 5044 section 7.1 / 4.4: the revision and CRC reach the layer above; the ULPDU is the same either way.
            assertEquals(MpaFrames.REVISION_2, parameters.revision());
            assertEquals(crc, parameters.crc());
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MILLIS);
            while (app.received.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, app.received.size(), "ULPDUs delivered, crc=" + crc);
            assertArrayEquals(FROM_PEER, app.received.get(0), "the ULPDU as delivered, crc=" + crc);
        }
    }

    @Test
    void theRequestSaysWhatTheInitiatorWants() throws Exception {
        byte[] ulp = {1, 2, 3};
        // RFC 6581 section 9.2: peer-to-peer sets A and the flag of each RTR option offered.
        Frame p2p = initiate(MpaSettings.builder().peerToPeer(true).rtrOffers(EnumSet.of(RtrType.WRITE)).build(), ulp);
        assertEquals(MpaFrames.REVISION_2, p2p.revision());
        assertTrue(p2p.enhanced());
        assertEquals(0, p2p.reserved(true), "RFC 6581 section 6: Res bits");
        assertTrue((p2p.irdWord() & MpaEnhanced.PEER_TO_PEER) != 0, "A");
        assertTrue((p2p.ordWord() & MpaEnhanced.WRITE_RTR) != 0, "the Write RTR offered");
        assertEquals(0, p2p.ordWord() & MpaEnhanced.READ_RTR, "the Read RTR was not offered");
        assertEquals(0, p2p.irdWord() & MpaEnhanced.SEND_RTR, "the Send RTR was not offered");
        // RFC 6581 section 10: an initiator not wanting the enhanced setup uses no enhanced format.
        Frame plain = initiate(MpaSettings.builder().enhanced(false).build(), ulp);
        assertFalse(plain.enhanced(), "enhanced flag without the enhanced setup");
        assertArrayEquals(ulp, plain.privateData(), "IRD/ORD words without the enhanced setup");
        assertEquals(0, plain.reserved(true), "RFC 6581 section 6: Res bits");
        Frame rev1 = initiate(MpaSettings.builder().revision(1).build(), ulp);
        assertEquals(MpaFrames.REVISION_1, rev1.revision());
        assertFalse(rev1.enhanced());
        assertEquals(0, rev1.reserved(false), "RFC 5044 Res bits");
    }

    @Test
    void aGoodReplyTakesTheInitiatorIntoFullOperation() throws Exception {
        Application app = new Application();
        MpaSettings settings = MpaSettings.builder().enhanced(false).crc(CrcPolicy.ACCEPT).build();
        try (ServerSocket listener = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Channel client = connect(listener, settings, app, new byte[0]);
            try (Socket socket = listener.accept()) {
                socket.setSoTimeout(MILLIS);
                DataInputStream in = new DataInputStream(socket.getInputStream());
                Frame request = Frame.read(in, MpaFrames.requestKey());
                // RFC 5044 section 7.1.2: R = 0 and the initiator is in full operation: it sends FPDUs.
                socket.getOutputStream().write(frame(true, request.flags() & MpaFrames.CRC_FLAG, request.revision(), 0, 0,
                        Set.of(), new byte[0]));
                boolean crc = (request.flags() & MpaFrames.CRC_FLAG) != 0;
                byte[] expected = fpdu(FROM_JIWARP, crc);
                byte[] seen = new byte[expected.length];
                in.readFully(seen);
                assertArrayEquals(expected, seen, "the initiator's first FPDU");
                MpaParameters parameters = app.established.get(MILLIS, TimeUnit.MILLISECONDS);
                assertEquals(request.revision(), parameters.revision(), "the revision on the wire reaches DDP");
            } finally {
                client.close().sync();
            }
        }
    }

    private static Frame initiate(MpaSettings settings, byte[] ulp) throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Channel client = connect(listener, settings, new Application(), ulp);
            try (Socket socket = listener.accept()) {
                socket.setSoTimeout(MILLIS);
                return Frame.read(new DataInputStream(socket.getInputStream()), MpaFrames.requestKey());
            } finally {
                client.close().sync();
            }
        }
    }

    private static Channel connect(ServerSocket listener, MpaSettings settings, Application app, byte[] ulp)
            throws InterruptedException {
        Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new MpaInitiatorHandler(settings, ulp), app);
                    }
                }).connect(listener.getLocalSocketAddress()).sync().channel();
        assertNotNull(client);
        return client;
    }
}
