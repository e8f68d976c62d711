package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.testing.Property;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.TcpConversation;
import org.jiwarp.capture.pcap.TcpConversations;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link RnicOptions#capture(Path)} over real loopback TCP: two RNICs capture every connection (one
 * file per end), with CRC and markers each on and off; one connection does Send, Write and Read
 * both ways, another ends in a Terminate. jiwarp's decoder then finds every FPDU, one per TCP
 * segment in both directions, with good CRCs, the expected opcodes and the Terminate's RFC error;
 * and the two ends' files of a connection tell the same story. {@link PcapSegmenter} is held to
 * split-anywhere: any cut of the same bytes gives the same units.
 */
class PcapCaptureTest {

    static Stream<org.junit.jupiter.params.provider.Arguments> framing() {
        return RnicOperationsTest.framing();
    }

    @ParameterizedTest(name = "crc={0} markers={1}")
    @MethodSource("framing")
    void everyConnectionIsCapturedOneFpduPerSegment(boolean crc, boolean markers, @TempDir Path directory)
            throws Exception {
        Connection operations;
        Connection terminated;
        try (Peers peers = new Peers(RnicOperationsTest.mpa(crc, markers), directory)) {
            operations = peers.connect();
            operations.sendWriteReadAndDisconnect();
            terminated = peers.connect();
            terminated.writeToAnInvalidStag();
        }
        try (Stream<Path> files = Files.list(directory)) {
            assertEquals(Set.of(operations.clientFile(), operations.serverFile(), terminated.clientFile(),
                    terminated.serverFile()), files.map(p -> p.getFileName().toString()).collect(Collectors.toSet()));
        }
        for (Connection connection : List.of(operations, terminated)) {
            CaptureDecode client = checkCapture(directory.resolve(connection.clientFile()), crc, markers);
            CaptureDecode server = checkCapture(directory.resolve(connection.serverFile()), crc, markers);
            // Both ends saw the same PDUs each way (their interleaving may differ).
            assertEquals(byDirection(client), byDirection(server), connection.clientFile() + " vs " + connection.serverFile());
        }
        Set<String> opcodes = opcodes(directory.resolve(operations.clientFile()));
        for (String expected : List.of("0x00", "0x01", "0x02", "0x03")) {
            assertTrue(opcodes.contains(expected), "opcode " + expected + " missing: " + opcodes);
        }
        for (Path file : List.of(directory.resolve(terminated.clientFile()), directory.resolve(terminated.serverFile()))) {
            List<TerminateError> errors = new ArrayList<>();
            for (DecodedPdu pdu : decode(file).pdus()) {
                if (pdu.terminateError() != null) {
                    errors.add(pdu.terminateError());
                }
            }
            assertEquals(List.of(TerminateError.DDP_TAGGED_INVALID_STAG), errors, file.toString());
        }
    }

    /** Decodes a capture and checks what every capture must satisfy; returns the decode. */
    private static CaptureDecode checkCapture(Path file, boolean crc, boolean markers) throws Exception {
        PcapFile pcap = PcapFile.read(file);
        CaptureDecode decode = IwarpStreamDecoder.decode(pcap);
        String name = file.getFileName().toString();
        assertEquals(1, decode.iwarpConversations(), name);
        assertEquals(List.of(), decode.notes(), name + ": every byte is part of a whole PDU");
        TcpConversation conversation = TcpConversations.of(pcap).conversations().get(0);
        assertFalse(conversation.clientToServer().hasGap() || conversation.serverToClient().hasGap(), name);
        // SYN, SYN-ACK, ACK, then one PDU per data segment, then FIN-ACK, FIN-ACK, ACK.
        assertEquals(pcap.records().size() - 6, decode.pdus().size(), name + ": one PDU per data segment");
        Set<Integer> frames = new LinkedHashSet<>();
        boolean markerSeen = false;
        for (DecodedPdu pdu : decode.pdus()) {
            assertTrue(frames.add(pdu.frameNumber()), name + ": two PDUs in frame " + pdu.frameNumber());
            assertTrue(pdu.frameNumber() > 3 && pdu.frameNumber() <= pcap.records().size() - 3, name + " " + pdu);
            assertEquals(List.of(), pdu.problems(), name + " " + pdu);
            if (pdu.kind() == DecodedPdu.Kind.FPDU) {
                assertEquals(crc ? Boolean.TRUE : null, pdu.crcGood(), name + " " + pdu);
                markerSeen |= pdu.fields().containsKey("iwarp_mpa.marker_fpduptr");
            } else {
                assertEquals(markers ? "1" : "0", pdu.fields().get("iwarp_mpa.marker_flag"), name + " " + pdu);
                assertEquals(crc ? "1" : "0", pdu.fields().get("iwarp_mpa.crc_flag"), name + " " + pdu);
            }
        }
        assertEquals(markers, markerSeen, name + ": markers");
        assertEquals(DecodedPdu.Kind.MPA_REQUEST, decode.pdus().get(0).kind(), name);
        assertEquals(DecodedPdu.Kind.MPA_REPLY, decode.pdus().get(1).kind(), name);
        return decode;
    }

