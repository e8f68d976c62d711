package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code jiwarp decode}: output modes, clear messages and exit codes (0 ok, 1 runtime error, 2 usage). */
class DecodeCommandTest {

    private static final Path SAMPLES = Path.of("..", "pcap-samples");

    @TempDir
    Path temp;

    /** Exit code, standard output and standard error of one run. */
    record Run(int exit, String out, String err) {
    }

    static Run jiwarp(Object... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine line = Jiwarp.commandLine();
        line.setOut(new PrintWriter(out));
        line.setErr(new PrintWriter(err));
        int exit = line.execute(Arrays.stream(args).map(Object::toString).toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void summaryLinesNameEveryPdu() {
        Run run = jiwarp("decode", SAMPLES.resolve("jiwarp-crc.pcap"));
        assertEquals(0, run.exit(), run.err());
        String[] lines = run.out().split("\n");
        assertTrue(lines[0].contains("MPA Request Frame rev=1 M=0 C=1"), lines[0]);
        assertTrue(lines[1].contains("MPA Reply Frame rev=1 M=0 C=1"), lines[1]);
        assertTrue(run.out().contains("Send with SE [last DDP segment] QN=0 MSN=3"), run.out());
        assertTrue(run.out().contains("Read Request [last DDP segment] QN=1 MSN=1 MO=0 sink=0x00000200@0x2000 size=3000"),
                run.out());
        assertTrue(!run.out().contains("Bad CRC32"), run.out());
    }

    @Test
    void badCrcIsReportedAsTsharkDoes() {
        Run run = jiwarp("decode", SAMPLES.resolve("jiwarp-bad-crc.pcap"));
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("[Good CRC32]"), run.out());
        assertTrue(run.out().contains("[Bad CRC32]"), run.out());
        Run fields = jiwarp("decode", "--fields", SAMPLES.resolve("jiwarp-bad-crc.pcap"));
        assertTrue(fields.out().contains("crc_verdict=Bad CRC32"), fields.out());
    }

    @Test
    void selectedFieldsPrintOneLinePerFrameLikeTshark() {
        Run run = jiwarp("decode", "--fields", "-e", "frame.number", "-e", "iwarp_ddp.msn", "-e", "iwarp_rdma.opcode",
                SAMPLES.resolve("jiwarp-crc.pcap"));
        assertEquals(0, run.exit(), run.err());
        String[] lines = run.out().split("\n", -1);
        // One line per frame (the handshake, data and FIN segments included), then the final newline.
        assertEquals("1\t\t", lines[0]);
        assertTrue(Arrays.asList(lines).contains("8\t2,3\t0x03,0x05"), run.out());
    }

    @Test
    void jsonHoldsEveryPduWithItsFields() {
        Run run = jiwarp("decode", "--json", SAMPLES.resolve("jiwarp-terminates.pcap"));
        assertEquals(0, run.exit(), run.err());
        String json = run.out().trim();
        assertTrue(json.startsWith("[") && json.endsWith("]"), json);
        assertEquals(count(json, '{'), count(json, '}'));
        assertTrue(json.contains("\"kind\": \"MPA_REQUEST\""), json);
        assertTrue(json.contains("\"terminate\": {\"layer\": \"DDP\", \"errorType\": \"Untagged Buffer Error\", "
                + "\"error\": \"Invalid MSN - no buffer available\""), json);
        assertTrue(json.contains("\"iwarp_rdma.term_layer\": \"0x02\""), json);
    }

    @Test
    void notAPcapGetsAClearMessageAndExitOne() throws IOException {
        Path text = temp.resolve("notes.txt");
        Files.writeString(text, "these are not packets\n");
        Run run = jiwarp("decode", text);
        assertEquals(1, run.exit());
        assertTrue(run.err().contains("not a pcap file"), run.err());
    }

    @Test
    void tcpWithoutMpaIsNotIwarp() {
        Run run = jiwarp("decode", SAMPLES.resolve("not-iwarp.pcap"));
        assertEquals(1, run.exit());
        assertTrue(run.err().contains("no iWARP stream"), run.err());
    }

    @Test
    void truncatedCaptureDecodesWhatItHoldsAndSaysSo() throws IOException {
        byte[] whole = Files.readAllBytes(SAMPLES.resolve("jiwarp-opcodes.pcap"));
        Path cut = temp.resolve("cut.pcap");
        Files.write(cut, Arrays.copyOf(whole, whole.length / 2));
        Run run = jiwarp("decode", cut);
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("MPA Request Frame"), run.out());
        assertTrue(run.err().contains("note:"), run.err());
        Path header = temp.resolve("header.pcap");
        Files.write(header, Arrays.copyOf(whole, 10));
        Run tooShort = jiwarp("decode", header);
        assertEquals(1, tooShort.exit());
        assertTrue(tooShort.err().contains("jiwarp decode:"), tooShort.err());
    }

    @Test
    void garbageAfterAValidHeaderNeverThrows() throws IOException {
        byte[] whole = Files.readAllBytes(SAMPLES.resolve("jiwarp-markers-crc.pcap"));
        java.util.SplittableRandom random = new java.util.SplittableRandom(42);
        for (int round = 0; round < 50; round++) {
            byte[] damaged = whole.clone();
            for (int i = 0; i < 20; i++) {
                int at = 24 + random.nextInt(damaged.length - 24);
                damaged[at] = (byte) random.nextInt(256);
            }
            Path file = temp.resolve("damaged-" + round + ".pcap");
            Files.write(file, damaged);
            Run run = jiwarp("decode", file);
            assertTrue(run.exit() == 0 || run.exit() == 1, "round " + round + ": exit " + run.exit() + " " + run.err());
            assertTrue(!run.err().contains("Exception"), run.err());
        }
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(2, jiwarp().exit());
        assertEquals(2, jiwarp("decode").exit());
        assertEquals(2, jiwarp("decode", "--no-such-option", SAMPLES.resolve("jiwarp-crc.pcap")).exit());
        assertEquals(2, jiwarp("decode", "--fields", "--json", SAMPLES.resolve("jiwarp-crc.pcap")).exit());
        assertEquals(2, jiwarp("decode", "-e", "iwarp_ddp.msn", SAMPLES.resolve("jiwarp-crc.pcap")).exit());
        assertEquals(2, jiwarp("frobnicate").exit());
    }

    @Test
    void missingFileIsARuntimeError() {
        Run run = jiwarp("decode", temp.resolve("absent.pcap"));
        assertEquals(1, run.exit());
        assertTrue(run.err().contains("cannot read"), run.err());
    }

    @Test
    void helpAndVersionExitZero() {
        Run help = jiwarp("--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().contains("decode"), help.out());
        assertEquals(0, jiwarp("--version").exit());
        assertEquals(0, jiwarp("decode", "--help").exit());
    }

    private static long count(String text, char c) {
        return text.chars().filter(x -> x == c).count();
    }

    static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
