package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.capture.check.CaptureChecker;
import org.jiwarp.capture.check.Finding;
import org.jiwarp.capture.check.Rule;
import org.jiwarp.capture.decode.MarkerStreams.Sender;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Markers located by their content: a marked stream whose capture begins anywhere (every offset
 * of two 512-octet periods and the FPDUs across them), from a sender that follows RFC 5044 or one
 * whose grid drifts or whose FPDUPTR is little-endian, decodes from the first FPDU a captured
 * marker points at, to the end; a whole capture of a quirky sender decodes every FPDU and names
 * the quirk.
 */
class MarkerGridTest {

    private static final int FPDUS = 40;

    @Test
    void theRfcSenderHereWritesWhatFpduWriterWrites() {
        for (boolean crc : new boolean[] {true, false}) {
            MarkerStreams stream = MarkerStreams.of(Sender.RFC, crc, FPDUS, 300, 5);
            FpduWriter writer = new FpduWriter(crc, true);
            ByteBuf out = Unpooled.buffer();
            byte[] bytes = stream.bytes();
            for (int i = 0; i < FPDUS; i++) {
                int header = stream.headers.get(i);
                int length = (bytes[header] & 0xFF) << 8 | (bytes[header + 1] & 0xFF);
                writer.write(Unpooled.wrappedBuffer(ulpdu(stream, i)), out);
                assertEquals(length, ulpdu(stream, i).length);
            }
            assertArrayEquals(ByteBufUtil.getBytes(out), bytes);
            out.release();
        }
    }

    @ParameterizedTest(name = "{0} crc={1}")
    @CsvSource({"DRIFTING,true", "DRIFTING,false", "LITTLE_ENDIAN,true", "LITTLE_ENDIAN,false",
        "DRIFTING_LITTLE_ENDIAN,true", "DRIFTING_LITTLE_ENDIAN,false", "RFC,true", "RFC,false"})
    void aWholeCaptureOfAQuirkySenderDecodesEveryFpduAndNamesTheQuirk(Sender sender, boolean crc) throws IOException {
        MarkerStreams stream = MarkerStreams.of(sender, crc, FPDUS, 300, 7);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
        SyntheticTcpCapture tcp = negotiated(writer, crc);
        byte[] fpdus = stream.bytes();
        for (int at = 0; at < fpdus.length; at += 1000) {
            tcp.clientSends(Arrays.copyOfRange(fpdus, at, Math.min(fpdus.length, at + 1000)));
        }
        tcp.close();
        writer.close();
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
        assertEquals(expectedMsns(0), msns(decode, sender), decode.notes().toString());
        List<Finding> findings = CaptureChecker.check(decode);
        if (sender == Sender.RFC) {
            assertEquals(List.of(), decode.notes());
            assertEquals(List.of(), findings);
            return;
        }
        String note = decode.notes().stream().filter(n -> n.contains("RFC 5044 section 4.3")).findFirst()
                .orElseThrow(() -> new AssertionError(decode.notes().toString()));
        if (sender.drift) {
            assertTrue(note.contains("drifts 4 octets with every FPDU"), note);
        }
        if (sender.littleEndian) {
            assertTrue(note.contains("little-endian"), note);
        }
        Finding finding = findings.stream().filter(f -> f.rule() == Rule.MPA_MARKERS).findFirst().orElse(null);
        assertNotNull(finding, findings.toString());
        assertEquals(CaptureChecker.DRIFTING_MARKER_QUIRK, finding.quirk());
        assertEquals(1, findings.size(), findings.toString());
    }

    @ParameterizedTest(name = "{0} crc={1}")
    @CsvSource({"RFC,true", "RFC,false", "DRIFTING,true", "DRIFTING,false", "LITTLE_ENDIAN,true",
        "LITTLE_ENDIAN,false", "DRIFTING_LITTLE_ENDIAN,true", "DRIFTING_LITTLE_ENDIAN,false"})
    void aMarkedStreamCutAtEveryOffsetDecodesOnFromTheFirstFpduAMarkerPointsAt(Sender sender, boolean crc)
            throws IOException {
        MarkerStreams stream = MarkerStreams.of(sender, crc, FPDUS, 300, 11);
        byte[] bytes = stream.bytes();
        for (int cut = 0; cut <= 1100; cut++) {
            int first = firstRecoverable(stream, cut);
            CaptureDecode decode = MidConnectionTest.decode(Arrays.copyOfRange(bytes, cut, bytes.length));
            String where = sender + " crc=" + crc + " cut at " + cut + ": " + decode.notes();
            assertEquals(expectedMsns(first), msns(decode, sender), where);
            assertTrue(decode.notes().get(0).contains("markers as on"), where);
            assertTrue(decode.notes().get(0).contains("CRC taken as " + (crc ? "on" : "off")), where);
        }
    }

