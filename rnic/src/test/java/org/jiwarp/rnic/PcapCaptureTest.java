package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.TcpConversation;
import org.jiwarp.capture.pcap.TcpConversations;
import org.jiwarp.rnic.cm.OctetsToTcp;
import org.jiwarp.rnic.cm.PcapCapture;
import org.jiwarp.rnic.cm.PcapSegmenter;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
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
        CapturingRnics.Connection operations;
        CapturingRnics.Connection terminated;
        try (CapturingRnics peers = new CapturingRnics(RnicOperationsTest.mpa(crc, markers), directory)) {
            operations = peers.connect();
            operations.sendWriteAndRead();
            terminated = peers.connect();
            terminated.writeToAnInvalidStag();
        }
        try (Stream<Path> files = Files.list(directory)) {
            assertEquals(Set.of(operations.clientFile(), operations.serverFile(), terminated.clientFile(),
                    terminated.serverFile()), files.map(p -> p.getFileName().toString()).collect(Collectors.toSet()));
        }
        for (CapturingRnics.Connection connection : List.of(operations, terminated)) {
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
        try (CapturingRnics peers = new CapturingRnics(RnicOperationsTest.mpa(true, false), null)) {
            CapturingRnics.Connection connection = peers.connect();
            assertNull(connection.client.channel().pipeline().get(PcapCapture.class));
            assertNull(connection.server.channel().pipeline().get(PcapCapture.class));
        }
    }

    @Test
    void captureIsTheFirstHandler(@TempDir Path directory) throws Exception {
        try (CapturingRnics peers = new CapturingRnics(RnicOperationsTest.mpa(false, false), directory)) {
            CapturingRnics.Connection connection = peers.connect();
            PcapCapture client = firstBelowTheCounter(connection.client.channel().pipeline());
            PcapCapture server = firstBelowTheCounter(connection.server.channel().pipeline());
            assertEquals(directory.resolve(connection.clientFile()), client.file());
            assertEquals(directory.resolve(connection.serverFile()), server.file());
        }
    }

    /**
     * The first handler but the queue pair's {@link OctetsToTcp}, which only counts what passes it
     * on the way out (and sees nothing inbound): the capture records every octet as it is.
     */
    private static PcapCapture firstBelowTheCounter(ChannelPipeline pipeline) {
        List<String> names = pipeline.names();
        ChannelHandler first = pipeline.first();
        if (first instanceof OctetsToTcp) {
            first = pipeline.get(names.get(1));
        }
        return (PcapCapture) first;
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
                int length = random.nextInt(8) == 0 ? random.nextInt(9000) : random.nextInt(100);
                writer.write(Unpooled.wrappedBuffer(Property.bytes(random, length)), fpdu);
                units.add(ByteBufUtil.getBytes(fpdu));
                fpdu.release();
            }
            byte[] stream = concat(units);
            int maxSegment = random.nextInt(4) == 0 ? 100 + random.nextInt(1000) : Integer.MAX_VALUE;
            PcapSegmenter segmenter = new PcapSegmenter(maxSegment);
            List<byte[]> cut = new ArrayList<>();
            for (int at = 0; at < stream.length; ) {
                // Single octets, pieces up to 700 and, as a TCP read of several FPDUs gives, up to all the rest.
                int piece = switch (random.nextInt(4)) {
                    case 0 -> 1;
                    case 1 -> 1 + random.nextInt(stream.length - at);
                    default -> 1 + random.nextInt(Math.min(700, stream.length - at));
                };
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
}
