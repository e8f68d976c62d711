package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp bench}: short runs over real loopback TCP complete with checked data (every run
 * reads back or compares what arrived), and the options and exit codes behave. No figure is
 * asserted: benchmarks are not timed tests.
 */
class BenchCommandTest {

    @TempDir
    Path temp;

    @Test
    void everyOperationRunsBesideTheTcpBaselineAndReportsJson() {
        Run run = jiwarp("bench", "-n", "300", "-s", "8192", "--warmup", "0", "--baseline", "tcp", "--json");
        assertEquals(0, run.exit(), run.err());
        for (String op : new String[] {"write", "read", "send"}) {
            for (String stack : new String[] {"jiwarp", "tcp"}) {
                Matcher m = Pattern.compile("\\{\"stack\":\"" + stack + "\",\"op\":\"" + op
                        + "\",\"mode\":\"bw\",\"bytes\":8192,\"connections\":1,\"txDepth\":128,\"iterations\":300,")
                        .matcher(run.out());
                assertTrue(m.find(), stack + " " + op + " in " + run.out());
            }
        }
        // jiwarp's rows carry the ratio; the baseline's own rows have none to give.
        assertEquals(6, count(run.out(), "\"ratioToTcp\":"), run.out());
        assertEquals(3, count(run.out(), "\"ratioToTcp\":null"), run.out());
        assertTrue(run.out().startsWith("{\"settings\":{\"mode\":\"bandwidth\",\"queuePairs\":1,\"txDepth\":128,"
                + "\"cqMod\":100,\"iterationsPerQueuePair\":300,\"durationSeconds\":null,"), run.out());
        assertTrue(run.out().contains("\"mpa\":{\"revision\":2,\"crc\":false,\"markers\":false,\"peerToPeer\":false,"
                + "\"emss\":null}"), run.out());
        assertTrue(run.out().contains("\"baseline\":\"tcp\""), run.out());
        assertTrue(!run.out().contains(":-1"), run.out());
    }

    @Test
    void latencyAndBandwidthGetTheirOwnTablesWithinAHundredColumns() {
        Run bw = jiwarp("bench", "-n", "300", "-s", "8192", "--warmup", "0", "--baseline", "tcp", "--op", "write");
        assertEquals(0, bw.exit(), bw.err());
        Run lat = jiwarp("bench", "--lat", "-n", "200", "--warmup", "0", "--baseline", "tcp", "--op", "send");
        assertEquals(0, lat.exit(), lat.err());
        for (Run run : new Run[] {bw, lat}) {
            for (String line : run.out().split("\n")) {
                assertTrue(line.length() <= 100, line.length() + " columns: " + line);
            }
        }
        assertTrue(bw.out().contains("Gb/s avg") && !bw.out().contains("p50 us"), bw.out());
        assertTrue(bw.out().contains("higher is better") && !bw.out().contains("lower is better"), bw.out());
        assertTrue(lat.out().contains("p50 us") && !lat.out().contains("Gb/s"), lat.out());
        assertTrue(lat.out().contains("jiwarp's p50 over plain TCP's; lower is better"), lat.out());
        // 200 samples: p99 is shown, p99.9 is not (it would be the maximum).
        Matcher row = Pattern.compile("(?m)^jiwarp +send-lat +8 +1 +200 +([0-9.]+) +([0-9.]+) +(\\S+) +([0-9.]+) ")
                .matcher(lat.out());
        assertTrue(row.find(), lat.out());
        assertEquals("-", row.group(3), lat.out());
    }

    /** Bandwidth runs report post-to-completion latency, and with several queue pairs how evenly they fared. */
    @Test
    void bandwidthRunsReportCompletionLatencyPerQueuePair() {
        Run run = jiwarp("bench", "-n", "1600", "-q", "3", "-t", "16", "-s", "4096", "--warmup", "0", "--op", "write");
        assertEquals(0, run.exit(), run.err());
        assertTrue(Pattern.compile("(?m)^Post to completion, jiwarp write-bw 4096 B, 3 QPs: p50 [0-9.]+ us, p99 [0-9.]+ us\\.$"
                + "\n^  each QP's slowest completion: median [0-9.]+ us, worst [0-9.]+ us\\.$").matcher(run.out()).find(),
                run.out());
        Run json = jiwarp("bench", "-n", "320", "-q", "3", "-t", "16", "-s", "4096", "--warmup", "0", "--op", "write",
                "--json");
        assertEquals(0, json.exit(), json.err());
        assertTrue(Pattern.compile("\"slowestCompletionPerConnectionMicros\":\\{\"median\":[0-9.]+,\"worst\":[0-9.]+}")
                .matcher(json.out()).find(), json.out());
    }

