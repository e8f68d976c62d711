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
        assertTrue(first.out().startsWith("ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr"),
                first.out());
        // rping's default size, 64 octets: the C string is 63 characters and its NUL.
        assertEquals("ping data: ".length() + 63, first.out().split("\n")[0].length(), first.out());
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
        assertTrue(served.err().contains("connected: MPA rev 2, CRC, IRD 1 / ORD 1"), served.err());
        // M in the Request asks the responder to send markers (RFC 5044 section 7.1).
        assertTrue(served.err().contains("connected: MPA rev 1, no CRC, markers to the peer"), served.err());
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
            {"ping", "-c", "-a", "127.0.0.1", "--p2p", "--mpa-rev", "1"},
            {"ping", "-c", "-a", "127.0.0.1", "-p", "99999"},
            {"ping", "-c", "-a", "127.0.0.1", "-p", "0"},
            {"ping", "-c", "-a", "127.0.0.1", "-P"},
            {"ping", "-s", "-I", "127.0.0.1"},
            {"ping", "-c", "-a", "127.0.0.1", "--no-such-flag"},
        };
        for (String[] args : bad) {
            Run run = jiwarp((Object[]) args);
            String what = String.join(" ", args) + ": " + run.err();
            assertEquals(2, run.exit(), what);
            // One line, naming the subcommand and pointing to its help; no usage dump.
            assertEquals(1, count(run.err(), "\n"), what);
            assertTrue(run.err().startsWith("jiwarp ping: ") && run.err().endsWith("(see 'jiwarp ping --help')\n"),
                    what);
            assertTrue(run.out().isEmpty(), what);
        }
    }

    @Test
    void aServerWithoutPServesOneClientAndMinusCEndsAnEndlessPing() throws Exception {
        int port = freePort();
        // rping -s -C 4: serve four pings, then hang up; no -P: then exit.
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port, "-C", "4", "-q"));
        // -I: connect from 127.0.0.2; -d: debug lines; no -C: ping until the server leaves.
        Run client = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-V", "-I", "127.0.0.2", "-d");
        assertEquals(0, client.exit(), client.err());
        assertTrue(client.err().contains("4 pings of 64 octets to 127.0.0.1:" + port + ", 4 validated"), client.err());
        assertTrue(client.err().contains("then the server closed the connection"), client.err());
        assertTrue(client.err().contains("jiwarp ping: connected to 127.0.0.1:" + port + ": MPA rev 2"), client.err());
        assertEquals(4, count(client.err(), ": round trip "), client.err());
        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, served.exit(), served.err());
        // The server exited after its one client: a second one is refused.
        Run second = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "1");
        assertEquals(1, second.exit(), second.err());
        assertEquals("jiwarp ping: connection to 127.0.0.1:" + port + " refused (nothing listening there?)\n",
                second.err());
    }

    @Test
    void minusIConnectsFromTheGivenAddress() throws Exception {
        int port = freePort();
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port));
        Run client = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "2", "-I", "127.0.0.2", "-q");
        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, client.exit(), client.err() + "the server said:\n" + served.err());
        assertTrue(served.err().contains("client 127.0.0.2:"), served.err());
    }

    @Test
    void aPersistentServerServesUntilStopped() throws Exception {
        int port = freePort();
        CompletableFuture<Run> server = new CompletableFuture<>();
        Thread serving = new Thread(() -> server.complete(jiwarp("ping", "-s", "-P", "-a", "127.0.0.1", "-p", port)));
        serving.start();
        for (int i = 0; i < 3; i++) {
            Run client = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "2", "-V", "-q");
            assertEquals(0, client.exit(), "client " + i + ": " + client.err());
        }
        serving.interrupt();
        Run served = server.get(60, TimeUnit.SECONDS);
        assertEquals(0, served.exit(), served.err());
        assertEquals(3, count(served.err(), " gone after 2 pings"), served.err());
    }

    @Test
    void rpingFlagsWithoutAMeaningHereAreAccepted() throws Exception {
        int port = freePort();
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port, "-q", "-S", "30", "-d"));
        Run client = awaitClient("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "2", "-q", "-S", "26", "-V");
        assertEquals(0, client.exit(), client.err());
        assertTrue(client.err().contains("2 pings of 26 octets"), client.err());
        assertEquals(0, server.get(60, TimeUnit.SECONDS).exit());
    }

    /** rping's {@code -t tos}, with its value before the other flags: refused by name, with the reason. */
    @Test
    void minusTIsRefusedInOneSentenceThatSaysWhy() {
        for (Object[] args : new Object[][] {{"ping", "-c", "-t", "16", "-a", "127.0.0.1"},
                {"ping", "-s", "-t", "16", "-a", "127.0.0.1"}}) {
            Run run = jiwarp(args);
            assertEquals(2, run.exit(), run.err());
            assertEquals("jiwarp ping: -t (the type of service) is not implemented here: jiwarp does not set the IP "
                    + "type of service of its connections (see 'jiwarp ping --help')\n", run.err());
        }
    }

    @Test
    void errorsAreSentencesWithoutJavaNames() {
        Run unknown = jiwarp("ping", "-c", "-a", "no-such-host.invalid", "-C", "1");
        assertEquals(1, unknown.exit(), unknown.err());
        assertEquals("jiwarp ping: unknown host no-such-host.invalid\n", unknown.err());
        Run debug = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", "1", "-C", "1", "--debug");
        assertEquals(1, debug.exit(), debug.err());
        assertTrue(debug.err().startsWith("jiwarp ping: connection to 127.0.0.1:1 refused (nothing listening there?)\n"
                + "io.netty.channel."), debug.err());
        Run plain = jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", "1", "-C", "1");
        assertEquals("jiwarp ping: connection to 127.0.0.1:1 refused (nothing listening there?)\n", plain.err());
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