    private static List<List<String>> byDirection(CaptureDecode decode) {
        List<String> toServer = new ArrayList<>();
        List<String> toClient = new ArrayList<>();
        String client = decode.pdus().get(0).source();
        for (DecodedPdu pdu : decode.pdus()) {
            String line = pdu.source() + " " + pdu.destination() + " " + pdu.summary() + " " + pdu.fields();
            (pdu.source().equals(client) ? toServer : toClient).add(line);
        }
        return List.of(toServer, toClient);
    }

    private static Set<String> opcodes(Path file) throws Exception {
        Set<String> opcodes = new LinkedHashSet<>();
        for (DecodedPdu pdu : decode(file).pdus()) {
            String opcode = pdu.fields().get("iwarp_rdma.opcode");
            if (opcode != null) {
                opcodes.add(opcode);
            }
        }
        return opcodes;
    }

    private static CaptureDecode decode(Path file) throws Exception {
        return IwarpStreamDecoder.decode(PcapFile.read(file));
    }

    @Test
    void captureOffInstallsNothing() throws Exception {
        try (Peers peers = new Peers(RnicOperationsTest.mpa(true, false), null)) {
            Connection connection = peers.connect();
            assertNull(connection.client.channel().pipeline().get(PcapCapture.class));
            assertNull(connection.server.channel().pipeline().get(PcapCapture.class));
        }
    }

    @Test
    void captureIsTheFirstHandler(@TempDir Path directory) throws Exception {
        try (Peers peers = new Peers(RnicOperationsTest.mpa(false, false), directory)) {
            Connection connection = peers.connect();
            PcapCapture client = (PcapCapture) connection.client.channel().pipeline().first();
            PcapCapture server = (PcapCapture) connection.server.channel().pipeline().first();
            assertEquals(directory.resolve(connection.clientFile()), client.file());
            assertEquals(directory.resolve(connection.serverFile()), server.file());
        }
    }

    @Test
    void initialSequenceNumbersDependOnThePortsOnly() {
        assertEquals(PcapCapture.initialSequenceNumber(40000, 7174), PcapCapture.initialSequenceNumber(40000, 7174));
        assertTrue(PcapCapture.initialSequenceNumber(40000, 7174) != PcapCapture.initialSequenceNumber(7174, 40000));
        assertTrue(PcapCapture.initialSequenceNumber(65535, 65535) <= 0xFFFF_FFFFL);
        assertEquals("40000-7174.pcap", PcapCapture.fileName(40000, 7174));
    }

    // ---------------------------------------------------------------------------------------------
    // PcapSegmenter

