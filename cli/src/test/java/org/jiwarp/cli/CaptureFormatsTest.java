package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;
import org.jiwarp.capture.pcap.CaptureWriter;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp decode} on pcapng, gzip, standard input and several files; {@code -e} frame fields
 * and tshark's answer to an unknown field; {@code --check}; the ASCII arrow; and {@code --pcap
 * FILE.pcapng} written by a real bench run over loopback TCP.
 */
class CaptureFormatsTest {

    private static final Path SAMPLES = Path.of("..", "pcap-samples");

    @TempDir
    Path temp;

    /** The sample rewritten as pcapng (by jiwarp's writer) and gzip-compressed. */
    private Path pcapngOf(String sample, boolean gzip) throws IOException {
        PcapFile classic = PcapFile.read(SAMPLES.resolve(sample));
        Path ng = temp.resolve(sample + "ng");
        try (CaptureWriter writer = CaptureWriter.open(ng, classic.linkType())) {
            for (PcapRecord record : classic.records()) {
                writer.write(record.timestampNanos(), record.data());
            }
        }
        if (!gzip) {
            return ng;
        }
        Path gz = temp.resolve(sample + "ng.gz");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(Files.readAllBytes(ng));
        }
        Files.write(gz, out.toByteArray());
        return gz;
    }

    @Test
    void pcapngAndGzipDecodeAsTheClassicFileDoes() throws IOException {
        DecodeCommandTest.Run classic = jiwarp("decode", SAMPLES.resolve("jiwarp-markers-crc.pcap"));
        assertEquals(0, classic.exit(), classic.err());
        DecodeCommandTest.Run ng = jiwarp("decode", pcapngOf("jiwarp-markers-crc.pcap", false));
        assertEquals(0, ng.exit(), ng.err());
        assertEquals(classic.out(), ng.out());
        DecodeCommandTest.Run gz = jiwarp("decode", pcapngOf("jiwarp-markers-crc.pcap", true));
        assertEquals(classic.out(), gz.out());
    }

    @Test
    void dashReadsStandardInput() throws IOException {
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream(Files.readAllBytes(pcapngOf("jiwarp-crc.pcap", true))));
            DecodeCommandTest.Run run = jiwarp("decode", "-");
            assertEquals(0, run.exit(), run.err());
            assertEquals(jiwarp("decode", SAMPLES.resolve("jiwarp-crc.pcap")).out(), run.out());
            System.setIn(new ByteArrayInputStream("not a capture".getBytes(StandardCharsets.US_ASCII)));
            DecodeCommandTest.Run bad = jiwarp("decode", "-");
            assertEquals(1, bad.exit());
            assertTrue(bad.err().startsWith("jiwarp decode: standard input: not a pcap file"), bad.err());
        } finally {
            System.setIn(saved);
        }
    }

    @Test
    void severalFilesDecodeOneAfterTheOtherAndABadOneFailsTheRun() throws IOException {
        Path a = SAMPLES.resolve("jiwarp-crc.pcap");
        Path b = SAMPLES.resolve("jiwarp-reject.pcap");
        DecodeCommandTest.Run both = jiwarp("decode", a, b);
        assertEquals(0, both.exit(), both.err());
        assertEquals("==> " + a + " <==\n" + jiwarp("decode", a).out() + "==> " + b + " <==\n"
                + jiwarp("decode", b).out(), both.out());
        DecodeCommandTest.Run fields = jiwarp("decode", "--fields", "-e", "frame.number", "-e", "iwarp_ddp.msn", a, b);
        assertEquals(jiwarp("decode", "--fields", "-e", "frame.number", "-e", "iwarp_ddp.msn", a).out()
                + jiwarp("decode", "--fields", "-e", "frame.number", "-e", "iwarp_ddp.msn", b).out(), fields.out());
        DecodeCommandTest.Run json = jiwarp("decode", "--json", a, b);
        assertTrue(json.out().startsWith("[\n  {\"file\": "), json.out());
        DecodeCommandTest.Run withBad = jiwarp("decode", a, temp.resolve("absent.pcap"));
        assertEquals(1, withBad.exit());
        assertTrue(withBad.out().contains("MPA Request Frame"), withBad.out());
        assertTrue(withBad.err().contains("absent.pcap: it does not exist"), withBad.err());
    }

    @Test
    void frameFieldsAndTsharksAnswerToAnUnknownField() {
        DecodeCommandTest.Run run = jiwarp("decode", "--fields", "-e", "frame.number", "-e", "frame.time_relative",
                "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.stream", "-e", "tcp.seq", "-e", "ipv6.dst",
                SAMPLES.resolve("jiwarp-crc.pcap"));
        assertEquals(0, run.exit(), run.err());
        String[] lines = run.out().split("\n");
        assertEquals("1\t0.000000000\t10.0.0.1\t40002\t0\t0\t", lines[0]);
        assertTrue(lines[2].matches("3\t0\\.0000\\d+\t10\\.0\\.0\\.1\t40002\t0\t1\t"), lines[2]);
        DecodeCommandTest.Run unknown = jiwarp("decode", "--fields", "-e", "frame.nmber", "-e", "iwarp_ddp.msn",
                "-e", "tcp.sequence", SAMPLES.resolve("jiwarp-crc.pcap"));
        assertEquals(1, unknown.exit());
        assertEquals("", unknown.out());
        assertEquals("jiwarp decode: Some fields aren't valid:\n\ttcp.sequence\n\tframe.nmber\n", unknown.err());
    }

    @Test
    void checkMakesProblemsTheExitStatus() {
        assertEquals(0, jiwarp("decode", SAMPLES.resolve("jiwarp-bad-crc.pcap")).exit());
        assertEquals(1, jiwarp("decode", "--check", SAMPLES.resolve("jiwarp-bad-crc.pcap")).exit());
        assertEquals(0, jiwarp("decode", "--check", SAMPLES.resolve("jiwarp-crc.pcap")).exit());
    }

    @Test
    void theArrowIsAsciiWhenTheOutputIsNotUtf8() {
        assertEquals("→", DecodeCommand.arrow(StandardCharsets.UTF_8));
        assertEquals("->", DecodeCommand.arrow(StandardCharsets.US_ASCII));
        assertEquals("->", DecodeCommand.arrow(Charset.forName("ISO-8859-1")));
    }

    @Test
    void aFileCutBeforeAnyIwarpFrameSaysItWasCut() throws IOException {
        byte[] whole = Files.readAllBytes(SAMPLES.resolve("jiwarp-crc.pcap"));
        Path cut = temp.resolve("cut.pcap");
        Files.write(cut, Arrays.copyOf(whole, 24 + 16 + 30)); // inside the first (SYN) packet
        DecodeCommandTest.Run run = jiwarp("decode", cut);
        assertEquals(1, run.exit());
        assertTrue(run.err().contains("no iWARP stream") && run.err().contains("cut short"), run.err());
    }

    @Test
    void benchWritesPcapngWhenTheFileNameSaysSo() throws IOException {
        Path pcapng = temp.resolve("bench.pcapng");
        DecodeCommandTest.Run run = jiwarp("bench", "-n", "10", "-s", "1500", "--op", "write", "--crc",
                "--warmup", "0", "--pcap", pcapng);
        assertEquals(0, run.exit(), run.err());
        byte[] bytes = Files.readAllBytes(pcapng);
        assertEquals(0x0a, bytes[0]);
        assertEquals(0x0d, bytes[1]);
        PcapFile file = PcapFile.read(pcapng);
        assertTrue(file.pcapng());
        assertFalse(file.records().isEmpty());
        DecodeCommandTest.Run decoded = jiwarp("decode", pcapng);
        assertEquals(0, decoded.exit(), decoded.err());
        assertTrue(decoded.out().contains("MPA Request Frame rev=2"), decoded.out());
        assertFalse(decoded.out().contains("Bad CRC32"), decoded.out());
    }
}
