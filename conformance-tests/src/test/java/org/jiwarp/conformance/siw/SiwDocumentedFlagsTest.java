package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code jiwarp ping} and {@code jiwarp perftest} against siw's rping and perftest with the flags as
 * rdma-core's and perftest's documentation write them, nothing jiwarp-specific on either side: no
 * {@code -S} (each side's default size: 64 octets, which a default of 100, as rping(8) has it,
 * breaks: rping's server cannot take a Read Response longer than its 64-octet buffer), no {@code -P} or {@code --clients} (the server exits after
 * its one client), {@code -d} for rping's debug lines, and perftest's {@code -R -F --report_gbits}.
 */
@Tag("siw")
class SiwDocumentedFlagsTest {

    private static final Duration RUN_LIMIT = Duration.ofSeconds(120);
    private static final Pattern GBITS_LINE = Pattern.compile("(?m)^\\s*65536\\s+300\\s+\\S+\\s+\\S+\\s+\\S+\\s*$");

    private static SiwPeer peer;
    /** The cells that needed a fresh guest ({@link GuestHang}); printed at the end. */
    private static final List<String> RETRIED = new ArrayList<>();

    @BeforeAll
    static void boot() {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage.ensureBuilt();
        peer = SiwPeer.boot();
    }

    @AfterAll
    static void shutDown() {
        if (peer != null) {
            peer.close();
        }
        RETRIED.forEach(System.out::println);
    }

    /** A test's body, run once more on a fresh guest if the guest stops answering ({@link GuestHang}). */
    private static void withFreshGuestOnHang(String cell, GuestHang.Cell body) throws Exception {
        GuestHang.retryOnFreshGuest(cell, peer, RETRIED, () -> {
            peer.close();
            peer = SiwPeer.boot();
        }, body);
    }

    /** rping(8): {@code rping -s -v -V -C 10 -a ADDR} in the guest, {@code jiwarp ping -c -a ADDR -C 10 -v -V -d}. */
    @Test
    void jiwarpPingAgainstSiwRpingServer() throws Exception {
        withFreshGuestOnHang("jiwarpPingAgainstSiwRpingServer", () -> {
            try (AcceptRaceRelay relay = new AcceptRaceRelay(peer.hostPort(SiwPeer.RPING_PORT), Duration.ofMillis(300), 0);
                    SiwPeer.Background server = peer.start("rping -s -v -V -C 10 -a " + SiwPeer.GUEST_ADDRESS)) {
                peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
                JiwarpCommand.Run client = JiwarpCommand.start("ping", "-c", "-a", "127.0.0.1", "-p", relay.port(), "-C", 10,
                        "-v", "-V", "-d").run().get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
                ExecResult served = server.await(Duration.ofSeconds(60));
                System.out.println("documented flags, jiwarp client:\n" + client + "\n--- guest rping -s:\n" + served);
                assertEquals(0, client.exit(), () -> client + "\n--- guest:\n" + served);
                assertTrue(client.err().contains("10 pings of 64 octets") && client.err().contains("10 validated"),
                        client::toString);
                assertTrue(client.err().contains("connected to 127.0.0.1:"), client::toString);
                assertEquals(10, count(client.out(), "ping data: rdma-ping-"), client::toString);
            }
        });
    }

    /** rping(8): {@code jiwarp ping -s -a ADDR -v -V} serves siw's {@code rping -c -a ADDR -C 10 -v -V}, then exits. */
    @Test
    void siwRpingAgainstJiwarpPingServer() throws Exception {
        withFreshGuestOnHang("siwRpingAgainstJiwarpPingServer", () -> {
            int port = freePort();
            JiwarpCommand.Started server = JiwarpCommand.start("ping", "-s", "-a", "127.0.0.1", "-p", port, "-v", "-V");
            server.awaitErr("serving on", Duration.ofSeconds(30));
            ExecResult client = peer.run("rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port + " -C 10 -v -V", RUN_LIMIT);
            // No -P: the server exits by itself once its one client has gone.
            JiwarpCommand.Run served = server.run().get(60, TimeUnit.SECONDS);
            System.out.println("documented flags, jiwarp server:\n" + served + "\n--- guest rping -c:\n" + client);
            assertEquals(0, client.exitCode(), () -> client + "\n--- jiwarp:\n" + served);
            assertEquals(10, count(client.output(), "ping data: rdma-ping-"), client::toString);
            assertEquals(0, served.exit(), served::toString);
            assertTrue(served.err().contains("gone after 10 pings"), served::toString);
        });
    }

    /** perftest's README: {@code ib_write_bw -R -F --report_gbits} in the guest, jiwarp with the same flags. */
    @Test
    void jiwarpPerftestAgainstSiwIbWriteBwWithReportGbits() throws Exception {
        withFreshGuestOnHang("jiwarpPerftestAgainstSiwIbWriteBwWithReportGbits", () -> {
            try (SiwPeer.Background server = peer.start("ib_write_bw -R -F --report_gbits -n 300 -p "
                    + SiwPeer.PERFTEST_PORT)) {
                peer.awaitListening(SiwPeer.PERFTEST_PORT, Duration.ofSeconds(60));
                JiwarpCommand.Run client = JiwarpCommand.start("perftest", "-R", "-F", "--report_gbits", "-n", 300, "-p",
                        peer.hostPort(SiwPeer.PERFTEST_PORT), "127.0.0.1").run().get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
                ExecResult served = server.await(Duration.ofSeconds(60));
                System.out.println("documented flags, jiwarp perftest client:\n" + client + "\n--- guest ib_write_bw:\n"
                        + served);
                assertEquals(0, client.exit(), () -> client + "\n--- guest:\n" + served);
                assertEquals(0, served.exitCode(), () -> served + "\n--- jiwarp:\n" + client);
                for (String output : new String[] {client.out(), served.output()}) {
                    assertTrue(output.contains("BW peak[Gb/sec]"), output);
                    assertTrue(GBITS_LINE.matcher(output).find(), output);
                }
            }
        });
    }

    private static int count(String haystack, String needle) {
        int n = 0;
        for (Matcher m = Pattern.compile(Pattern.quote(needle)).matcher(haystack); m.find(); ) {
            n++;
        }
        return n;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