    @Test
    void segmenterCutsTheSameUnitsHoweverTheBytesArrive() {
        Property.forAll("segmenter split-anywhere", random -> {
            boolean markers = random.nextBoolean();
            boolean crc = random.nextBoolean();
            List<byte[]> units = new ArrayList<>();
            ByteBuf frame = Unpooled.buffer();
            ByteBuf privateData = Unpooled.wrappedBuffer(Property.bytes(random, random.nextInt(40)));
            MpaFrames.write(frame, random.nextBoolean(), markers ? MpaFrames.MARKER_FLAG : 0, 1, privateData);
            units.add(ByteBufUtil.getBytes(frame));
            frame.release();
            FpduWriter writer = new FpduWriter(crc, markers);
            int fpdus = random.nextInt(12);
            for (int i = 0; i < fpdus; i++) {
                ByteBuf fpdu = Unpooled.buffer();
                int length = random.nextInt(8) == 0 ? random.nextInt(3000) : random.nextInt(100);
                writer.write(Unpooled.wrappedBuffer(Property.bytes(random, length)), fpdu);
                units.add(ByteBufUtil.getBytes(fpdu));
                fpdu.release();
            }
            byte[] stream = concat(units);
            int maxSegment = random.nextInt(4) == 0 ? 100 + random.nextInt(1000) : Integer.MAX_VALUE;
            PcapSegmenter segmenter = new PcapSegmenter(maxSegment);
            List<byte[]> cut = new ArrayList<>();
            for (int at = 0; at < stream.length; ) {
                int piece = random.nextInt(4) == 0 ? 1 : 1 + random.nextInt(Math.min(700, stream.length - at));
                piece = Math.min(piece, stream.length - at);
                segmenter.append(stream, at, piece);
                at += piece;
                for (byte[] unit = segmenter.poll(); unit != null; unit = segmenter.poll()) {
                    cut.add(unit);
                    if (cut.size() == 1) {
                        assertEquals(markers ? MpaFrames.MARKER_FLAG : 0, segmenter.frameFlags());
                        assertTrue(segmenter.framing(markers));
                    }
                }
            }
            assertNull(segmenter.rest());
            List<byte[]> expected = new ArrayList<>();
            for (byte[] unit : units) {
                for (int at = 0; at < unit.length; at += maxSegment) {
                    expected.add(java.util.Arrays.copyOfRange(unit, at, Math.min(unit.length, at + maxSegment)));
                }
            }
            assertEquals(expected.size(), cut.size(), "units");
            for (int i = 0; i < expected.size(); i++) {
                assertArrayEquals(expected.get(i), cut.get(i), "unit " + i);
            }
        });
    }

    @Test
    void segmenterWaitsForTheFramingAndPassesOtherStreamsThrough() {
        ByteBuf frame = Unpooled.buffer();
        MpaFrames.write(frame, false, 0, 1, null);
        byte[] request = ByteBufUtil.getBytes(frame);
        frame.release();
        byte[] fpdu = {0, 2, 'h', 'i', 0, 0, 0, 0};
        PcapSegmenter segmenter = new PcapSegmenter(Integer.MAX_VALUE);
        segmenter.append(request, 0, 10);
        assertNull(segmenter.poll());
        segmenter.append(request, 10, request.length - 10);
        segmenter.append(fpdu, 0, fpdu.length);
        assertArrayEquals(request, segmenter.poll());
        assertNull(segmenter.poll(), "no FPDU before the framing is known");
        assertTrue(segmenter.framing(false));
        assertArrayEquals(fpdu, segmenter.poll());
        segmenter.append(fpdu, 0, 3);
        assertNull(segmenter.poll());
        assertArrayEquals(new byte[] {0, 2, 'h'}, segmenter.rest(), "a partial FPDU at the close");

        PcapSegmenter http = new PcapSegmenter(Integer.MAX_VALUE);
        byte[] get = "GET / HTTP/1.1\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        http.append(get, 0, get.length);
        assertArrayEquals(get, http.poll());
        assertTrue(http.raw());
    }

    // ---------------------------------------------------------------------------------------------

    private static byte[] concat(List<byte[]> parts) {
        int length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        byte[] all = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        return all;
    }

    private static WorkCompletion take(CompletionQueue cq) throws InterruptedException {
        WorkCompletion wc = cq.take(10, TimeUnit.SECONDS);
        assertNotNull(wc, "no completion within 10 s");
        return wc;
    }

    /** Two RNICs capturing into one directory; {@link #connect()} makes one connection at a time. */
    private static final class Peers implements AutoCloseable {
        final Rnic serverRnic;
        final Rnic clientRnic;
        final RnicListener listener;
        final BlockingQueue<QueuePair> toAccept = new LinkedBlockingQueue<>();
        final BlockingQueue<CompletableFuture<QueuePair>> accepted = new LinkedBlockingQueue<>();

