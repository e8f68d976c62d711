package org.jiwarp.cli.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
        for (int attempt = 0; attempt < 100; attempt++) {
            client = jiwarp("perftest", "-R", "--test", "READ", "-n", 200, "-s", 4096, "-p", port, "--timeout", 20,
                    "127.0.0.1");
            if (client.exit() == 0 || !client.err().contains("Connection refused")) {
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
        assertTrue(served.err().contains("ib_read_bw server listening on /127.0.0.1:" + port), served.err());
        assertTrue(client.err().contains("ib_read_bw client done with perftest 6.06: 200/200 RDMA Reads completed "
                + "successfully in 2 completions; data: 1 slot(s) of 4096 octets read back"), client.err());
        String digest = client.err().replaceFirst("(?s).*data crc32c (0x[0-9a-f]{8}).*", "$1");
        assertTrue(served.err().contains("data crc32c " + digest), served.err());
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
        };
        for (Object[] args : bad) {
            Run run = jiwarp(args);
            assertEquals(2, run.exit(), Arrays.toString(args) + ": " + run.err());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