    @ParameterizedTest(name = "{0} crc={1}")
    @CsvSource({"DRIFTING,true", "DRIFTING,false", "LITTLE_ENDIAN,true", "DRIFTING_LITTLE_ENDIAN,false"})
    void afterAGapTheSendersMarkersAreFoundAgain(Sender sender, boolean crc) throws IOException {
        MarkerStreams stream = MarkerStreams.of(sender, crc, FPDUS, 300, 13);
        byte[] fpdus = stream.bytes();
        int from = 2000;
        int to = 2300;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
        SyntheticTcpCapture tcp = negotiated(writer, crc);
        long base = tcp.clientNextSequence();
        tcp.writeSegment(true, base, tcp.serverNextSequence(), 0x18, fpdus, 0, from);
        tcp.writeSegment(true, base + to, tcp.serverNextSequence(), 0x18, fpdus, to, fpdus.length - to);
        writer.close();
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < FPDUS; i++) {
            int end = i + 1 < FPDUS ? stream.starts.get(i + 1) : fpdus.length;
            if (end <= from) {
                expected.add(Integer.toString(i + 1));
            }
        }
        expected.addAll(expectedMsns(firstRecoverable(stream, to)));
        assertEquals(expected, msns(decode, sender), decode.notes().toString());
        assertTrue(decode.notes().stream().anyMatch(n -> n.contains("found by a marker pointing at it")),
                decode.notes().toString());
        assertEquals(List.of(), CaptureChecker.check(decode).stream().filter(f -> f.rule() != Rule.MPA_MARKERS).toList());
    }

    /** A connection whose MPA negotiation asks for markers toward the server, and CRC when {@code crc}. */
    static SyntheticTcpCapture negotiated(PcapWriter writer, boolean crc) throws IOException {
        SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                new InetSocketAddress(InetAddress.getByName("10.4.0.1"), 5000),
                new InetSocketAddress(InetAddress.getByName("10.4.0.2"), 6000), 1, 2);
        tcp.handshake();
        tcp.clientSends(CaptureGapTest.MarkedStream.frame(false, crc ? MpaFrames.CRC_FLAG : 0));
        tcp.serverSends(CaptureGapTest.MarkedStream.frame(true, MpaFrames.MARKER_FLAG | (crc ? MpaFrames.CRC_FLAG : 0)));
        return tcp;
    }

    /**
     * The first FPDU a marker wholly after {@code cut} points at, whose start (with the CRC, which
     * covers a leading marker) or ULPDU_LENGTH field (without) the capture holds.
     */
    private static int firstRecoverable(MarkerStreams stream, int cut) {
        for (int[] marker : stream.markers) {
            int fpdu = marker[2];
            int from = stream.crc ? stream.starts.get(fpdu) : stream.headers.get(fpdu);
            if (marker[0] >= cut && marker[1] != 0 && from >= cut) {
                return fpdu;
            }
        }
        throw new AssertionError("no marker after " + cut);
    }

    private static List<String> expectedMsns(int first) {
        List<String> msns = new ArrayList<>();
        for (int i = first; i < FPDUS; i++) {
            msns.add(Integer.toString(i + 1));
        }
        return msns;
    }

    private static List<String> msns(CaptureDecode decode, Sender sender) {
        List<String> msns = new ArrayList<>();
        for (DecodedPdu pdu : decode.pdus()) {
            if (pdu.kind() != DecodedPdu.Kind.FPDU) {
                continue;
            }
            msns.add(pdu.fields().get("iwarp_ddp.msn"));
            for (String problem : pdu.problems()) {
                assertEquals(FpduDecoder.MARKER_DEVIATION, problem, "frame " + pdu.frameNumber());
                assertTrue(sender != Sender.RFC, problem);
            }
        }
        return msns;
    }

    private static byte[] ulpdu(MarkerStreams stream, int i) {
        // rebuild the i-th ULPDU from the stream without its markers
        byte[] bytes = stream.bytes();
        int header = stream.headers.get(i);
        int length = (bytes[header] & 0xFF) << 8 | (bytes[header + 1] & 0xFF);
        byte[] ulpdu = new byte[length];
        int at = header + 2;
        int filled = 0;
        while (filled < length) {
            boolean marker = false;
            for (int[] m : stream.markers) {
                marker |= m[0] == at;
            }
            if (marker) {
                at += 4;
                continue;
            }
            ulpdu[filled++] = bytes[at++];
        }
        return ulpdu;
    }
}