        Peers(MpaSettings mpa, Path directory) {
            serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).capture(directory));
            clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).capture(directory));
            listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> accepted.add(request.accept(toAccept.remove(), new byte[] {'o', 'k'})));
        }

        Connection connect() throws Exception {
            Connection c = new Connection(serverRnic, clientRnic);
            toAccept.add(c.server);
            clientRnic.connect(c.client, listener.localAddress(), new byte[] {'h', 'i'}).get(10, TimeUnit.SECONDS);
            accepted.poll(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
            c.connected();
            return c;
        }

        @Override
        public void close() {
            listener.close();
            clientRnic.close();
            serverRnic.close();
        }
    }

    /** One queue pair on each RNIC, each with a 64 KiB region open to everything. */
    private static final class Connection {
        final CompletionQueue serverCq;
        final CompletionQueue clientCq;
        final QueuePair server;
        final QueuePair client;
        final MemoryRegion serverRegion;
        final MemoryRegion clientRegion;

        Connection(Rnic serverRnic, Rnic clientRnic) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            ProtectionDomain clientPd = clientRnic.allocatePd();
            serverCq = serverRnic.createCq(256);
            clientCq = clientRnic.createCq(256);
            server = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq).ird(4).ord(4));
            client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(4).ord(4));
            serverRegion = serverPd.register(ByteBuffer.allocateDirect(1 << 16), RnicPair.ALL);
            clientRegion = clientPd.register(ByteBuffer.allocateDirect(1 << 16), RnicPair.ALL);
        }

        private int clientPort;
        private int serverPort;

        /** Notes the ports once connected (the files are named after them). */
        void connected() {
            clientPort = ((InetSocketAddress) client.channel().localAddress()).getPort();
            serverPort = ((InetSocketAddress) client.channel().remoteAddress()).getPort();
        }

        String clientFile() {
            return PcapCapture.fileName(clientPort, serverPort);
        }

        String serverFile() {
            return PcapCapture.fileName(serverPort, clientPort);
        }

        /** Send, a three-segment Write, a two-segment Read, a Send back. */
        void sendWriteReadAndDisconnect() throws Exception {
            RnicOperationsTest.fill(clientRegion.buffer(), 0, 1 << 16, 1);
            RnicOperationsTest.fill(serverRegion.buffer(), 0, 1 << 16, 2);
            server.postReceive(new ReceiveWorkRequest(1, new Sge(serverRegion, 0, 4096)));
            client.postReceive(new ReceiveWorkRequest(2, new Sge(clientRegion, 0, 4096)));
            client.postSend(SendWorkRequest.send(10, new Sge(clientRegion, 4096, 100)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            assertEquals(WcStatus.SUCCESS, take(serverCq).status());
            client.postSend(SendWorkRequest.write(11, serverRegion.address() + 8192, serverRegion.rkey(),
                    new Sge(clientRegion, 8192, 3000)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            client.postSend(SendWorkRequest.read(12, serverRegion.address() + 16384, serverRegion.rkey(),
                    new Sge(clientRegion, 16384, 2000)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            server.postSend(SendWorkRequest.send(13, new Sge(serverRegion, 4096, 10)));
            assertEquals(WcStatus.SUCCESS, take(serverCq).status());
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            assertTrue(ByteBufUtil.equals(clientRegion.buffer(), 8192, serverRegion.buffer(), 8192, 3000));
            assertTrue(ByteBufUtil.equals(clientRegion.buffer(), 16384, serverRegion.buffer(), 16384, 2000));
            // Left open: closing the RNICs ends it. (QueuePair.disconnect() would first send an FPDU
            // with an empty ULPDU, which the peer answers with a DDP local catastrophic Terminate.)
        }

        /** A Write to an STag the server never issued: DDP tagged invalid STag, one Terminate. */
        void writeToAnInvalidStag() throws Exception {
            server.postReceive(new ReceiveWorkRequest(1, new Sge(serverRegion, 0, 64)));
            client.postSend(SendWorkRequest.write(20, serverRegion.address(), serverRegion.rkey() ^ 0x100,
                    new Sge(clientRegion, 0, 64)));
            client.closeFuture().get(10, TimeUnit.SECONDS);
            server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, server.terminateSent());
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, client.terminateReceived().error());
        }
    }
}
