package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.cli.Jiwarp;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import picocli.CommandLine;

/**
 * {@code jiwarp conform} against Linux siw in the QEMU guest, in both roles, through rdma-core's
 * own rping: {@code rping -s -P} in the guest for the cases where the target listens, a loop of
 * {@code rping -c -C 1} to the host for those where it connects. Each run writes its Markdown
 * scorecard to {@code target/siw-conform-*.md} (the committed one,
 * {@code conformance-tests/siw-peer/conform-scorecard.md}, is a copy).
 *
 * <p>What it asserts is what makes the scorecard trustworthy, not siw's verdicts: every case runs
 * to a verdict, none hangs, and the cases that show siw's Terminate encoding come out KNOWN through
 * the {@code siw} profile's {@code terminate-encoding} entry (the control word read as
 * little-endian bitfields names the error the RFC requires).
 */
@Tag("siw")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SiwConformTest {

    /**
     * The cases CI runs against siw (a few minutes under TCG): one or two of each group, chosen for
     * what they show of siw (see the committed scorecard for every case).
     */
    static final String CI_CASES = String.join(",", "request-bad-key", "request-revision-3", "reply-bad-key",
            "reply-rejects", "bad-crc-in-the-first-fpdu", "bad-crc-field", "crc-off-crc-field-ignored",
            "ddp-version-2-untagged", "queue-number-3", "send-msn-gap", "send-too-long-for-the-receive", "write-to-an-unknown-stag",
            "write-before-the-base", "write-past-the-end", "rdmap-version-0-send", "opcode-c", "read-before-the-base",
            "read-response-with-no-read-outstanding", "fpdu-split-at-07", "send-in-two-ddp-segments", "write-placed",
            "request-asks-for-markers", "reply-asks-for-markers", "corrupted-write-stag", "first-fpdu-ddp-version-0-send",
            "terminate-says-headers-follow-but-ends", "bad-crc-while-not-reading");

    /**
     * How long one client in the guest's loop may live before the loop kills it and starts the next:
     * siw's rping client can hang after a case that ends early (finding F13).
     */
    private static final int RPING_CLIENT_LIFETIME_SECONDS = 20;

    /** perftest's clients live longer: a whole exchange takes several seconds under TCG. */
    private static final int PERFTEST_CLIENT_LIFETIME_SECONDS = 30;

    /**
     * A case's wait for the loop's next client to connect: a client that hung in the case before is
     * killed at the end of its lifetime, counted from its connection, and the next one starts in
     * the guest; a case that ended soon after the connection leaves almost none of its own wait for
     * that start (a wait equal to the lifetime lost a case once on a loaded machine), so the wait
     * is the lifetime and this margin for the start.
     */
    private static final int CLIENT_START_MARGIN_MILLIS = 20_000;

    private static int clientWaitMillis(int lifetimeSeconds) {
        return lifetimeSeconds * 1000 + CLIENT_START_MARGIN_MILLIS;
    }

    private static volatile SiwPeer peer;

    @BeforeAll
    static void boot() throws IOException {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage.ensureBuilt();
        peer = SiwPeer.boot();
        System.out.println("siw peer up in " + peer.bootTime().toMillis() + " ms under " + peer.accel());
    }

    @AfterAll
    static void shutDown() {
        if (peer != null) {
            peer.close();
        }
        RETRIED.forEach(System.out::println);
    }

    /** The cells that needed a fresh guest ({@link GuestHang}); printed at the end. */
    private static final List<String> RETRIED = new ArrayList<>();

    /** A test's body, run once more on a fresh guest if the guest stops answering ({@link GuestHang}). */
    private static void withFreshGuestOnHang(String cell, GuestHang.Cell body) throws Exception {
        GuestHang.retryOnFreshGuest(cell, peer, RETRIED, () -> {
            peer.close();
            peer = SiwPeer.boot();
        }, body);
    }

    private record Run(int exit, String out, String err) {
    }

    /** Runs jiwarp conform in this JVM; its progress lines go to {@code target/NAME.progress} as they come. */
    private static Run conform(String name, Object... args) throws IOException {
        StringWriter out = new StringWriter();
        Path progress = Path.of("target", name + ".progress");
        Files.createDirectories(progress.getParent());
        try (PrintWriter err = new PrintWriter(Files.newBufferedWriter(progress, StandardCharsets.UTF_8), true)) {
            CommandLine line = Jiwarp.commandLine();
            line.setOut(new PrintWriter(out));
            line.setErr(err);
            List<String> all = new ArrayList<>(List.of("conform", "--progress"));
            for (Object a : args) {
                all.add(a.toString());
            }
            int exit = line.execute(all.toArray(new String[0]));
            err.flush();
            return new Run(exit, out.toString(), Files.readString(progress, StandardCharsets.UTF_8));
        }
    }

    private static void keep(String name, Run run) throws IOException {
        Path file = Path.of("target", name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, run.out(), StandardCharsets.UTF_8);
        System.out.println(run.out());
        System.out.println(run.err());
    }

    /** siw's Terminates are read in its encoding, and the siw profile makes those cases KNOWN. */
    private static void assertSiwEncodingKnown(Run run) {
        assertTrue(run.out().contains("encoded as little-endian bitfields (Layer in the low nibble of octet 0, M/D/R "
                + "in the low bits of octet 2, as Linux siw 6.1 writes it)"), run.out());
        assertTrue(run.out().contains("| **KNOWN** | "), run.out());
        assertTrue(run.out().contains("*Known: Linux siw 6.1 writes the Terminate control word as little-endian "
                + "bitfields"), run.out());
    }

    private static void assertRanToTheEnd(Run run) {
        assertTrue(run.exit() == 0 || run.exit() == 1, run.out() + run.err());
        assertTrue(run.out().contains(" cases against "), run.out());
        assertFalse(run.out().contains("the case hung"), run.out());
        assertFalse(run.out().contains("the case could not run"), run.out());
    }

    @Test
    @Order(1)
    void siwAsTheListener() throws Exception {
        withFreshGuestOnHang("siwAsTheListener", () -> {
            try (SiwPeer.Background server = peer.start("while true; do rping -s -P -a " + SiwPeer.GUEST_ADDRESS
                    + " -p " + SiwPeer.RPING_PORT + " >>/tmp/rping-s.out 2>&1; sleep 0.2; done")) {
                peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
                // Eight octets of an MPA Request and a FIN wedge siw's listener: no connection is set up again
                // until the guest reboots (finding F17; the scorecard has its row from a run of its own).
                Run run = conform("siw-conform-listens", selection("127.0.0.1:" + peer.hostPort(SiwPeer.RPING_PORT),
                        "--profile", "siw", "--markdown", "--skip", "mpa-requests-broken-in-sequence"));
                keep("siw-conform-listens.md", run);
                System.out.println(peer.run("tail -n 40 /tmp/rping-s.out; ps -o pid,stat,args | grep [r]ping; "
                        + "dmesg | tail -n 30").output());
                assertRanToTheEnd(run);
                assertSiwEncodingKnown(run);
            }
        });
    }

    @Test
    @Order(2)
    void siwAsTheConnector() throws Exception {
        withFreshGuestOnHang("siwAsTheConnector", () -> {
            int port;
            try (ServerSocket probe = new ServerSocket(0)) {
                port = probe.getLocalPort();
            }
            try (SiwPeer.Background clients = peer.start("while true; do date +'%T start' >>/tmp/rping-c.out; timeout -s KILL "
                    + RPING_CLIENT_LIFETIME_SECONDS + " rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port
                    + " -C 1 >>/tmp/rping-c.out 2>&1; rc=$?; echo \"$(date +%T) exit $rc\" >>/tmp/rping-c.out; sleep 0.1; done")) {
                // rping's first start in the guest is slow: one case with a long wait brings the loop up.
                Run warmUp = conform("siw-conform-warm-up", "--listen", port, "--case", "write-placed", "--wait", 60_000);
                assertTrue(warmUp.out().contains("1 PASS"), warmUp.out() + warmUp.err());
                // A Reply with 513 octets of private data wedges siw's initiator: no rping -c connects again
                // until the guest reboots (the scorecard has its row from a run of its own; the broken Replies in
                // sequence include it). siw's rping client
                // can take more than 5 s to come back after some cases (finding F13 of the first full run), so
                // each case waits for it past the lifetime of a client that hung.
                Run run = conform("siw-conform-connects", selection("--listen", port, "--profile", "siw", "--markdown",
                        "--wait", clientWaitMillis(RPING_CLIENT_LIFETIME_SECONDS), "--timeout", 8000, "--skip",
                        "reply-private-data-513,mpa-replies-broken-in-sequence"));
                keep("siw-conform-connects.md", run);
                String clientsLog = peer.run("date; tail -n 40 /tmp/rping-c.out").output();
                System.out.println(clientsLog);
                assertRanToTheEnd(run);
                assertEquals(0, countOf(run.out(), "did not connect within"), () -> run.out() + run.err()
                        + "\nthe guest's rping clients:\n" + clientsLog);
                assertSiwEncodingKnown(run);
            }
        });
    }

    /** perftest's options in the guest: one short run a case (-n), no TSC linearity check under TCG (-F). */
    private static final String PERFTEST_OPTIONS = " -R -F -n 5";

    /**
     * The perftest cases CI runs against siw (each case is one perftest run in the guest, 5 to 10 s
     * under TCG): the exact bounds both ways and the access rights; {@code -Djiwarp.siw.conform=all}
     * runs the whole perftest group.
     */
    static final String CI_PERFTEST_CASES = String.join(",", "perftest-write-last-octets",
            "perftest-write-one-past-the-end", "perftest-read-of-a-write-only-region", "perftest-read-last-octets",
            "perftest-read-one-past-the-end");

    @Test
    @Order(3)
    void siwsPerftestAsTheListener() throws Exception {
        withFreshGuestOnHang("siwsPerftestAsTheListener", () -> {
            for (String program : List.of("ib_write_bw", "ib_read_bw")) {
                try (SiwPeer.Background server = peer.start("while true; do " + program + PERFTEST_OPTIONS + " -p "
                        + SiwPeer.PERFTEST_PORT + " >>/tmp/perftest-s.out 2>&1; sleep 0.2; done")) {
                    peer.awaitListening(SiwPeer.PERFTEST_PORT, Duration.ofSeconds(60));
                    Run run = conform("siw-conform-" + program + "-listens", perftestSelection(program, "127.0.0.1:"
                            + peer.hostPort(SiwPeer.PERFTEST_PORT), "--app", program, "--profile", "siw", "--markdown",
                            "--wait", 20_000, "--timeout", 8000));
                    keep("siw-conform-" + program + "-listens.md", run);
                    System.out.println(peer.run("tail -n 20 /tmp/perftest-s.out").output());
                    assertRanToTheEnd(run);
                    assertFalse(run.out().contains("perftest's exchange failed"), run.out());
                    // The exact end of the region perftest registered: its last octets take a Write, one more does not.
                    assertTrue(run.out().contains("| `perftest-write-last-octets` | perftest | RFC 5041 8.3.1 rule 3 "
                            + "(inclusive bounds) | PASS |"), run.out());
                    assertTrue(run.out().contains("| `perftest-write-one-past-the-end` | perftest |"), run.out());
                    assertFalse(run.out().contains("| `perftest-write-one-past-the-end` | perftest | RFC 5041 7.1 (tagged 4), "
                            + "8.3.1 rule 3 | **FAIL** | no Terminate"), run.out());
                }
            }
        });
    }

    @Test
    @Order(4)
    void siwsPerftestAsTheConnector() throws Exception {
        withFreshGuestOnHang("siwsPerftestAsTheConnector", () -> {
            int port;
            try (ServerSocket probe = new ServerSocket(0)) {
                port = probe.getLocalPort();
            }
            for (String program : List.of("ib_write_bw", "ib_read_bw")) {
                try (SiwPeer.Background clients = peer.start("while true; do timeout -s KILL " + PERFTEST_CLIENT_LIFETIME_SECONDS + " " + program
                        + PERFTEST_OPTIONS + " -p " + port + " " + SiwPeer.HOST_ADDRESS
                        + " >>/tmp/perftest-c.out 2>&1; sleep 0.2; done")) {
                    Run run = conform("siw-conform-" + program + "-connects", perftestSelection(program, "--listen", port,
                            "--app", program, "--profile", "siw", "--markdown", "--wait", clientWaitMillis(PERFTEST_CLIENT_LIFETIME_SECONDS), "--timeout",
                            8000));
                    keep("siw-conform-" + program + "-connects.md", run);
                    System.out.println(peer.run("tail -n 20 /tmp/perftest-c.out").output());
                    assertRanToTheEnd(run);
                    assertFalse(run.out().contains("perftest's exchange failed"), run.out());
                    assertTrue(run.out().contains("| `perftest-write-last-octets` | perftest | RFC 5041 8.3.1 rule 3 "
                            + "(inclusive bounds) | PASS |"), run.out());
                    assertTrue(run.out().contains("| `perftest-write-one-past-the-end` | perftest |"), run.out());
                }
            }
        });
    }

    /**
     * {@code --restart-cmd} reboots the guest when siw stops answering: a Reply with 513 octets of
     * private data wedges siw's initiator (finding F12) so that no rping client connects again; the
     * restart command asks this test to reboot the guest (a new QEMU with its rping loop) and waits
     * for it, and the next case runs against the fresh siw (one reboot, about a minute under TCG).
     */
    @Test
    @Order(5)
    void aWedgedSiwIsRebootedByTheRestartCommand() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        String loop = "while true; do timeout -s KILL 20 rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port
                + " -C 1 >>/tmp/rping-c.out 2>&1; sleep 0.1; done";
        Path signals = Files.createTempDirectory(Path.of("target"), "siw-restart");
        Path request = signals.resolve("request");
        Path done = signals.resolve("done");
        java.util.concurrent.atomic.AtomicInteger reboots = new java.util.concurrent.atomic.AtomicInteger();
        SiwPeer.Background[] clients = {peer.start(loop)};
        Thread rebooter = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    if (Files.deleteIfExists(request)) {
                        peer.close();
                        peer = SiwPeer.boot();
                        clients[0] = peer.start(loop);
                        reboots.incrementAndGet();
                        Files.writeString(done, "rebooted");
                    }
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                } catch (IOException | RuntimeException e) {
                    e.printStackTrace();
                    return;
                }
            }
        }, "siw-rebooter");
        rebooter.setDaemon(true);
        rebooter.start();
        try {
            Run warmUp = conform("siw-conform-restart-warm-up", "--listen", port, "--case", "write-placed", "--wait",
                    60_000);
            assertTrue(warmUp.out().contains("1 PASS"), warmUp.out() + warmUp.err());
            String restart = "touch " + request + "; while [ ! -e " + done + " ]; do sleep 0.2; done; rm -f " + done;
            Run run = conform("siw-conform-restart", "--listen", port, "--case", "reply-private-data-513,read-answered",
                    "--profile", "siw", "--markdown", "--wait", 20_000, "--timeout", 8000, "--restart-cmd", restart);
            keep("siw-conform-restart.md", run);
            assertRanToTheEnd(run);
            assertEquals(1, reboots.get(), run.err());
            assertTrue(run.err().contains("the target is not answering; running the restart command"), run.err());
            // After the reboot siw's rping client connects again and the next case runs to its verdict.
            assertTrue(run.out().contains("| `read-answered` | rdmap | RFC 5040 4.4, 5.2.1, 5.2.2 | PASS |"),
                    run.out());
        } finally {
            rebooter.interrupt();
            rebooter.join(120_000);
            clients[0].close();
        }
    }

    /** The perftest cases to run: all with {@code -Djiwarp.siw.conform=all}, else those of {@link #CI_PERFTEST_CASES} for {@code program}. */
    private static Object[] perftestSelection(String program, Object... args) {
        List<Object> all = new ArrayList<>(List.of(args));
        if (!System.getProperty("jiwarp.siw.conform", "").equals("all")) {
            List<String> cases = new ArrayList<>();
            for (String name : CI_PERFTEST_CASES.split(",")) {
                boolean readOnly = name.startsWith("perftest-read-") && !name.equals("perftest-read-of-a-write-only-region");
                boolean writeOnly = name.equals("perftest-read-of-a-write-only-region");
                if (!(readOnly && program.equals("ib_write_bw")) && !(writeOnly && program.equals("ib_read_bw"))) {
                    cases.add(name);
                }
            }
            all.add("--case");
            all.add(String.join(",", cases));
        }
        return all.toArray();
    }

    /**
     * The cases to run: {@code -Djiwarp.siw.conform=all} runs every case (the scorecard run), a
     * comma-separated list runs those, and by default (CI) the subset {@link #CI_CASES}.
     */
    private static Object[] selection(Object... args) {
        String wanted = System.getProperty("jiwarp.siw.conform", "");
        List<Object> all = new ArrayList<>(List.of(args));
        if (!wanted.equals("all")) {
            all.add("--case");
            all.add(wanted.isBlank() ? CI_CASES : wanted);
        }
        return all.toArray();
    }

    private static int countOf(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }
}
