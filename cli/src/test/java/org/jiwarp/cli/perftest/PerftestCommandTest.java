package org.jiwarp.cli.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.cli.Jiwarp;
import org.jiwarp.tools.perftest.BwReport;
import org.jiwarp.tools.perftest.LatencyReport;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code jiwarp perftest} as typed: both roles, perftest's output, the exit codes. */
class PerftestCommandTest {

    record Run(int exit, String out, String err) {
    }

    static Run jiwarp(Object... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine line = Jiwarp.commandLine();
        line.setOut(new PrintWriter(out, true));
        line.setErr(new PrintWriter(err, true));
        int exit = line.execute(Arrays.stream(args).map(Object::toString).toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void serverAndClientLikePerftest() throws Exception {
        int port = freePort();
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() -> jiwarp("perftest", "--test", "read", "-n",
                200, "-s", 4096, "-p", port, "--bind", "127.0.0.1", "--accept-timeout", 20, "--timeout", 20));
        Run client = null;
        // Retry while the server is not listening yet (refused), for 30 s at most.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            client = jiwarp("perftest", "-R", "--test", "READ", "-n", 200, "-s", 4096, "-p", port, "--timeout", 20,
                    "127.0.0.1");
            if (client.exit() == 0 || !client.err().contains("refused") || System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, client.exit(), client.err());
        assertEquals(0, served.exit(), served.err());
        for (Run run : new Run[] {client, served}) {
            assertTrue(run.out().contains("                    RDMA_Read BW Test"), run.out());
            assertTrue(run.out().contains(BwReport.HEADER), run.out());
            assertTrue(run.out().matches("(?s).*\n 4096       200 +[0-9.]+ +[0-9.]+ *\t\t   [0-9.]+\n.*"), run.out());
            assertTrue(run.out().contains(" Outstand reads  : 128"), run.out());
        }
        assertTrue(served.out().contains("* Waiting for client to connect... *"), served.out());
        assertTrue(served.err().contains("ib_read_bw server listening on 127.0.0.1:" + port), served.err());
        assertTrue(client.err().contains("ib_read_bw client done with perftest 6.06: 200/200 RDMA Reads completed "
                + "successfully in 2 completions; data: 1 slot(s) of 4096 octets read back"), client.err());
        String digest = client.err().replaceFirst("(?s).*data crc32c (0x[0-9a-f]{8}).*", "$1");
        assertTrue(served.err().contains("data crc32c " + digest), served.err());
    }

