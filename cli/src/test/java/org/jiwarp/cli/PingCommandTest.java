package org.jiwarp.cli;

import static org.jiwarp.cli.BenchCommandTest.count;
import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp ping} against {@code jiwarp ping -s}, over real loopback TCP: the rping exchange
 * with validated data, the server serving clients one after another with the CRC and markers each
 * asks for, rping's output, and the exit codes.
 */
class PingCommandTest {

    @TempDir
    Path temp;

    @Test
    void clientsPingAServerThatKeepsServing() throws Exception {
        int port = freePort();
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port, "--clients", "3", "-v"));
        Run first = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "10", "-V", "-v");
        assertEquals(0, first.exit(), first.err());
        assertEquals(10, count(first.out(), "ping data: rdma-ping-"), first.out());
        assertTrue(first.out().startsWith("ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr\n"),
                first.out());
        assertTrue(first.err().contains("10 pings of 64 octets") && first.err().contains("10 validated"), first.err());

        Run big = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "20", "-V", "-S", "65535", "--crc");
        assertEquals(0, big.exit(), big.err());
        assertTrue(big.err().contains("20 validated"), big.err());

        Run marked = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "10", "-V", "-S", "1000", "--markers",
                "--mpa-rev", "1");
        assertEquals(0, marked.exit(), marked.err());

        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, served.exit(), served.err());
        assertEquals(40, count(served.out(), "server ping data: rdma-ping-"), served.out());
        assertTrue(served.err().contains("CRC on"), served.err());
        // M in the Request asks the responder to send markers (RFC 5044 section 7.1).
        assertTrue(served.err().contains("markers to / not from the peer"), served.err());
        assertEquals(3, count(served.err(), " gone after "), served.err());
    }

    @Test
    void pcapOfAPingDecodes() throws Exception {
        int port = freePort();
        Path pcap = temp.resolve("ping.pcap");
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port, "--clients", "1", "-q"));
        Run client = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "3", "-V", "--crc", "--pcap", pcap);
        assertEquals(0, client.exit(), client.err());
        assertEquals(0, server.get(60, TimeUnit.SECONDS).exit());
        Run decoded = jiwarp("decode", pcap);
        assertEquals(0, decoded.exit(), decoded.err());
        // Per ping: two advertisements and two go-aheads (Sends), a Read Request and Response, a Write.
        assertEquals(12, count(decoded.out(), " Send [last DDP segment]"), decoded.out());
        assertEquals(3, count(decoded.out(), " Read Request [last DDP segment]"), decoded.out());
        assertEquals(3, count(decoded.out(), " Read Response [last DDP segment]"), decoded.out());
        assertEquals(3, count(decoded.out(), " Write [last DDP segment]"), decoded.out());
        assertTrue(!decoded.out().contains("Bad CRC32"), decoded.out());
    }

    @Test
    void usageErrorsExitWithTwo() {
        String[][] bad = {
            {"ping"},
            {"ping", "-s", "-c", "-a", "127.0.0.1"},
            {"ping", "-c"},
            {"ping", "-c", "-a", "127.0.0.1", "-S", "25"},
            {"ping", "-c", "-a", "127.0.0.1", "-S", "65536"},
            {"ping", "-c", "-a", "127.0.0.1", "-C", "-1"},
            {"ping", "-c", "-a", "127.0.0.1", "--mpa-rev", "0"},
        };
        for (String[] args : bad) {
            Run run = jiwarp((Object[]) args);
            assertEquals(2, run.exit(), String.join(" ", args) + ": " + run.err());
        }
    }

    @Test
    void noServerIsARuntimeError() throws IOException {
        Run run = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", freePort(), "-C", "1");
        assertEquals(1, run.exit(), run.out());
        assertTrue(run.err().startsWith("jiwarp ping: "), run.err());
        assertTrue(run.err().toLowerCase().contains("refused"), run.err());
    }

    /** Runs a client, retrying while the server is still starting (connection refused). */
    private static Run awaitClient(Object... args) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Run run = jiwarp(args);
            if (run.exit() == 0 || !run.err().toLowerCase().contains("refused") || System.nanoTime() > deadline) {
                return run;
            }
            Thread.sleep(100);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
