package org.jiwarp.conformance.conform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.jiwarp.conform.CaseResult;
import org.jiwarp.conform.ConformCase;
import org.jiwarp.conform.ConformCatalogue;
import org.jiwarp.conform.ConformRunner;
import org.jiwarp.conform.Group;
import org.jiwarp.conform.KnownDeviations;
import org.jiwarp.conform.Program;
import org.jiwarp.conform.Role;
import org.jiwarp.conform.Verdict;
import org.jiwarp.rnic.AsyncEvent;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.tools.rping.RpingClient;
import org.jiwarp.tools.rping.RpingServer;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every case of the conformance library that runs against rping, run in this JVM against jiwarp's
 * rping ({@code org.jiwarp.tools.rping}) through the library's own {@link ConformRunner}: as the
 * server that {@code jiwarp ping -s} runs ({@link #targetListens}) and as the client of
 * {@code jiwarp ping -c -C 1} ({@link #targetConnects}). Each case must pass, with no known
 * deviation; then, from inside jiwarp, where the wire cannot see:
 *
 * <ul>
 *   <li>where the case accepts more than one reading of the RFCs, the Terminate is jiwarp's own
 *       ({@link #JIWARPS_ANSWER});</li>
 *   <li>jiwarp ended every connection of the case within {@value #SETTLE_MILLIS} ms of the raw peer's
 *       close: the server's every accepted client is gone, the client's run is over and its queue pair
 *       flushed (no connection leaks, none hangs);</li>
 *   <li>the Terminates jiwarp's queue pairs report ({@link AsyncEvent.Type#QP_FATAL}) are the one the
 *       wire carried, with its error, or none when the wire carried none: what the verbs user is told
 *       agrees with what the peer was told;</li>
 *   <li>no completion queue overran ({@link AsyncEvent.Type#CQ_ERROR});</li>
 *   <li>as the server, rping still serves a well-behaved client, its pings validated.</li>
 * </ul>
 *
 * <p>A requirement of the matrix names a case here as {@code JiwarpRpingConformTest#targetListens[name]}
 * (or {@code #targetConnects[name]}); the invocation is the case's position in {@link #cases(Role)}.
 */
public class JiwarpRpingConformTest {

    /** conform's {@code --timeout}: how long a case waits for the target's answer. */
    private static final long TIMEOUT_MILLIS = 3000;
    /** conform's {@code --wait}: how long a case waits for a connection. */
    private static final long WAIT_MILLIS = 10_000;
    /** How long jiwarp may take to end a connection once the case has closed its end. */
    static final long SETTLE_MILLIS = 10_000;
    /** conform's {@code --size}; rping's cases do not use it. */
    private static final int MESSAGE_SIZE = 65_536;
    /** rping's default size ({@code jiwarp ping} without {@code -S}). */
    private static final int PING_SIZE = 64;

    /**
     * jiwarp's own answer where a case accepts more than one reading of the RFCs (the library's verdict
     * lists each): a Send on queue 3 is an RDMAP Atomic Response on the wrong queue to jiwarp, which
     * implements RFC 7306; a Read whose TO wraps is a TO wrap before it is out of bounds.
     */
    private static final Map<String, TerminateError> JIWARPS_ANSWER = Map.of(
            "queue-number-3", TerminateError.RDMAP_UNEXPECTED_OPCODE,
            "read-to-wraps-2-to-the-64", TerminateError.RDMAP_TO_WRAP);

    /**
     * The cases, besides the exhaustion group, after which the target must connect again: a fresh
     * connection after the lying Terminates, and broken Replies one after another.
     */
    private static final java.util.Set<String> CONNECT_AGAIN = java.util.Set.of(
            "terminate-says-headers-follow-but-ends", "terminate-without-its-read-request-header",
            "terminate-ddp-header-cut-short", "terminate-ddp-segment-length-past-what-is-carried",
            "terminate-shorter-than-its-control-field", "mpa-replies-broken-in-sequence");

    private static final Queue<AsyncEvent> serverEvents = new ConcurrentLinkedQueue<>();
    private static final Queue<AsyncEvent> clientEvents = new ConcurrentLinkedQueue<>();
    private static final Queue<String> targetLog = new ConcurrentLinkedQueue<>();
    private static Rnic serverRnic;
    private static Rnic clientRnic;
    private static Rnic wellBehavedRnic;
    private static RpingServer server;
    private static ServerSocket listener;
    private static ConformRunner toServer;
    private static ConformRunner toClient;

    /** The library's rping cases for a target in {@code role}, in the order they run. */
    public static List<ConformCase> cases(Role role) {
        return ConformCatalogue.all().stream().filter(c -> c.runsIn(role) && c.runsWith(Program.RPING)).toList();
    }

    static Stream<Named<ConformCase>> listening() {
        return cases(Role.TARGET_LISTENS).stream().map(c -> Named.of(c.name(), c));
    }

    static Stream<Named<ConformCase>> connecting() {
        return cases(Role.TARGET_CONNECTS).stream().map(c -> Named.of(c.name(), c));
    }

    /** An RNIC as {@code jiwarp ping} opens one by default: one event loop, MPA revision 2, CRC and markers when asked. */
    private static Rnic rnic(Queue<AsyncEvent> events) {
        Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1));
        if (events != null) {
            rnic.onAsyncEvent(events::add);
        }
        return rnic;
    }

    @BeforeAll
    static void startTargets() throws Exception {
        serverRnic = rnic(serverEvents);
        clientRnic = rnic(clientEvents);
        wellBehavedRnic = rnic(null);
        server = new RpingServer(serverRnic, new InetSocketAddress("127.0.0.1", 0), false, 0, text -> { },
                targetLog::add);
        listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        toServer = new ConformRunner(server.localAddress(), null, TIMEOUT_MILLIS, WAIT_MILLIS, 0, null, Program.RPING,
                MESSAGE_SIZE, targetLog::add);
        // As jiwarp conform's default: a pause after the Reply before the first FPDU.
        toClient = new ConformRunner(null, listener, TIMEOUT_MILLIS, WAIT_MILLIS, 300, null, Program.RPING,
                MESSAGE_SIZE, targetLog::add);
    }

    @AfterAll
    static void stopTargets() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {toServer, toClient, server, listener, serverRnic, clientRnic,
            wellBehavedRnic}) {
            if (c != null) {
                c.close();
            }
        }
    }

    /** What jiwarp reported and logged is looked at case by case. */
    @BeforeEach
    void forgetTheCaseBefore() {
        serverEvents.clear();
        clientEvents.clear();
        targetLog.clear();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("listening")
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void targetListens(ConformCase c) throws Exception {
        // Counted from here, so that a connection an earlier case leaked fails that case only.
        long openBefore = server.clients() - server.clientsGone();
        CaseResult result = passes(toServer, c);
        awaitTrue(() -> server.clients() - server.clientsGone() <= openBefore, () -> "jiwarp's rping server still has "
                + (server.clients() - server.clientsGone() - openBefore) + " connection(s) of the case open "
                + SETTLE_MILLIS + " ms after the case closed its end");
        assertQueuePairsReportTheWiresTerminate(c, result, serverEvents);

        // rping carries on serving: a well-behaved client's pings come back validated.
        RpingClient.Result pings = RpingClient.run(wellBehavedRnic, server.localAddress(), null, PING_SIZE, 2, true,
                false, text -> { }, null).get(SETTLE_MILLIS, TimeUnit.MILLISECONDS);
        assertEquals(2, pings.validated(), "a well-behaved client's pings after " + c.name());
        awaitTrue(() -> server.clients() - server.clientsGone() <= openBefore, () -> "the well-behaved client's "
                + "connection stays open");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("connecting")
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void targetConnects(ConformCase c) throws Exception {
        // The cases that want the target to connect again get what a target loop gives
        // (`while :; do jiwarp ping -c -C 1 ...; done`): a new client as soon as one ends.
        boolean again = CONNECT_AGAIN.contains(c.name()) || c.group() == Group.EXHAUSTION;
        List<CompletableFuture<RpingClient.Result>> clients = new CopyOnWriteArrayList<>();
        AtomicBoolean caseOver = new AtomicBoolean();
        Thread loop = new Thread(() -> {
            do {
                CompletableFuture<RpingClient.Result> client = RpingClient.run(clientRnic,
                        (InetSocketAddress) listener.getLocalSocketAddress(), null, PING_SIZE, 1, false, false,
                        text -> { }, targetLog::add);
                clients.add(client);
                try {
                    client.get(2, TimeUnit.MINUTES); // the test's own timeout ends it first
                } catch (ExecutionException | TimeoutException ended) {
                    // a run that failed is over too
                } catch (InterruptedException e) {
                    return;
                }
            } while (again && !caseOver.get());
        }, "rping-client-loop");
        loop.setDaemon(true);
        loop.start();
        CaseResult result;
        try {
            result = passes(toClient, c);
        } finally {
            caseOver.set(true);
        }
        // A client the loop started after the case's last connection waits on the listener, which no
        // case accepts any more: it is accepted here and reset, so that its run ends too.
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
        int soTimeout = listener.getSoTimeout();
        try {
            listener.setSoTimeout(50);
            while (again && (loop.isAlive() || clients.stream().anyMatch(f -> !f.isDone()))
                    && System.nanoTime() < deadline) {
                try (java.net.Socket late = listener.accept()) {
                    late.setSoLinger(true, 0);
                } catch (java.net.SocketTimeoutException none) {
                    // nothing waiting: a run still ending on its own
                }
            }
        } finally {
            listener.setSoTimeout(soTimeout);
        }
        loop.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        if (loop.isAlive() || clients.stream().anyMatch(f -> !f.isDone())) {
            fail("jiwarp's rping client is still running " + SETTLE_MILLIS + " ms after the case closed its end; "
                    + "it logged " + targetLog);
        }
        awaitTrue(() -> clientEvents.stream().anyMatch(e -> e.type() == AsyncEvent.Type.DISCONNECTED),
                () -> "jiwarp's rping client's queue pair did not reach ERROR and flush; events " + clientEvents);
        assertQueuePairsReportTheWiresTerminate(c, result, clientEvents);
    }

    /** Runs {@code c} and checks it passed (no known deviation: jiwarp has none left). */
    private static CaseResult passes(ConformRunner runner, ConformCase c) {
        CaseResult result = runner.run(List.of(c), KnownDeviations.none(), r -> { }).get(0);
        assertEquals(Verdict.PASS, result.verdict(), () -> c.name() + " (" + c.section() + "): " + c.requirement()
                + "\n  jiwarp: " + result.observed() + "\n  jiwarp's log: " + targetLog);
        if (JIWARPS_ANSWER.containsKey(c.name())) {
            assertEquals(JIWARPS_ANSWER.get(c.name()), result.terminate(), "jiwarp's reading: " + result.observed());
        }
        return result;
    }

    /**
     * The Terminates jiwarp's queue pairs reported in the case are the one the wire carried, or
     * none; and no completion queue overran. Where the raw peer stops reading (the exhaustion group),
     * the Terminate jiwarp sent may never reach it: there the queue pairs may report one Terminate the
     * wire did not show, but never another than the wire's.
     */
    private static void assertQueuePairsReportTheWiresTerminate(ConformCase c, CaseResult result,
            Queue<AsyncEvent> events) {
        List<TerminateError> reported = new ArrayList<>();
        for (AsyncEvent e : events) {
            assertTrue(e.type() != AsyncEvent.Type.CQ_ERROR, e::toString);
            if (e.type() == AsyncEvent.Type.QP_FATAL) {
                reported.add(e.error());
            }
        }
        String message = "the Terminates jiwarp's queue pairs reported, against the wire's; jiwarp " + result.observed();
        if (c.group() == Group.EXHAUSTION && result.terminate() == null) {
            assertTrue(reported.size() <= 1, message + ": " + reported);
            return;
        }
        assertEquals(result.terminate() == null ? List.of() : List.of(result.terminate()), reported, message);
    }

    private static void awaitTrue(BooleanSupplier condition, java.util.function.Supplier<String> message)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail(message.get());
            }
            Thread.sleep(5);
        }
    }
}
