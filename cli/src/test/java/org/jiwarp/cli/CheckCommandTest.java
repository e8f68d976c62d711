package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp check}: clean captures, findings, quirks, JSON and the exit status 0 / 1 / 2, 2 also
 * for a capture with no iWARP connection in it (nothing was checked).
 */
class CheckCommandTest {

    private static final Path SAMPLES = Path.of("..", "pcap-samples");

    /** Captures of jiwarp's RNIC and of Linux siw in which nothing breaks an RFC. */
    private static final List<String> CLEAN = List.of("rnic-crc.pcap", "rnic-markers.pcap", "rnic-markers-crc.pcap",
            "rnic-terminate.pcap", "jiwarp-crc.pcap", "jiwarp-enhanced.pcap", "jiwarp-ipv6.pcap",
            "jiwarp-markers.pcap", "jiwarp-markers-crc.pcap", "jiwarp-reject.pcap", "siw-rping-p2p.pcap",
            "siw-rping-rev2-crc.pcap", "siw-rping-siw-client-4096.pcap");

    @TempDir
    Path temp;

    @Test
    void cleanCapturesHaveNoFindingAndExitZero() {
        for (String name : CLEAN) {
            DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve(name));
            assertEquals(0, run.exit(), name + ": " + run.out() + run.err());
            assertEquals("", run.out(), name);
            assertTrue(run.err().contains("no findings"), run.err());
        }
    }

    @Test
    void aBenchRunOverLoopbackChecksClean() {
        Path pcap = temp.resolve("bench.pcapng");
        DecodeCommandTest.Run bench = jiwarp("bench", "-n", "30", "-s", "3000", "--op", "write", "--crc", "--markers",
                "--warmup", "0", "--pcap", pcap);
        assertEquals(0, bench.exit(), bench.err());
        DecodeCommandTest.Run run = jiwarp("check", pcap);
        assertEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.err().contains("no findings in 1 iWARP connection"), run.err());
    }

    @Test
    void findingsNameFramesConnectionRuleAndSectionAndExitOne() {
        DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve("jiwarp-bad-crc.pcap"));
        assertEquals(1, run.exit(), run.err());
        assertEquals("frame 7  conversation 0 10.0.0.1:40012 -> 10.0.0.2:4791  [mpa-crc] RFC 5044 section 6: "
                + "an FPDU's CRC-32C does not match its contents.\n", run.out());
    }

    @Test
    void siwsTerminateEncodingIsNamed() {
        DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve("siw-terminate-bad-crc.pcap"));
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.out().contains("[rdmap-terminate]") && run.out().contains("Known quirk: Linux siw 6.1 writes "
                + "the Terminate control bitfields little-endian"), run.out());
    }

    /** siw's Terminate whose HdrCt sits in the RFC layout's reserved bits, a DDP header behind it (issue 22). */
    @Test
    void siwsTerminateHeaderControlInTheReservedBitsIsNamed() {
        DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve("siw-terminate-invalid-stag.pcap"));
        assertEquals(1, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("[rdmap-terminate] RFC 5040 section 4.8: a Terminate's control word reads "
                + "11 00 03 00: reserved bits set (0x0300) and HdrCt M=0 D=0 R=0, which accounts for 4 octets of the "
                + "Terminate, yet it has 20; read as Linux siw's little-endian bitfields it says M=1 D=1 R=0"), run.out());
        assertTrue(run.out().contains("Known quirk: Linux siw 6.1"), run.out());
    }

    @Test
    void jsonListsEveryFinding() {
        DecodeCommandTest.Run run = jiwarp("check", "--json", SAMPLES.resolve("siw-terminate-bad-crc.pcap"));
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.out().startsWith("[\n  {\"file\": "), run.out());
        assertTrue(run.out().contains("\"rule\": \"rdmap-terminate\", \"rfc\": \"RFC 5040 section 4.8\", \"frames\": [9]"),
                run.out());
        assertTrue(run.out().contains("\"quirk\": \"Linux siw 6.1"), run.out());
        DecodeCommandTest.Run clean = jiwarp("check", "--json", SAMPLES.resolve("rnic-crc.pcap"));
        assertEquals("[]\n", clean.out());
    }

    @Test
    void unreadableInputExitsTwoAfterCheckingTheRest() throws IOException {
        Path text = temp.resolve("notes.txt");
        Files.writeString(text, "not packets");
        DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve("jiwarp-bad-crc.pcap"), text);
        assertEquals(2, run.exit());
        assertTrue(run.out().contains("[mpa-crc]"), run.out());
        assertTrue(run.err().contains("jiwarp check: " + text + ": not a pcap file"), run.err());
        assertTrue(!run.err().contains("Exception"), run.err());
        assertEquals(2, jiwarp("check", temp.resolve("absent.pcap")).exit());
    }

    @Test
    void plainTcpHasNothingToCheckAndExitsTwo() throws IOException {
        Path one = plainTcp("one.pcap", 1);
        DecodeCommandTest.Run run = jiwarp("check", one);
        assertEquals(2, run.exit(), run.err());
        assertEquals("", run.out());
        assertEquals("jiwarp check: " + one + " holds 1 TCP connection and it is not iWARP (no MPA Request found): "
                + "nothing to check\n", run.err());

        Path three = plainTcp("three.pcap", 3);
        run = jiwarp("check", "--json", three);
        assertEquals(2, run.exit(), run.err());
        assertEquals("[]\n", run.out());
        assertEquals("jiwarp check: " + three + " holds 3 TCP connections and none of them is iWARP (no MPA Request "
                + "found): nothing to check\n", run.err());
    }

    @Test
    void aCaptureWithoutTcpHasNothingToCheckAndExitsTwo() throws IOException {
        Path empty = temp.resolve("empty.pcap");
        try (OutputStream out = Files.newOutputStream(empty)) {
            new PcapWriter(out, LinkType.ETHERNET, false).close();
        }
        DecodeCommandTest.Run run = jiwarp("check", empty);
        assertEquals(2, run.exit(), run.err());
        assertEquals("jiwarp check: " + empty + " holds no TCP connection: nothing to check\n", run.err());
    }

    @Test
    void aPlainTcpFileBesideACleanOneStillExitsTwo() throws IOException {
        Path plain = plainTcp("plain.pcap", 1);
        DecodeCommandTest.Run run = jiwarp("check", SAMPLES.resolve("rnic-crc.pcap"), plain);
        assertEquals(2, run.exit(), run.err());
        assertTrue(run.err().contains("rnic-crc.pcap: no findings in 1 iWARP connection"), run.err());
        assertTrue(run.err().contains(plain + " holds 1 TCP connection and it is not iWARP"), run.err());
    }

    /** A capture of {@code connections} TCP connections carrying a line of HTTP each way, no MPA. */
    private Path plainTcp(String name, int connections) throws IOException {
        Path file = temp.resolve(name);
        try (OutputStream out = Files.newOutputStream(file)) {
            PcapWriter writer = new PcapWriter(out, LinkType.ETHERNET, false);
            for (int i = 0; i < connections; i++) {
                SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer, new InetSocketAddress("192.0.2.1", 40000 + i),
                        new InetSocketAddress("192.0.2.2", 80), 1000, 5000);
                tcp.handshake();
                tcp.clientSends("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                tcp.serverSends("HTTP/1.0 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                tcp.close();
            }
            writer.close();
        }
        return file;
    }
}
