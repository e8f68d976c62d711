package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The guest's command channel loses no request and answers every one in time (issue 23: "a stress
 * of 2 000 commands against one guest with a CPU hog beside it, none lost or late past its
 * deadline"; that run is {@code -Djiwarp.siw.stress.commands=2000 -Djiwarp.siw.stress.hog=true}, and
 * {@code mvn verify} sends 250, under a minute, every kind of command and every line length among them,
 * which keeps CI's whole run under its time).
 *
 * <p>The commands are what broke the old channel (siw-peer/README.md, "The command channel"):
 * request lines of every length up to 3 KB, every third one sent in pieces with pauses between
 * them as the old UART brought it, background jobs and orphans that end while the next request
 * comes in; and outputs from a few octets to 15 KB, exit statuses other than 0, a command killed at
 * its time limit now and then. Every answer is checked against what the command must print; every
 * command must be answered within {@link #DEADLINE}; and the guest must have read every first copy
 * intact (the resend would hide a new way of losing requests; this does not). The channel's counts
 * are printed at the end.
 *
 * <p>{@code -Djiwarp.siw.stress.commands=N} changes the number of commands (default 250);
 * {@code -Djiwarp.siw.stress.hog=true} starts the issue's CPU hog on the host beside the guest for
 * the class (it roughly doubles the run: about 5 minutes instead of 2 to 3 on this project's
 * shared two-core machine, so CI, which runs on a loaded machine anyway, leaves it out).
 */
@Tag("siw")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SiwChannelStressTest {

    /** The most any one command may take, from sending it to having its answer. */
    static final Duration DEADLINE = Duration.ofSeconds(10);
    private static final int COMMANDS = Integer.getInteger("jiwarp.siw.stress.commands", 250);
    private static final boolean HOG = Boolean.getBoolean("jiwarp.siw.stress.hog");

    private static SiwPeer peer;
    private static Process hog;

    @BeforeAll
    static void boot() throws IOException {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage.ensureBuilt();
        if (HOG) {
            // The hog of the issue, `sh -c 'while :; do :; done' &`, beside the guest for the whole class.
            hog = new ProcessBuilder("sh", "-c", "while :; do :; done")
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
        }
        peer = SiwPeer.boot();
        System.out.println("channel stress: guest up in " + peer.bootTime().toMillis() + " ms under " + peer.accel()
                + (HOG ? ", a CPU hog beside it (pid " + hog.pid() + ")" : ", no CPU hog"));
    }

    @AfterAll
    static void shutDown() throws InterruptedException {
        try {
            if (peer != null) {
                peer.close();
            }
        } finally {
            if (hog != null) {
                hog.destroyForcibly();
                hog.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** One command, what it must print, its exit status and its time limit. */
    record Command(String script, String output, int exitCode, Duration limit, boolean timesOut) {
        Command(String script, String output, int exitCode) {
            this(script, output, exitCode, DEADLINE, false);
        }
    }

    /**
     * Command {@code i}: kinds in turn, each line padded with a comment of a length that walks from
     * 0 to 2 999 characters; every 250th outlasts its time limit of one second.
     */
    static Command command(int i) {
        String pad = "\n# " + "p".repeat((i * 37) % 3000);
        if (i % 250 == 249) {
            return new Command("echo t" + i + "; sleep 30; echo never" + pad, "t" + i + "\n", 137, Duration.ofSeconds(1), true);
        }
        return switch (i % 10) {
            case 6 -> {
                int k = i % 300 + 1;
                StringBuilder out = new StringBuilder();
                for (int j = 1; j <= k; j++) {
                    out.append(j).append('\n');
                }
                yield new Command("seq 1 " + k + pad, out.toString(), 0);
            }
            case 7 -> new Command("echo e" + i + "; exit " + (i % 7 + 1) + pad, "e" + i + "\n", i % 7 + 1);
            case 8 -> new Command("yes abcdefghijklmnopqrstuvwxyz0123456789 | head -n 400" + pad,
                    "abcdefghijklmnopqrstuvwxyz0123456789\n".repeat(400), 0);
            // An orphan: the subshell ends at once, its sleep (reparented to PID 1) while the next request comes in.
            case 9 -> new Command("(sleep 0.0" + (i % 9 + 1) + " &); echo o" + i + pad, "o" + i + "\n", 0);
            default -> new Command("echo " + i + " $((" + i + " * 7))" + pad, i + " " + (i * 7) + "\n", 0);
        };
    }

    @Test
    @Order(1)
    void everyCommandIsAnsweredRightAndInTime() {
        GuestChannel channel = peer.channel();
        GuestChannel.Stats stats = channel.stats();
        long requestsBefore = stats.requests();
        long lostBefore = stats.lostCopies();
        long naksBefore = stats.naks();
        // Every third request goes out in three pieces with a pause between them, as the old UART
        // brought a request: the guest's loop waits in the middle of a line, where a signal used to
        // cost the line its head.
        channel.inject((id, copy, line) -> Integer.parseInt(id.substring(1)) % 3 != 0 ? line
                : line.substring(0, 12) + GuestChannel.CopyFault.PAUSE + line.substring(12, line.length() / 2)
                        + GuestChannel.CopyFault.PAUSE + line.substring(line.length() / 2),
                GuestChannel.LineFault.NONE);
        try {
            stress(stats, requestsBefore);
        } finally {
            channel.inject(GuestChannel.CopyFault.NONE, GuestChannel.LineFault.NONE);
        }
        // With no fault injected, the guest must have read every first copy intact: a copy lost
        // now is a new way of losing requests, which the resend hides but this does not.
        assertEquals(0, stats.lostCopies() - lostBefore, "copies lost: " + peer.channelReport());
        assertEquals(0, stats.naks() - naksBefore, "copies read damaged: " + peer.channelReport());
    }

    private static void stress(GuestChannel.Stats stats, long requestsBefore) {
        long[] millis = new long[COMMANDS];
        Deque<Pending> background = new ArrayDeque<>();
        int backgroundChecked = 0;
        long start = System.nanoTime();
        for (int n = 0; n < COMMANDS; n++) {
            int i = n;
            Command c = command(i);
            long sent = System.nanoTime();
            ExecResult result = peer.run(c.script(), c.limit());
            millis[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertEquals(c.timesOut(), result.timedOut(), () -> "command " + i + ": " + result);
            assertEquals(c.exitCode(), result.exitCode(), () -> "command " + i + ": " + result);
            assertEquals(c.output(), result.output(), () -> "command " + i + ": " + result);
            assertTrue(millis[i] < DEADLINE.toMillis(), () -> "command " + i + " answered after " + millis[i] + " ms");
            if (i % 25 == 0) {
                // A background job that ends while later requests come in (its keeper is PID 1's).
                background.add(new Pending(i, peer.start("sleep 0." + (i % 7 + 1) + "; echo bg" + i)));
            }
            while (background.size() > 3) {
                backgroundChecked += check(background.poll());
            }
            if ((i + 1) % 250 == 0) {
                System.out.println("channel stress: " + (i + 1) + " commands in "
                        + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) + " s; " + peer.channelReport());
            }
        }
        while (!background.isEmpty()) {
            backgroundChecked += check(background.poll());
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        System.out.println("channel stress: " + COMMANDS + " commands (and " + backgroundChecked
                + " background jobs) answered right and in time in " + seconds + " s"
                + (HOG ? " beside a CPU hog" : "") + "; round trip median " + sorted[COMMANDS / 2] + " ms, 99th "
                + sorted[COMMANDS * 99 / 100] + " ms, most " + sorted[COMMANDS - 1] + " ms (deadline "
                + DEADLINE.toMillis() + " ms); " + (stats.requests() - requestsBefore) + " requests in all; "
                + peer.channelReport());
    }

    private record Pending(int i, SiwPeer.Background job) {
    }

    private static int check(Pending p) {
        ExecResult result = p.job().await(DEADLINE);
        assertTrue(result.succeeded(), () -> "background job " + p.i() + ": " + result);
        assertEquals("bg" + p.i() + "\n", result.output(), () -> "background job " + p.i() + ": " + result);
        return 1;
    }

    /**
     * The resend itself, with faults injected on the host: first copies dropped, first copies with
     * their head cut off (what the old loop did to a request) or a character changed, first
     * acknowledgements dropped (the copy sent again must not run the request twice), and answers
     * changed on their way in. Every command is still answered right, each request ran once, and
     * the counts say exactly what was lost.
     */
    @Test
    @Order(2)
    void lostAndDamagedCopiesAreSentAgain() {
        GuestChannel channel = peer.channel();
        int n = 36;
        Set<String> dropped = new HashSet<>();
        Set<String> cut = new HashSet<>();
        Set<String> changed = new HashSet<>();
        Set<String> acksDropped = new HashSet<>();
        Set<String> answersChanged = new HashSet<>();
        List<String> ids = new ArrayList<>();
        peer.run("rm -f /tmp/jw-once").orThrow();
        // Command i is the i-th X request from here on: its first copy meets fault i % 6.
        channel.inject((id, copy, line) -> {
            if (copy > 1 || !id.startsWith("x")) {
                return line;
            }
            ids.add(id);
            return switch ((ids.size() - 1) % 6) {
                case 0 -> {
                    dropped.add(id);
                    yield null;
                }
                case 1 -> {
                    cut.add(id);
                    yield line.substring(line.length() / 2);
                }
                case 2 -> {
                    changed.add(id);
                    // A character in the middle of the escaped script.
                    int payload = line.lastIndexOf(' ') + 1;
                    int at = payload + (line.length() - payload) / 2;
                    yield line.substring(0, at) + (line.charAt(at) == 'A' ? 'B' : 'A') + line.substring(at + 1);
                }
                case 3 -> {
                    acksDropped.add(id);
                    yield line;
                }
                default -> line;
            };
        }, line -> {
            String id = ids.isEmpty() ? "" : ids.get(ids.size() - 1);
            if (line.equals("@@JW " + id + " ACK 1@@") && acksDropped.contains(id)) {
                return null; // the host resends after 2 s; the guest must not run the request twice
            }
            // The first base64 line of every fourth answer, once.
            if (ids.size() % 4 == 0 && !line.startsWith("@@JW") && !line.isEmpty() && answersChanged.add(id)) {
                return (line.charAt(0) == 'A' ? 'B' : 'A') + line.substring(1);
            }
            return line;
        });
        GuestChannel.Stats stats = channel.stats();
        long lost = stats.lostCopies();
        long naks = stats.naks();
        long askedAgain = stats.repliesAskedAgain();
        long start = System.nanoTime();
        int once = 0;
        try {
            for (int k = 0; k < n; k++) {
                int i = k;
                // A request whose acknowledgement is dropped runs longer than the wait for it and
                // leaves a mark each time it runs: it must run once.
                Command c = i % 6 == 3
                        ? new Command("echo " + i + " >>/tmp/jw-once; sleep 2.5; awk 'END { print NR }' /tmp/jw-once",
                                ++once + "\n", 0)
                        : command(i);
                ExecResult result = peer.run(c.script(), c.limit());
                assertEquals(c.exitCode(), result.exitCode(), () -> "command " + i + ": " + result);
                assertEquals(c.output(), result.output(), () -> "command " + i + ": " + result);
            }
        } finally {
            channel.inject(GuestChannel.CopyFault.NONE, GuestChannel.LineFault.NONE);
        }
        System.out.println("channel faults: " + n + " commands in "
                + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) + " s with " + dropped.size()
                + " first copies dropped, " + cut.size() + " cut, " + changed.size() + " changed, "
                + acksDropped.size() + " acknowledgements dropped, " + answersChanged.size() + " answers changed; "
                + peer.channelReport());
        assertEquals(once + "\n", peer.run("awk 'END { print NR }' /tmp/jw-once").orThrow().output(),
                "runs of the requests whose acknowledgement was dropped");
        assertEquals(dropped.size() + cut.size() + changed.size(), stats.lostCopies() - lost, "copies lost");
        assertEquals(cut.size() + changed.size(), stats.naks() - naks, "copies the guest read damaged");
        assertEquals(answersChanged.size(), stats.repliesAskedAgain() - askedAgain, "answers asked for again");
        if (dropped.isEmpty() || cut.isEmpty() || changed.isEmpty() || acksDropped.isEmpty() || answersChanged.isEmpty()) {
            fail("a fault was never injected");
        }
    }
}
