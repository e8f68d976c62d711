package org.jiwarp.cli;

import static org.jiwarp.cli.BenchCommandTest.count;
import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.jiwarp.cli.PingCommandTest.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp conform} over real loopback TCP: its reports against jiwarp's own rping in both
 * roles (one group each) and perftest in both roles, against targets that get things wrong (the
 * deviations without their profile, a target that never answers, one that is down until the
 * restart command brings it up), and its usage errors. Every rping case against jiwarp is
 * conformance-tests' {@code JiwarpRpingConformTest}, in-process.
 */
class ConformCommandTest {

    private static final Pattern CASE = Pattern.compile("\\{\"name\": \"([^\"]+)\".*?\"verdict\": \"([A-Z]+)\"");

    @TempDir
    Path temp;

    private final List<Thread> targets = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();

    @AfterEach
    void stopTargets() throws InterruptedException {
        stop.set(true);
        for (Thread t : targets) {
            t.interrupt();
            t.join(10_000);
        }
    }

    /** {@code jiwarp ping -s -P} on {@code port}, in this JVM, until the test ends. */
    private void rpingServer(int port) {
        Thread t = new Thread(() -> jiwarp("ping", "-s", "-P", "-a", "127.0.0.1", "-p", port, "--quiet"));
        t.setDaemon(true);
        t.start();
        targets.add(t);
    }

