package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jiwarp.testing.Prerequisites;
import java.util.zip.GZIPOutputStream;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.FrameFields;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.PcapWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * pcapng input against tshark: every capture in {@code pcap-samples/} and in
 * {@code $JIWARP_EXTERNAL_PCAPS} (the Wireshark wiki and Linux siw captures) is rewritten as pcapng
 * by {@code tshark -F pcapng}, and as gzip-compressed pcapng, and must decode exactly as the
 * classic file does; and the non-iWARP {@code -e} fields jiwarp prints (frame, IP, TCP) must equal
 * tshark's, field by field, on every frame of every capture.
 */
class PcapNgRoundTripTest {

    private static final Path SAMPLES = Path.of("..", "pcap-samples");
    private static final List<String> FRAME_FIELDS = List.of("frame.number", "frame.time_relative",
            "frame.time_epoch", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
            "tcp.stream", "tcp.seq");

    @TempDir
    Path temp;

    @Test
    void everyCaptureDecodesTheSameAsPcapngAndGzippedPcapng() throws IOException {
        Path tshark = requireTshark();
        List<Path> captures = captures();
        for (Path capture : captures) {
            Path pcapng = temp.resolve(capture.getFileName() + ".pcapng");
            Tshark.run(List.of(tshark.toString(), "-r", capture.toString(), "-F", "pcapng", "-w", pcapng.toString()));
            byte[] pcapngBytes = Files.readAllBytes(pcapng);
            assertEquals(0x0a0d0d0a, java.nio.ByteBuffer.wrap(pcapngBytes).getInt(), "tshark wrote pcapng: " + pcapng);
            PcapFile classic = PcapFile.read(capture);
            PcapFile ng = PcapFile.read(pcapng);
            PcapFile gz = PcapFile.read(gzip(pcapngBytes));
            assertTrue(ng.pcapng(), capture.toString());
            List<String> expected = render(IwarpStreamDecoder.decode(classic));
            assertFalse(expected.isEmpty(), capture + " decodes to nothing");
            assertEquals(expected, render(IwarpStreamDecoder.decode(ng)), "pcapng of " + capture);
            assertEquals(expected, render(IwarpStreamDecoder.decode(gz)), "gzip pcapng of " + capture);
            assertEquals(FrameFields.of(classic), FrameFields.of(ng), "frame fields of the pcapng of " + capture);
        }
    }

    @Test
    void frameIpAndTcpFieldsEqualTsharksOnEveryFrame() throws IOException {
        Path tshark = requireTshark();
        List<String> mismatches = new ArrayList<>();
        int frames = 0;
        List<Path> captures = captures();
        // Without their handshakes too: tshark numbers tcp.seq from 1 when it saw no SYN.
        for (String sample : List.of("jiwarp-crc.pcap", "jiwarp-ipv6.pcap", "rnic-markers-crc.pcap")) {
            captures.add(withoutFirstFrames(SAMPLES.resolve(sample), 3));
        }
        for (Path capture : captures) {
            List<String> command = new ArrayList<>(List.of(tshark.toString(), "-r", capture.toString(), "-n",
                    "-T", "fields"));
            for (String field : FRAME_FIELDS) {
                command.add("-e");
                command.add(field);
            }
            String[] theirs = Tshark.run(command).split("\n");
            Map<Integer, Map<String, String>> ours = FrameFields.of(PcapFile.read(capture));
            assertEquals(ours.size(), theirs.length, "frames in " + capture);
            for (String line : theirs) {
                String[] columns = line.split("\t", -1);
                int frame = Integer.parseInt(columns[0]);
                for (int i = 0; i < FRAME_FIELDS.size(); i++) {
                    String mine = ours.get(frame).getOrDefault(FRAME_FIELDS.get(i), "");
                    if (!mine.equals(columns[i])) {
                        mismatches.add(capture.getFileName() + " frame " + frame + " " + FRAME_FIELDS.get(i)
                                + ": tshark '" + columns[i] + "', jiwarp '" + mine + "'");
                    }
                }
                frames++;
            }
        }
        assertTrue(frames > 100, "compared only " + frames + " frames");
        assertEquals(List.of(), mismatches, mismatches.size() + " field mismatch(es) with tshark");
    }

    /** {@code capture} without its first {@code count} frames: a capture begun mid-connection. */
    private Path withoutFirstFrames(Path capture, int count) throws IOException {
        PcapFile file = PcapFile.read(capture);
        Path out = temp.resolve("mid-" + capture.getFileName());
        try (PcapWriter writer = new PcapWriter(Files.newOutputStream(out), file.linkType(), true)) {
            for (PcapRecord record : file.records().subList(count, file.records().size())) {
                writer.write(record.timestampNanos(), record.data());
            }
        }
        return out;
    }

    private static Path requireTshark() {
        Path tshark = Tshark.find();
        Prerequisites.require(tshark != null, "tshark is not installed (apt-get install tshark)");
        Prerequisites.externalPcaps();
        return tshark;
    }

    /** Every capture in {@code pcap-samples/} and in the folders of {@code $JIWARP_EXTERNAL_PCAPS}. */
    static List<Path> captures() throws IOException {
        List<Path> captures = new ArrayList<>(ExternalPcaps.pcaps(SAMPLES));
        Path external = Prerequisites.externalPcaps();
        try (Stream<Path> folders = Files.list(external)) {
            for (Path folder : (Iterable<Path>) folders.filter(Files::isDirectory).sorted()::iterator) {
                captures.addAll(ExternalPcaps.pcaps(folder));
            }
        }
        assertTrue(captures.size() >= 20, "only " + captures.size() + " captures found: " + captures);
        return captures;
    }

    /** Everything a decode shows, one line per PDU and per note. */
    static List<String> render(CaptureDecode decode) {
        List<String> lines = new ArrayList<>();
        for (DecodedPdu pdu : decode.pdus()) {
            lines.add(pdu.frameNumber() + " " + pdu.conversation() + " " + pdu.source() + " " + pdu.destination()
                    + " " + pdu.summary() + " " + pdu.problems() + " " + pdu.fields() + " " + pdu.crcGood());
        }
        for (String note : decode.notes()) {
            lines.add("note: " + note);
        }
        return lines;
    }

    private static byte[] gzip(byte[] bytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(bytes);
        }
        return out.toByteArray();
    }
}