    /**
     * Two jiwarp ends that disagree on the program, -n or -s: both find it in the version exchange
     * and say it in one sentence, before any table; for every program, since ib_send_bw and
     * ib_write_lat have no report exchange in which to find it later.
     */
    @Test
    void mismatchedRunsAreNamedByBothSides() throws Exception {
        Object[][] cases = {
            // server's flags, client's flags, the server's program, the client's, what each says
            {new Object[] {"--test", "write", "-n", 300, "-s", 4096}, new Object[] {"--test", "write", "-n", 200, "-s", 4096},
                "ib_write_bw", "ib_write_bw", "the server runs 300 iterations of 4096 octets and this client 200 of "
                + "4096", "the client runs 200 iterations of 4096 octets and this server 300 of 4096"},
            {new Object[] {"--test", "read", "-n", 200, "-s", 8192}, new Object[] {"--test", "read", "-n", 200, "-s", 4096},
                "ib_read_bw", "ib_read_bw", "the server runs 200 iterations of 8192 octets and this client 200 of "
                + "4096", "the client runs 200 iterations of 4096 octets and this server 200 of 8192"},
            {new Object[] {"--test", "send", "-n", 300, "-s", 4096}, new Object[] {"--test", "send", "-n", 200, "-s", 4096},
                "ib_send_bw", "ib_send_bw", "the server runs 300 iterations of 4096 octets and this client 200 of "
                + "4096", "the client runs 200 iterations of 4096 octets and this server 300 of 4096"},
            {new Object[] {"--lat", "-n", 300, "-s", 4096}, new Object[] {"--lat", "-n", 200, "-s", 4096},
                "ib_write_lat", "ib_write_lat", "the server runs 300 iterations of 4096 octets and this client 200 "
                + "of 4096", "the client runs 200 iterations of 4096 octets and this server 300 of 4096"},
            {new Object[] {"--test", "send", "-n", 200, "-s", 4096}, new Object[] {"--test", "write", "-n", 200, "-s", 4096},
                "ib_send_bw", "ib_write_bw", "the server runs ib_send_bw and this client ib_write_bw",
                "the client runs ib_write_bw and this server ib_send_bw"},
        };
        for (Object[] c : cases) {
            int port = freePort();
            Object[] serverArgs = concat(new Object[] {"perftest"}, (Object[]) c[0], new Object[] {"-p", port,
                "--bind", "127.0.0.1", "--accept-timeout", 20, "--timeout", 20});
            CompletableFuture<Run> server = CompletableFuture.supplyAsync(() -> jiwarp(serverArgs));
            Run client = null;
            // Retry while the server is not listening yet (refused), for 30 s at most.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                client = jiwarp(concat(new Object[] {"perftest"}, (Object[]) c[1], new Object[] {"-p", port,
                    "--timeout", 20, "127.0.0.1"}));
                if (client.exit() == 0 || !client.err().contains("refused") || System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(50);
            }
            Run served = server.get(60, TimeUnit.SECONDS);
            String remedy = c[3].equals(c[2]) ? ": give both ends the same -n and -s\n"
                    : ": give both ends the same --test and --lat\n";
            assertEquals(1, client.exit(), client.err());
            assertTrue(client.err().contains("jiwarp perftest: " + c[3] + " client failed: " + c[4] + remedy),
                    client.err());
            assertTrue(!client.out().contains(BwReport.HEADER) && !client.out().contains(LatencyReport.HEADER),
                    "no table before the failure: " + client.out());
            assertEquals(1, served.exit(), served.err());
            assertTrue(served.err().contains("jiwarp perftest: " + c[2] + " server failed: " + c[5] + remedy),
                    served.err() + " / " + served.out() + " / client: " + client.err());
        }
    }

    private static Object[] concat(Object[]... parts) {
        return Arrays.stream(parts).flatMap(Arrays::stream).toArray();
    }

    @Test
    void aClientWithNoServerFailsWithOne() throws IOException {
        Run run = jiwarp("perftest", "-n", 10, "-p", freePort(), "--timeout", 5, "127.0.0.1");
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.err().contains("ib_write_bw client failed: the control connection to"), run.err());
    }

    @Test
    void usageErrorsExitWithTwo() {
        Object[][] bad = {
            {"perftest", "--lat", "--test", "read", "127.0.0.1"},
            {"perftest", "--server", "127.0.0.1"},
            {"perftest", "-n", 4, "127.0.0.1"},
            {"perftest", "--mpa-rev", 3, "127.0.0.1"},
            {"perftest", "--p2p", "--mpa-rev", 1, "127.0.0.1"},
            {"perftest", "--test", "atomic", "127.0.0.1"},
            {"perftest", "--test", "send", "-r", 2, "127.0.0.1"},
            {"perftest", "-s", 0, "127.0.0.1"},
            {"perftest", "-p", 70000, "127.0.0.1"},
            {"perftest", "-p", 0, "127.0.0.1"},
        };
        for (Object[] args : bad) {
            Run run = jiwarp(args);
            assertEquals(2, run.exit(), Arrays.toString(args) + ": " + run.err());
            assertTrue(run.err().startsWith("jiwarp perftest: ") && run.err().endsWith(
                    "(see 'jiwarp perftest --help')\n") && run.err().indexOf('\n') == run.err().length() - 1,
                    Arrays.toString(args) + ": " + run.err());
        }
    }

    @Test
    void perftestFlagsNotRunHereAreRefusedInOneSentence() {
        Object[][] refused = {
            {"-a", "ib_write_bw", "-a (every size in one run) is not implemented here"},
            {"-D", "ib_write_bw", "-D (a timed run) is not implemented here"},
            {"--run_infinitely", "ib_write_bw", "--run_infinitely (a timed run) is not implemented here"},
            {"-q", "ib_write_bw", "-q 4 is not implemented here"},
            {"-H", "ib_write_lat", "-H (the raw latency samples) is not implemented here"},
            {"-U", "ib_write_lat", "-U (the raw latency samples) is not implemented here"},
            {"-C", "ib_write_lat", "-C (results in CPU cycles) is not implemented here"},
        };
        for (Object[] flag : refused) {
            String name = (String) flag[0];
            Object[] args = name.equals("-D") ? new Object[] {"perftest", "-D", 5, "127.0.0.1"}
                    : name.equals("-q") ? new Object[] {"perftest", "-q", 4, "127.0.0.1"}
                    : flag[1].equals("ib_write_lat") ? new Object[] {"perftest", "--lat", name, "127.0.0.1"}
                    : new Object[] {"perftest", name, "127.0.0.1"};
            Run run = jiwarp(args);
            assertEquals(2, run.exit(), name + ": " + run.err());
            assertTrue(run.err().startsWith("jiwarp perftest: " + flag[2]), name + ": " + run.err());
        }
    }

    /**
     * Every perftest 4.5 flag jiwarp does not run, given as perftest takes it (with its value where
     * it has one) before the HOST: one sentence that names the flag and says why, never "unknown
     * options" nor the HOST taken for an option.
     */
    @Test
    void everyOtherPerftestFlagIsRefusedByNameWithItsReason() {
        for (PerftestFlags.Flag flag : PerftestFlags.FLAGS) {
            for (String name : flag.names()) {
                Object[] args = flag.argument() ? new Object[] {"perftest", name, 3, "127.0.0.1"}
                        : new Object[] {"perftest", name, "127.0.0.1"};
                Run run = jiwarp(args);
                assertEquals(2, run.exit(), name + ": " + run.err());
                assertTrue(run.err().startsWith("jiwarp perftest: " + name + " (" + flag.what() + ") ")
                        && (run.err().contains(" is not implemented here: ") || run.err().contains(
                                " does not apply here: ")), name + ": " + run.err());
                assertEquals(run.err().length() - 1, run.err().indexOf('\n'), name + ": " + run.err());
                assertFalse(run.err().contains("127.0.0.1") || run.err().contains("nknown"), name + ": " + run.err());
            }
        }
        // The issue's own example: the GID index and its value, then the host.
        Run gid = jiwarp("perftest", "-x", 3, "127.0.0.1");
        assertEquals("jiwarp perftest: -x (the GID index) does not apply here: iWARP has no GIDs, and names the peer "
                + "by its IP address (HOST) (see 'jiwarp perftest --help')\n", gid.err());
        assertTrue(jiwarp("perftest", "-c", "UC", "127.0.0.1").err().startsWith("jiwarp perftest: -c UC (the "
                + "connection type) does not apply here: iWARP has reliable connections (RC) only"));
        // An option perftest does not have either: named alone, not with the HOST after its value.
        Run unknown = jiwarp("perftest", "--frobnicate", 3, "127.0.0.1");
        assertEquals(2, unknown.exit(), unknown.err());
        assertTrue(unknown.err().startsWith("jiwarp perftest: --frobnicate is an option of neither jiwarp perftest "
                + "nor perftest"), unknown.err());
        assertFalse(unknown.err().contains("127.0.0.1"), unknown.err());
    }

    @Test
    void reportGbitsPrintsGigabitsAndCpuFreqAndOneQpAreAccepted() throws Exception {
        // 1000 MB/s (2^20 octets) is 8.39 Gb/s (10^9 bits).
        assertTrue(new BwReport(4096, 200, 1000, 500, 1).line(true).matches(" 4096 +200 +8\\.39 +4\\.19\\s+1\\.0+"),
                new BwReport(4096, 200, 1000, 500, 1).line(true));
        int port = freePort();
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() -> jiwarp("perftest", "-n", 200, "-s", 4096,
                "-p", port, "--bind", "127.0.0.1", "--accept-timeout", 20, "--timeout", 20, "--report_gbits", "-F"));
        Run client = null;
        // Retry while the server is not listening yet (refused), for 30 s at most.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            client = jiwarp("perftest", "-n", 200, "-s", 4096, "-p", port, "--timeout", 20, "-F", "-q", 1,
                    "--report_gbits", "127.0.0.1");
            if (client.exit() == 0 || !client.err().contains("refused") || System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, client.exit(), client.err());
        assertEquals(0, served.exit(), served.err());
        for (Run run : new Run[] {client, served}) {
            assertTrue(run.out().contains(BwReport.HEADER_GBITS), run.out());
            assertTrue(!run.out().contains("MB/sec"), run.out());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