    /** {@code jiwarp ping -c -C 1} to {@code port}, one client after another, until the test ends. */
    private void rpingClients(int port) {
        Thread t = new Thread(() -> {
            while (!stop.get()) {
                jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "1", "--quiet");
            }
        });
        t.setDaemon(true);
        t.start();
        targets.add(t);
    }

    /**
     * A target's own step deadline, longer than conform's bound on one case (four of its 3 s steps): a
     * target that gave up first, on a machine slowed by other work, closed without the Terminate a case
     * waited for (seen once with 5 s).
     */
    private static final int TARGET_TIMEOUT_SECONDS = 30;

    /** {@code jiwarp perftest --server} on {@code port}, one run after another (perftest serves once), until the test ends. */
    private AtomicBoolean perftestServers(int port, String test) {
        return loop(() -> jiwarp("perftest", "--server", "--test", test, "-p", port, "--timeout", TARGET_TIMEOUT_SECONDS,
                "--accept-timeout", 20));
    }

    /** What the targets in a loop printed, the latest last, for a failure's message. */
    private final java.util.concurrent.ConcurrentLinkedDeque<String> targetOutput =
            new java.util.concurrent.ConcurrentLinkedDeque<>();

    /** {@code jiwarp perftest HOST} to {@code port}, one client after another, until the test ends. */
    private AtomicBoolean perftestClients(int port, String test) {
        return loop(() -> {
            Run run = jiwarp("perftest", "--test", test, "-n", 5, "-p", port, "--timeout", TARGET_TIMEOUT_SECONDS,
                    "--settle", 0, "--debug", "127.0.0.1");
            targetOutput.add("--- jiwarp perftest client, exit " + run.exit() + ":\n" + run.out() + run.err());
        });
    }

    /** Runs {@code run} again and again until the test ends or the flag returned is set. */
    private AtomicBoolean loop(Runnable run) {
        AtomicBoolean done = new AtomicBoolean();
        Thread t = new Thread(() -> {
            while (!stop.get() && !done.get()) {
                run.run();
            }
        });
        t.setDaemon(true);
        t.start();
        targets.add(t);
        return done;
    }

    /** Case name to verdict, from {@code --json} output. */
    private static java.util.Map<String, String> verdicts(String json) {
        java.util.Map<String, String> verdicts = new java.util.LinkedHashMap<>();
        Matcher m = CASE.matcher(json);
        while (m.find()) {
            verdicts.put(m.group(1), m.group(2));
        }
        return verdicts;
    }

    private static Set<String> withVerdict(java.util.Map<String, String> verdicts, String verdict) {
        Set<String> names = new TreeSet<>();
        verdicts.forEach((name, v) -> {
            if (v.equals(verdict)) {
                names.add(name);
            }
        });
        return names;
    }

    /**
     * The reports of a run against jiwarp's rping server, on one group: every case with its verdict,
     * its time and what the target did. (Every case against jiwarp in both roles, with what only an
     * in-process run can check, is conformance-tests' {@code JiwarpRpingConformTest}.)
     */
    @Test
    void theJsonAndJunitReportsSayWhatTheTargetDidInEveryCase() throws Exception {
        int port = freePort();
        rpingServer(port);
        Path junit = temp.resolve("conform.xml");
        Run run = jiwarp("conform", "127.0.0.1:" + port, "--profile", "jiwarp", "--json", "--junit", junit,
                "--first-fpdu-pause", "0", "--group", "crc");
        assertEquals(0, run.exit(), run.out() + run.err());
        java.util.Map<String, String> verdicts = verdicts(run.out());
        assertEquals(8, verdicts.size(), run.out());
        assertEquals(Set.of(), withVerdict(verdicts, "FAIL"), run.out());
        assertEquals(Set.of(), withVerdict(verdicts, "KNOWN"), run.out());
        assertEquals(verdicts.size(), count(run.out(), "\"group\": \"crc\""), run.out());
        String xml = Files.readString(junit, StandardCharsets.UTF_8);
        assertTrue(xml.contains("tests=\"" + verdicts.size() + "\" failures=\"0\" skipped=\"0\""), xml);
        assertEquals(verdicts.size(), count(xml, "<testcase "), xml);
        // Each case with its time and what the target did; the suite's time; a file others may read.
        assertTrue(Pattern.compile("<testsuite [^>]* time=\"\\d+\\.\\d{3}\">").matcher(xml).find(), xml);
        assertEquals(List.of(), xml.lines().filter(l -> l.contains("<testcase "))
                .filter(l -> !Pattern.compile(" time=\"\\d+\\.\\d{3}\"").matcher(l).find()).toList(),
                "test cases without a time");
        assertEquals(verdicts.size(), count(xml, "<system-out>target: "), xml);
        assertTrue(Files.getPosixFilePermissions(junit).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ),
                Files.getPosixFilePermissions(junit).toString());
    }

    /** The table against jiwarp's rping client, on one group: what the target did in every case, PASS included. */
    @Test
    void theTableSaysWhatAConnectingTargetDidInEveryCase() throws Exception {
        int port = freePort();
        rpingClients(port);
        Run run = jiwarp("conform", "--listen", port, "--profile", "jiwarp", "--group", "mpa");
        assertEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("(target connects, rping client): "), run.out());
        assertEquals(count(run.out(), "\nPASS   ") + (run.out().startsWith("PASS") ? 1 : 0),
                count(run.out(), "\n         target:   "), run.out());
        assertTrue(run.out().contains(" PASS, 0 KNOWN, 0 FAIL"), run.out());
        assertTrue(run.out().contains("PASS   mpa           reply-reserved-flag-bit"), run.out());
        assertFalse(run.out().contains("request-bad-key"), "a case for the other role ran");
    }

    @Test
    void jiwarpsPerftestServersPassThePerftestGroup() throws Exception {
        int writePort = freePort();
        AtomicBoolean writeServers = perftestServers(writePort, "write");
        Run write = jiwarp("conform", "127.0.0.1:" + writePort, "--app", "ib_write_bw", "--profile", "jiwarp",
                "--json", "--first-fpdu-pause", "0");
        assertEquals(0, write.exit(), write.out() + write.err());
        java.util.Map<String, String> verdicts = verdicts(write.out());
        assertEquals(Set.of(), withVerdict(verdicts, "FAIL"), write.out());
        assertEquals(Set.of(), withVerdict(verdicts, "KNOWN"), write.out());
        // ib_write_bw's region takes remote writes only: a Read of it is an access rights violation.
        assertTrue(verdicts.containsKey("perftest-read-of-a-write-only-region"), write.out());
        assertTrue(verdicts.containsKey("perftest-write-whole-region-plus-one"), write.out());
        assertFalse(verdicts.containsKey("perftest-read-whole-region"), write.out());
        assertFalse(verdicts.containsKey("write-to-an-unknown-stag"), "an rping case ran against perftest");
        assertTrue(write.out().contains("Access rights violation"), write.out());
        writeServers.set(true);

        int readPort = freePort();
        perftestServers(readPort, "read");
        Run read = jiwarp("conform", "127.0.0.1:" + readPort, "--app", "ib_read_bw", "--group", "perftest",
                "--profile", "jiwarp", "--first-fpdu-pause", "0");
        assertEquals(0, read.exit(), read.out() + read.err());
        assertTrue(read.out().contains("PASS   perftest      perftest-read-whole-region"), read.out());
        assertTrue(read.out().contains("PASS   perftest      perftest-read-one-past-the-end"), read.out());
        assertTrue(read.out().contains("PASS   perftest      perftest-write-last-octets"), read.out());
        assertFalse(read.out().contains("perftest-read-of-a-write-only-region"), read.out());
    }

    @Test
    void jiwarpsPerftestClientsPassThePerftestGroup() throws Exception {
        for (String test : List.of("write", "read")) {
            int port = freePort();
            AtomicBoolean clients = perftestClients(port, test);
            Run run = jiwarp("conform", "--listen", port, "--app", "ib_" + test + "_bw", "--profile", "jiwarp");
            assertEquals(0, run.exit(), test + ": " + run.out() + run.err() + "\nthe targets printed:\n"
                    + String.join("\n", targetOutput));
            assertTrue(run.out().contains("(target connects, "), run.out());
            assertTrue(run.out().contains("PASS   perftest      perftest-write-one-past-the-end"), run.out());
            assertTrue(run.out().contains(" KNOWN, 0 FAIL"), run.out());
            clients.set(true);
        }
    }

    /** Without its profile too: the former deviations (RFC 6581 9.1's 0x3FFF, RFC 5040 5.2.1) pass. */
    @Test
    void withoutItsProfileJiwarpsFormerDeviationsPass() throws Exception {
        int port = freePort();
        rpingServer(port);
        Run run = jiwarp("conform", "127.0.0.1:" + port, "--first-fpdu-pause", "0", "--case",
                "request-ird-ord-all-ones,zero-length-read-of-an-unknown-stag,send-msn-gap,reply-bad-key");
        assertEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("PASS   mpa           request-ird-ord-all-ones"), run.out());
        assertTrue(run.out().contains("PASS   rdmap         zero-length-read-of-an-unknown-stag"), run.out());
        assertTrue(run.out().contains("PASS   ddp           send-msn-gap"), run.out());
        // A named case of the other role is left out: one list serves both roles.
        assertFalse(run.out().contains("reply-bad-key"), run.out());
        assertTrue(run.out().contains("3 cases against 127.0.0.1:" + port + " (target listens, rping server): 3 PASS, "
                + "0 KNOWN, 0 FAIL"), run.out());
    }

    /** A known-deviations file turns a failure into KNOWN, with its reason in the report. */
    @Test
    void aKnownDeviationsFileMakesAFailureKnown() throws Exception {
        try (ServerSocket mute = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                List<Socket> held = new ArrayList<>();
                try {
                    while (!stop.get()) {
                        held.add(mute.accept());
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            t.setDaemon(true);
            t.start();
            Path known = temp.resolve("known.txt");
            Files.writeString(known, "# ours\nrequest-bad-key we never answer\n");
            Run run = jiwarp("conform", "127.0.0.1:" + mute.getLocalPort(), "--timeout", "300", "--first-fpdu-pause",
                    "0", "--known", known, "--markdown", "--case", "request-bad-key,bad-crc-in-the-first-fpdu");
            assertEquals(1, run.exit(), run.out() + run.err());
            assertTrue(run.out().contains("| `request-bad-key` | mpa | "), run.out());
            assertTrue(run.out().contains("| **KNOWN** | "), run.out());
            assertTrue(run.out().contains("*Known: we never answer*"), run.out());
            assertTrue(run.out().contains("| `bad-crc-in-the-first-fpdu` | "), run.out());
        }
    }

    /** A TCP server that accepts and reads but never answers: every case times out, and the run finishes. */
    @Test
    void aTargetThatNeverAnswersFailsEveryCaseAndTheRunFinishes() throws Exception {
        try (ServerSocket mute = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                List<Socket> held = new ArrayList<>();
                try {
                    while (!stop.get()) {
                        Socket s = mute.accept();
                        held.add(s);
                        Thread drain = new Thread(() -> drain(s));
                        drain.setDaemon(true);
                        drain.start();
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            t.setDaemon(true);
            t.start();
            Run run = jiwarp("conform", "127.0.0.1:" + mute.getLocalPort(), "--timeout", "300", "--first-fpdu-pause",
                    "0", "--case", "request-bad-key,bad-crc-in-the-first-fpdu,fpdu-split-at-07");
            assertEquals(1, run.exit(), run.out() + run.err());
            assertTrue(run.out().contains("target:   it neither replied nor closed within 300 ms"), run.out());
            assertEquals(2, count(run.out(), "target:   MPA setup failed: the target did not answer within 300 ms"),
                    run.out());
            assertTrue(run.out().contains(": 0 PASS, 0 KNOWN, 3 FAIL"), run.out());

            // Cases that set MPA up themselves and then go on (against siw, some of their setups failed):
            // the verdict says what the target did, never a Java exception.
            Run manual = jiwarp("conform", "127.0.0.1:" + mute.getLocalPort(), "--timeout", "200",
                    "--first-fpdu-pause", "0", "--json", "--case", "request-reserved-flag-bit,request-reject-bit,"
                    + "request-revision-1,request-ird-ord-all-ones,request-rtr-flags-without-p2p-ignored,"
                    + "request-asks-for-markers");
            assertEquals(1, manual.exit(), manual.out() + manual.err());
            assertNoJava(manual.out() + manual.err());
            assertEquals(6, count(manual.out(), "sent no MPA Reply within 200 ms; the connection is open"),
                    manual.out());
        }
    }

    /** The same for the cases of a target that connects: one that never sends its MPA Request. */
    @Test
    void aMuteClientsCasesSayWhatItDidInWords() throws Exception {
        int port = freePort();
        Thread mute = new Thread(() -> {
            List<Socket> held = new ArrayList<>();
            while (!stop.get()) {
                try {
                    held.add(new Socket(InetAddress.getLoopbackAddress(), port));
                } catch (IOException notYet) {
                    // conform is not listening yet
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        mute.setDaemon(true);
        mute.start();
        targets.add(mute);
        Run run = jiwarp("conform", "--listen", port, "--timeout", "200", "--first-fpdu-pause", "0", "--wait", "2000",
                "--case", "reply-reserved-flag-bit,reply-asks-for-markers");
        assertEquals(1, run.exit(), run.out() + run.err());
        assertNoJava(run.out() + run.err());
        assertEquals(2, count(run.out(), "target:   MPA setup "), run.out());
    }

    /** A mistyped port: three refused connections stop the run, saying so, not 20 s for each of 133 cases. */
    @Test
    void aTargetThatRefusesEveryConnectionStopsTheRunEarly() throws Exception {
        int port = freePort();
        Path junit = temp.resolve("stopped.xml");
        Run run = jiwarp("conform", "127.0.0.1:" + port, "--wait", "300", "--junit", junit);
        assertEquals(1, run.exit(), run.out() + run.err());
        assertTrue(run.err().contains("jiwarp conform: stopped after 3 of "), run.err());
        assertTrue(run.err().contains("the target refused 3 connections in a row (is it running, on 127.0.0.1 port "
                + port + "?)"), run.err());
        assertEquals(3, count(run.out(), "target:   the target did not accept a connection within 300 ms"),
                run.out());
        assertTrue(Pattern.compile(": 0 PASS, 0 KNOWN, 3 FAIL, \\d+ not run: the run stopped because the target "
                + "refused 3 connections in a row").matcher(run.out()).find(), run.out());
        String xml = Files.readString(junit, StandardCharsets.UTF_8);
        assertEquals(count(xml, "<testcase "), 3 + count(xml, "not run: the run stopped"), xml);
        assertTrue(count(xml, "not run: the run stopped") > 100, xml);

        Run every = jiwarp("conform", "127.0.0.1:" + port, "--wait", "300", "--fail-fast-unreachable", "0",
                "--group", "crc");
        assertEquals(1, every.exit(), every.out() + every.err());
        assertFalse(every.err().contains("stopped after"), every.err());
        assertTrue(every.out().contains(": 0 PASS, 0 KNOWN, 8 FAIL\n"), every.out());
    }

    private static void assertNoJava(String text) {
        for (String java : List.of("Exception", "Cannot invoke", "because \\\"", "org.jiwarp", "java.", "internal fault")) {
            assertFalse(text.contains(java), "'" + java + "' in: " + text);
        }
    }

    private static void drain(Socket s) {
        try (InputStream in = s.getInputStream()) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (IOException ignored) {
            // closed
        }
    }

    /** The target is down; after --wait the restart command runs and (here, through a file) brings it up. */
    @Test
    void aTargetThatIsDownIsRestartedByTheRestartCommand() throws Exception {
        int port = freePort();
        Path flag = temp.resolve("restarted");
        Thread watcher = new Thread(() -> {
            while (!stop.get() && !Files.exists(flag)) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
            if (!stop.get()) {
                jiwarp("ping", "-s", "-P", "-a", "127.0.0.1", "-p", port, "--quiet");
            }
        });
        watcher.setDaemon(true);
        watcher.start();
        targets.add(watcher);
        Run run = jiwarp("conform", "127.0.0.1:" + port, "--first-fpdu-pause", "0", "--wait", "1000",
                "--restart-cmd", "touch '" + flag + "'", "--case", "request-bad-key,send-msn-gap");
        assertEquals(0, run.exit(), run.out() + run.err());
        assertEquals(1, count(run.err(), "the target is not answering; running the restart command: "), run.err());
        assertTrue(run.out().contains(": 2 PASS, 0 KNOWN, 0 FAIL"), run.out());
    }

    @Test
    void listNamesEveryCaseWithItsSection() {
        Run run = jiwarp("conform", "--list");
        assertEquals(0, run.exit(), run.err());
        String[] lines = run.out().split("\n");
        assertTrue(lines.length >= 100, lines.length + " cases");
        assertTrue(run.out().contains("write-to-an-unknown-stag"), run.out());
        assertTrue(run.out().contains("RFC 5041 7.1 (tagged 1), 8.3.1: Terminate DDP / Tagged Buffer Error / Invalid "
                + "STag, carrying the DDP header (M, D), then close"), run.out());
        assertTrue(run.out().contains("perftest-read-of-a-write-only-region"), run.out());
        for (String group : List.of(" mpa ", " ddp ", " rdmap ", " crc ", " segmentation ", " perftest ")) {
            assertTrue(run.out().contains(group), group);
        }
    }

    @Test
    void usageErrorsExitWithTwoAndOneLine() {
        String[][] bad = {
            {"conform"},
            {"conform", "127.0.0.1:7174", "--listen", "7174"},
            {"conform", "localhost"},
            {"conform", "localhost:http"},
            {"conform", "localhost:70000"},
            {"conform", "127.0.0.1:7174", "--group", "tcp"},
            {"conform", "127.0.0.1:7174", "--case", "no-such-case"},
            {"conform", "127.0.0.1:7174", "--case", "reply-bad-key"},
            {"conform", "127.0.0.1:7174", "--profile", "chelsio"},
            {"conform", "127.0.0.1:7174", "--json", "--markdown"},
            {"conform", "127.0.0.1:7174", "--timeout", "0"},
            {"conform", "127.0.0.1:7174", "--known", "/no/such/file"},
            {"conform", "127.0.0.1:7174", "--skip", "no-such-case"},
            {"conform", "127.0.0.1:7174", "--case", "send-msn-gap", "--skip", "send-msn-gap"},
            {"conform", "127.0.0.1:7174", "--app", "ib_send_bw"},
            {"conform", "127.0.0.1:7174", "--group", "perftest"},
            {"conform", "127.0.0.1:7174", "--app", "ib_write_bw", "--case", "perftest-read-whole-region"},
        };
        for (String[] args : bad) {
            Run run = jiwarp((Object[]) args);
            assertEquals(2, run.exit(), String.join(" ", args) + ": " + run.err());
            assertEquals("", run.out(), String.join(" ", args));
            assertEquals(1, run.err().strip().split("\n").length, run.err());
            assertTrue(run.err().startsWith("jiwarp conform: ") && run.err().strip().endsWith(
                    "(see 'jiwarp conform --help')"), run.err());
            assertFalse(run.err().contains("Exception"), run.err());
        }
        assertTrue(jiwarp("conform", "127.0.0.1:7174", "--case", "reply-bad-key").err()
                .contains("case 'reply-bad-key' needs the target to connect (--listen PORT)"));
        assertTrue(jiwarp("conform", "127.0.0.1:7174", "--group", "perftest").err()
                .contains("needs the target to run ib_write_bw or ib_read_bw (--app), not rping"));
    }
}