    @Test
    void jsonSaysNullForWhatWasNotMeasuredAndP999WithEnoughSamples() {
        Run few = jiwarp("bench", "--lat", "-n", "50", "--warmup", "0", "--op", "send", "--json");
        assertEquals(0, few.exit(), few.err());
        assertTrue(few.out().contains("\"p99\":null,\"p99.9\":null,") && few.out().contains("\"samples\":50}"),
                few.out());
        assertTrue(few.out().contains("\"ratioToTcp\":null") && few.out().contains("\"baseline\":null"), few.out());
        assertTrue(few.out().contains("\"heapBytesPerIdleConnection\":null"), few.out());
        Run many = jiwarp("bench", "--lat", "-n", "1000", "--warmup", "0", "--op", "send", "--json");
        assertEquals(0, many.exit(), many.err());
        assertTrue(Pattern.compile("\"p99\":[0-9.]+,\"p99.9\":[0-9.]+,").matcher(many.out()).find(), many.out());
    }

    /**
     * RFC 7306 atomics as ib_atomic_bw and ib_atomic_lat: fetch-and-add and compare-and-swap rate and
     * latency beside the TCP baseline (an 8-octet request and answer); each run ends by reading the
     * server's value back (fetch-and-add: the pattern word plus every add), or the run fails.
     */
    @Test
    void atomicsRunBesideTheTcpBaseline() {
        Run bw = jiwarp("bench", "-n", "300", "--warmup", "0", "--baseline", "tcp", "--op", "atomic", "--json");
        assertEquals(0, bw.exit(), bw.err());
        for (String op : new String[] {"fetch_add", "compare_swap"}) {
            for (String stack : new String[] {"jiwarp", "tcp"}) {
                assertTrue(bw.out().contains("{\"stack\":\"" + stack + "\",\"op\":\"" + op
                        + "\",\"mode\":\"bw\",\"bytes\":8,\"connections\":1,"), stack + " " + op + " in " + bw.out());
            }
        }
        Run lat = jiwarp("bench", "--lat", "-n", "200", "-q", "2", "--warmup", "0", "--op", "fetch_add,compare_swap");
        assertEquals(0, lat.exit(), lat.err());
        for (String op : new String[] {"fadd-lat", "cas-lat"}) {
            assertTrue(Pattern.compile("(?m)^jiwarp\\s+" + op + "\\s+8\\s+2\\s+400\\s").matcher(lat.out()).find(),
                    lat.out());
        }
    }

    /**
     * RFC 7306 Immediate Data with --op send --imm: 8 octets per message in the peer's receive
     * completion; in latency runs the server echoes them and the client checks each echo.
     */
    @Test
    void immediateDataRunsWithOpSendImm() {
        Run bw = jiwarp("bench", "-n", "300", "--warmup", "0", "--baseline", "tcp", "--op", "send", "--imm", "--json");
        assertEquals(0, bw.exit(), bw.err());
        for (String stack : new String[] {"jiwarp", "tcp"}) {
            assertTrue(bw.out().contains("{\"stack\":\"" + stack + "\",\"op\":\"immediate\",\"mode\":\"bw\","
                    + "\"bytes\":8,\"connections\":1,"), stack + " in " + bw.out());
        }
        Run lat = jiwarp("bench", "--lat", "-n", "200", "--warmup", "0", "--op", "send", "--imm");
        assertEquals(0, lat.exit(), lat.err());
        assertTrue(Pattern.compile("(?m)^jiwarp\\s+imm-lat\\s+8\\s+1\\s+200\\s").matcher(lat.out()).find(), lat.out());
    }

    @Test
    void latencyRunsPingPongEveryOperation() {
        Run run = jiwarp("bench", "--lat", "-n", "200", "--warmup", "0", "--baseline", "tcp");
        assertEquals(0, run.exit(), run.err());
        for (String op : new String[] {"write-lat", "read-lat", "send-lat"}) {
            assertTrue(Pattern.compile("(?m)^jiwarp\\s+" + op + "\\s+8\\s+1\\s+200\\s").matcher(run.out()).find(), run.out());
            assertTrue(Pattern.compile("(?m)^tcp\\s+" + op + "\\s+8\\s+1\\s+200\\s").matcher(run.out()).find(), run.out());
        }
    }

    @Test
    void manyQueuePairsEachMoveTheirShare() {
        Run run = jiwarp("bench", "-q", "16", "-n", "50", "-s", "4096", "-t", "8", "--op", "write,send",
                "--warmup", "0", "--json");
        assertEquals(0, run.exit(), run.err());
        assertEquals(2, count(run.out(), "\"connections\":16,\"txDepth\":8,\"iterations\":800,"), run.out());
    }

    @Test
    void crcMarkersAndRevisionOneCarryCheckedData() {
        Run run = jiwarp("bench", "-n", "200", "-s", "3000", "--crc", "--markers", "--mpa-rev", "1", "--emss", "1460",
                "--warmup", "0");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("MPA rev 1, CRC, markers"), run.out());
        assertEquals(3, count(run.out(), "\njiwarp "), run.out());
    }

    @Test
    void durationRunsStopOnTime() {
        Run run = jiwarp("bench", "-D", "0.3", "-s", "1024", "--op", "send", "--warmup", "0", "--json");
        assertEquals(0, run.exit(), run.err());
        Matcher m = Pattern.compile("\"iterations\":(\\d+)").matcher(run.out());
        assertTrue(m.find(), run.out());
        assertTrue(Long.parseLong(m.group(1)) > 0, run.out());
    }

    @Test
    void pcapRecordsTheConnectionForTheDecoder() {
        Path pcap = temp.resolve("bench.pcap");
        Run run = jiwarp("bench", "-n", "20", "-s", "2000", "--op", "write", "--crc", "--warmup", "0", "--pcap", pcap,
                "--snaplen", "0");
        assertEquals(0, run.exit(), run.err());
        Run decoded = jiwarp("decode", pcap);
        assertEquals(0, decoded.exit(), decoded.err());
        assertTrue(decoded.out().contains("MPA Request Frame rev=2"), decoded.out());
        assertTrue(count(decoded.out(), " Write [last DDP segment]") >= 20, decoded.out());
        assertTrue(decoded.out().contains("Read Request"), decoded.out());
        assertTrue(!decoded.out().contains("Bad CRC32"), decoded.out());
    }

    @Test
    void usageErrorsExitWithTwo() {
        String[][] bad = {
            {"bench", "-s", "0"},
            {"bench", "-n", "5", "-D", "1"},
            {"bench", "--baseline", "udp"},
            {"bench", "--p2p", "--mpa-rev", "1"},
            {"bench", "-p", "99999"},
            {"bench", "--snaplen", "-5"},
            {"bench", "--server", "somehost"},
            {"bench", "--mpa-rev", "3"},
            {"bench", "--op", "atomic", "-s", "64"},
            {"bench", "--op", "fetch_add", "-a"},
            {"bench", "--op", "multiply"},
            {"bench", "--op", "immediate"},
            {"bench", "--op", "write", "--imm"},
            {"bench", "--op", "send", "--imm", "-s", "64"},
            {"bench", "-q", "0"},
            {"bench", "--emss", "20"},
            {"bench", "--no-such-option"},
        };
        for (String[] args : bad) {
            Run run = jiwarp((Object[]) args);
            assertEquals(2, run.exit(), String.join(" ", args) + ": " + run.err());
            // One line naming the subcommand, pointing to its help; no usage dump.
            assertTrue(run.err().startsWith("jiwarp bench: ") && run.err().endsWith("(see 'jiwarp bench --help')\n")
                    && run.err().indexOf('\n') == run.err().length() - 1, String.join(" ", args) + ": " + run.err());
        }
    }

    @Test
    void noServerIsARuntimeError() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Run run = jiwarp("bench", "127.0.0.1", "-p", port, "-n", "10", "--warmup", "0");
        assertEquals(1, run.exit(), run.out());
        assertEquals("jiwarp bench: connection to 127.0.0.1:" + port + " refused (nothing listening there?)\n",
                run.err());
    }

    static int count(String haystack, String needle) {
        int n = 0;
        for (int i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }
}
