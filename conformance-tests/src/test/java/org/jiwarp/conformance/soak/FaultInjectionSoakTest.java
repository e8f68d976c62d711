package org.jiwarp.conformance.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.conformance.soak.FaultInjector.Fault;
import org.jiwarp.conformance.soak.FaultInjector.Injection;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.testing.Deadlines;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * The fault-injection soak: mixed traffic over 100 queue pairs through {@link FaultyProxy}, half
 * with MPA CRCs, half without. Every queue pair runs the same number of rounds (a Send checked by
 * the receiver, a Write of the same message, a Read of it back checked by the writer); every
 * stream is re-segmented and delayed; 27 connections also get one fault each, and each fault must
 * produce exactly what the RFCs say it produces:
 *
 * <table>
 *   <caption>What each injected fault must produce</caption>
 *   <tr><th>CRC</th><th>fault (in either direction unless said)</th><th>must produce</th></tr>
 *   <tr><td>on</td><td>a bit flipped anywhere in an FPDU (and, aimed, in ULPDU_LENGTH, the DDP version,
 *       the RDMAP version, the payload, the pad or CRC field); 1 to 16 octets dropped from an FPDU</td>
 *       <td>the LLP CRC Terminate (RFC 5044 sections 6, 8: LLP / 0 / 0x02) from the side that received it,
 *       the other side receiving it; nothing of that FPDU or after it acted on: exactly the Sends and Read
 *       Responses the sender completed before it delivered, no Read Request after it answered, the
 *       flipped payload nowhere in the receiver's memory (RFC 5044 section 8: a ULPDU whose CRC fails is
 *       not passed to DDP)</td></tr>
 *   <tr><td>off</td><td>a DDP version bit flipped</td><td>DDP's invalid version Terminate, tagged
 *       (DDP / 1 / 0x04) or untagged (DDP / 2 / 0x06) as the segment was (RFC 5041 sections 4.1, 7.2),
 *       nothing of it or after it acted on, as above</td></tr>
 *   <tr><td>off</td><td>an RDMAP version bit flipped</td><td>RDMAP's invalid version Terminate (RFC 5040
 *       section 7.2: RDMAP / 2 / 0x05), as above</td></tr>
 *   <tr><td>off</td><td>a bit of a Send's, a Write's or a Read Response's payload flipped; one whole
 *       (not last) FPDU of a Write dropped (client to server)</td><td>nothing on the wire notices
 *       (without CRC nothing covers payload, and tagged placement carries no sequence to miss, RFC 5041
 *       section 5): the damage is placed, and exactly one message check on that queue pair fails (the
 *       receiver's for a Send, the read-back for a Write or Read Response); the connection stays up,
 *       every round runs</td></tr>
 *   <tr><td>off</td><td>a bit of the CRC field or of a pad octet flipped</td><td>nothing at all: the CRC
 *       field is not checked when CRC is off (RFC 5044 section 7.1), pad is ignored (section 4.1)</td></tr>
 *   <tr><td>either</td><td>the connection cut inside an FPDU</td><td>both queue pairs leave RTS without a
 *       Terminate either way (RFC 5044 section 8, code 0x01: the stream is gone, nothing can be sent), their
 *       work all completed; no more delivered than the sender completed before the cut</td></tr>
 *   <tr><td>either</td><td>re-segmenting and delays only (every stream)</td><td>nothing: the queue pair stays
 *       in RTS, every round checked, its probe Read answered</td></tr>
 * </table>
 *
 * <p>Without CRC, a flipped ULPDU_LENGTH or a dropped run of octets loses the receiver's framing, and
 * what it then reads as the next header is whatever octets follow; other header fields flipped (STag,
 * Tagged Offset, MSN, MO, opcode, L, queue number) each give an error or none by the value the flip
 * makes. None of them has one outcome the RFCs fix, so the soak does not aim at them without CRC;
 * the adversarial catalogue covers the header errors one by one.
 *
 * <p>The run stops by counts, never by the clock: every queue pair runs {@code -Djiwarp.soakRounds}
 * rounds (300 in CI; the README gives the long run), each fault is injected at the first FPDU it can
 * hit from a point in the traffic chosen by {@code -Djiwarp.soakSeed}, and the soak waits for every
 * fault to be injected. A connection whose fault must end it may be left waiting for octets that a
 * damaged length field announced (up to 64 KiB): it then gets probe Writes and Reads of more than
 * that, so its receiver reaches the CRC. The heap is measured after a quarter and after three
 * quarters of the rounds; afterwards every thread the soak started must end. Every wait has a
 * deadline. The figures go to {@code target/soak-report.md}.
 */
class FaultInjectionSoakTest {

    private static final int QPS = 100;
    private static final int SLOT = 16 * 1024;
    private static final int SLOTS = 4;
    /** The shortest message: its header (queue pair, sequence number, length) and a 4-octet body. */
    private static final int MIN_LENGTH = 16;
    /**
     * Probe Writes and Reads of a slot each, posted at once on a connection whose fault must end it:
     * more octets each way than the longest FPDU a damaged ULPDU_LENGTH can announce.
     */
    private static final int FLOOD = (Fpdu.length(Fpdu.MAX_ULPDU_LENGTH) + SLOT - 1) / SLOT + 1;
    /**
     * How long the traffic of {@code rounds} rounds may take at most: a deadline for a hang, not a
     * length (the run stops by counts). A round takes about a fifth of a second here, all queue
     * pairs at once.
     */
    private static Duration traffic(int rounds) {
        return Duration.ofSeconds(Math.max(600, 2L * rounds));
    }
    /** How long one connection's end, probe or disconnect may take. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** The faults of the half with CRC, each once per direction. */
    private static final Fault[] WITH_CRC = {Fault.FLIP, Fault.FLIP_LENGTH, Fault.FLIP_DDP_VERSION,
        Fault.FLIP_RDMAP_VERSION, Fault.FLIP_PAYLOAD, Fault.FLIP_CRC_OR_PAD, Fault.DROP, Fault.CUT};
    /** The faults of the half without CRC, each once per direction (a Write's FPDUs go to the server only). */
    private static final Fault[] WITHOUT_CRC = {Fault.FLIP_DDP_VERSION, Fault.FLIP_RDMAP_VERSION, Fault.FLIP_PAYLOAD,
        Fault.FLIP_CRC_OR_PAD, Fault.DROP_WRITE_SEGMENT, Fault.CUT};

    @Test
    void everyInjectedFaultProducesWhatTheRfcsSay() throws Exception {
        int rounds = Integer.getInteger("jiwarp.soakRounds", 300);
        Duration traffic = traffic(rounds);
        long seed = Long.getLong("jiwarp.soakSeed", 5044);
        Set<Thread> threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
        FaultyProxy.Plan[] plans = plans(rounds, seed);
        Stats stats = new Stats();
        Map<Integer, Target> targets = new ConcurrentHashMap<>();
        List<Driver> drivers = new ArrayList<>();
        List<String> proxyFailures = new ArrayList<>();
        long heapEarly;
        long heapLate;
        MpaSettings withCrc = RnicOptions.defaults().mpa().toBuilder().crc(CrcPolicy.REQUIRE).build();
        // Neither end sets C, so neither uses CRCs (RFC 5044 section 7.1).
        MpaSettings withoutCrc = RnicOptions.defaults().mpa().toBuilder().crc(CrcPolicy.ACCEPT).build();
        try (Rnic crcServer = Rnic.open(RnicOptions.defaults().threads(1).mpa(withCrc));
                Rnic crcClient = Rnic.open(RnicOptions.defaults().threads(1).mpa(withCrc));
                Rnic plainServer = Rnic.open(RnicOptions.defaults().threads(1).mpa(withoutCrc));
                Rnic plainClient = Rnic.open(RnicOptions.defaults().threads(1).mpa(withoutCrc))) {
            ProtectionDomain crcServerPd = crcServer.allocatePd();
            ProtectionDomain plainServerPd = plainServer.allocatePd();
            RnicListener crcListener = crcServer.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> new Target(crcServer, crcServerPd, stats, targets).accept(request));
            RnicListener plainListener = plainServer.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> new Target(plainServer, plainServerPd, stats, targets).accept(request));
            try (FaultyProxy crcProxy = new FaultyProxy(crcListener.localAddress(), n -> plans[n]);
                    FaultyProxy plainProxy = new FaultyProxy(plainListener.localAddress(), n -> plans[QPS / 2 + n])) {
                ProtectionDomain crcPd = crcClient.allocatePd();
                ProtectionDomain plainPd = plainClient.allocatePd();
                Progress progress = new Progress();
                // One at a time, so that connection n of each proxy is queue pair n of its half.
                for (int i = 0; i < QPS; i++) {
                    boolean crc = i < QPS / 2;
                    FaultyProxy proxy = crc ? crcProxy : plainProxy;
                    Driver driver = new Driver(i, crc, rounds, crc ? crcClient : plainClient, crc ? crcPd : plainPd,
                            stats, progress);
                    drivers.add(driver);
                    driver.connect(proxy.address()).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                    driver.connection = proxy.connection(crc ? i : i - QPS / 2);
                    assertEquals(plans[i], driver.connection.plan, driver + ": its plan");
                    assertEquals(driver.qp.localAddress().getPort(), driver.connection.clientPort, driver + ": its connection");
                    assertEquals(crc, driver.qp.parameters().crc(), driver + ": CRC negotiated");
                    assertFalse(driver.qp.parameters().markersToPeer() || driver.qp.parameters().markersFromPeer(),
                            driver + ": no markers (the fault injector reads FPDUs without them)");
                    assertFalse(driver.qp.parameters().peerToPeer(), driver + ": no RTR frame");
                    driver.staysUp = staysUp(crc, driver.connection.plan);
                }
                long staying = drivers.stream().filter(d -> d.staysUp).count();
                for (Driver driver : drivers) {
                    driver.start();
                }
                progress.awaitRounds(staying * rounds / 4, traffic);
                heapEarly = heapAfterGc();
                progress.awaitRounds(staying * rounds * 3 / 4, traffic);
                heapLate = heapAfterGc();
                for (Driver driver : drivers) {
                    if (driver.staysUp) {
                        Deadlines.await(driver.finished, traffic, driver + " finishing its " + rounds + " rounds");
                    }
                }
                // A fault is injected within the first third of its connection's traffic, or never: a
                // queue pair whose rounds end first (all done, or its connection gone) saw no FPDU it could hit.
                for (Driver driver : drivers) {
                    if (driver.connection.plan.fault() != Fault.NONE) {
                        java.util.concurrent.CompletableFuture.anyOf(driver.connection.injected, driver.finishedFuture)
                                .get(traffic.toSeconds(), TimeUnit.SECONDS);
                        assertTrue(driver.connection.injected.isDone(), driver + ": its fault was never injected (seed "
                                + seed + ")");
                    }
                }
                for (Driver driver : drivers) {
                    if (!driver.staysUp) {
                        driver.flood();
                    }
                }
                for (Driver driver : drivers) {
                    if (!driver.staysUp) {
                        try {
                            driver.qp.closeFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                        } catch (TimeoutException e) {
                            throw new AssertionError(driver + ": its fault (" + driver.connection.injected.getNow(null)
                                    + ") did not end the connection within " + WAIT.toSeconds() + " s of the probes; state "
                                    + driver.qp.state() + "; seed " + seed, e);
                        }
                    }
                }
                for (Driver driver : drivers) {
                    if (driver.staysUp) {
                        driver.probe();
                        Deadlines.await(driver.probed, WAIT, driver + "'s probe Read being answered or flushed");
                    }
                }
                for (Driver driver : drivers) {
                    driver.target = targets.get(driver.index);
                    driver.stateBeforeDisconnect = driver.qp.state();
                    driver.serverStateBeforeDisconnect = driver.target == null ? null : driver.target.qp.state();
                }
                for (Driver driver : drivers) {
                    driver.qp.disconnect().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                }
                crcProxy.failures().forEach(f -> proxyFailures.add("CRC proxy: " + f));
                plainProxy.failures().forEach(f -> proxyFailures.add("plain proxy: " + f));
            }
            crcListener.close();
            plainListener.close();
        }
        List<String> threadsLeft = threadsLeft(threadsBefore, Duration.ofSeconds(10));

        List<String> problems = new ArrayList<>();
        Map<Expected, Integer> outcomes = new EnumMap<>(Expected.class);
        for (Driver driver : drivers) {
            Expectation expectation = expected(driver.crc, driver.connection.plan, driver.connection.injected.getNow(null));
            outcomes.merge(expectation.kind(), 1, Integer::sum);
            for (String problem : verify(driver, expectation, rounds)) {
                problems.add(driver + ": " + problem + " [expected: " + expectation + "]");
            }
        }
        String report = report(rounds, seed, drivers, stats, outcomes, heapEarly, heapLate, threadsBefore.size(),
                threadsLeft);
        System.out.println(report);
        Path out = Path.of("target", "soak-report.md");
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(out, report);
        } catch (IOException e) {
            System.err.println("could not write " + out + ": " + e);
        }
        assertEquals(List.of(), proxyFailures, "the proxy failed");
        assertEquals(List.of(), problems, "faults whose outcome is not the one the RFCs give (seed " + seed + ")");
        assertEquals(List.of(), threadsLeft, "threads the soak started that did not end");
        assertTrue(heapLate - heapEarly < 64 << 20, "heap grew from " + heapEarly + " to " + heapLate);
    }

    /** Queue pair {@code i}'s fault: each of its half's faults once per direction, the rest none. */
    static FaultyProxy.Plan[] plans(int rounds, long seed) {
        FaultyProxy.Plan[] plans = new FaultyProxy.Plan[QPS];
        SplittableRandom random = new SplittableRandom(seed);
        for (int half = 0; half < 2; half++) {
            List<FaultyProxy.Plan> faults = new ArrayList<>();
            for (Fault fault : half == 0 ? WITH_CRC : WITHOUT_CRC) {
                for (boolean toServer : new boolean[] {true, false}) {
                    if (fault != Fault.DROP_WRITE_SEGMENT || toServer) {
                        // From an FPDU within the first third of the rounds: each round carries at least
                        // one FPDU each way (three to the server), so every fault finds one to hit.
                        faults.add(new FaultyProxy.Plan(fault, toServer, 8 + random.nextInt(Math.max(1, rounds / 3)),
                                random.nextLong()));
                    }
                }
            }
            for (int j = 0; j < QPS / 2; j++) {
                plans[half * QPS / 2 + j] = j < faults.size() ? faults.get(j) : FaultyProxy.Plan.none(random.nextLong());
            }
        }
        return plans;
    }

    /** What a fault must produce, in kind. */
    enum Expected {
        NOTHING, ONE_MISMATCH, TERMINATE, CUT
    }

    /** What a fault must produce: the kind, the Terminate for {@link Expected#TERMINATE}, and why. */
    record Expectation(Expected kind, TerminateError error, String why) {
        @Override
        public String toString() {
            return kind + (error == null ? "" : " " + error) + " (" + why + ")";
        }
    }

    /** Whether queue pair's connection must stay up under its plan (and so runs all its rounds). */
    static boolean staysUp(boolean crc, FaultyProxy.Plan plan) {
        return switch (plan.fault()) {
            case NONE -> true;
            case FLIP_PAYLOAD, FLIP_CRC_OR_PAD, DROP_WRITE_SEGMENT -> !crc;
            default -> false;
        };
    }

    /** What {@code injection} (of {@code plan}) must produce, with CRC on or off. */
    static Expectation expected(boolean crc, FaultyProxy.Plan plan, Injection injection) {
        Fault fault = plan.fault();
        if (fault == Fault.NONE) {
            return new Expectation(Expected.NOTHING, null, "no fault; re-segmenting and delays change nothing");
        }
        if (fault == Fault.CUT) {
            return new Expectation(Expected.CUT, null, "RFC 5044 section 8: the TCP connection is lost, so no "
                    + "Terminate can be sent");
        }
        if (crc) {
            return new Expectation(Expected.TERMINATE, TerminateError.LLP_CRC_ERROR, "RFC 5044 sections 6 and 8: the "
                    + "CRC covers every octet of the FPDU, and a ULPDU whose CRC fails is not passed to DDP");
        }
        return switch (fault) {
            case FLIP_DDP_VERSION -> new Expectation(Expected.TERMINATE, injection != null && injection.tagged()
                    ? TerminateError.DDP_TAGGED_INVALID_VERSION : TerminateError.DDP_UNTAGGED_INVALID_VERSION,
                    "RFC 5041 sections 4.1 and 7.2: DV must be 1");
            case FLIP_RDMAP_VERSION -> new Expectation(Expected.TERMINATE, TerminateError.RDMAP_INVALID_VERSION,
                    "RFC 5040 sections 4.1 and 7.2: RV must be 1");
            case FLIP_PAYLOAD -> new Expectation(Expected.ONE_MISMATCH, null, "without CRC nothing covers the payload: "
                    + "it is placed, and only the message check sees it");
            case DROP_WRITE_SEGMENT -> new Expectation(Expected.ONE_MISMATCH, null, "RFC 5041 section 5: a tagged "
                    + "segment is placed where it says, with no sequence to miss; only the read-back sees the hole");
            case FLIP_CRC_OR_PAD -> new Expectation(Expected.NOTHING, null, "RFC 5044 sections 4.1 and 7.1: without CRC "
                    + "the CRC field is not checked, and pad is ignored");
            default -> throw new IllegalArgumentException(fault + " without CRC has no single outcome the RFCs fix");
        };
    }

    /** Why {@code driver}'s outcome is not {@code expectation}; empty when it is. */
    static List<String> verify(Driver driver, Expectation expectation, int rounds) {
        List<String> problems = new ArrayList<>();
        FaultyProxy.Plan plan = driver.connection.plan;
        Injection injection = driver.connection.injected.getNow(null);
        Target target = driver.target;
        if (target == null) {
            problems.add("no server side was accepted");
            return problems;
        }
        if (plan.fault() != Fault.NONE && injection == null) {
            problems.add("its fault was never injected");
            return problems;
        }
        if (driver.outstanding != 0) {
            problems.add(driver.outstanding + " work requests never completed");
        }
        QueuePair client = driver.qp;
        QueuePair server = target.qp;
        switch (expectation.kind()) {
            case NOTHING, ONE_MISMATCH -> {
                expect(problems, driver.error == null, "a work request failed: " + driver.error);
                expect(problems, driver.stateBeforeDisconnect == QpState.RTS && driver.serverStateBeforeDisconnect
                        == QpState.RTS, "left RTS (client " + driver.stateBeforeDisconnect + ", server "
                        + driver.serverStateBeforeDisconnect + ")");
                expectNoTerminate(problems, client, server);
                expect(problems, driver.roundsDone == rounds, driver.roundsDone + " rounds of " + rounds);
                expect(problems, target.receivesCompleted == rounds, "the server received " + target.receivesCompleted
                        + " Sends of " + rounds);
                expect(problems, "answered".equals(driver.probeResult), "its probe Read: " + driver.probeResult);
                if (expectation.kind() == Expected.NOTHING) {
                    expect(problems, driver.mismatches.isEmpty() && target.mismatches.isEmpty(), "messages damaged: "
                            + driver.mismatches + target.mismatches);
                } else {
                    boolean atServer = injection.opcode() == RdmapOpcode.SEND;
                    List<String> seen = atServer ? target.mismatches : driver.mismatches;
                    List<String> other = atServer ? driver.mismatches : target.mismatches;
                    expect(problems, seen.size() == 1 && other.isEmpty(), "exactly one damaged message, found by the "
                            + (atServer ? "server's Send check" : "read-back") + ": server " + target.mismatches
                            + ", read-back " + driver.mismatches);
                }
            }
            case TERMINATE -> {
                QueuePair receiver = injection.toServer() ? server : client;
                QueuePair sender = injection.toServer() ? client : server;
                expect(problems, receiver.terminateSent() == expectation.error(), "the receiving side sent "
                        + receiver.terminateSent());
                RemoteTerminate delivered = sender.terminateReceived();
                expect(problems, delivered != null && delivered.error() == expectation.error(), "the sending side "
                        + "received " + delivered + (delivered == null ? " (its connection ended by " + (sender
                        .connectionError() == null ? "a close" : sender.connectionError()) + "; the receiving side's by "
                        + (receiver.connectionError() == null ? "a close" : receiver.connectionError()) + ")" : ""));
                expect(problems, driver.stateBeforeDisconnect != QpState.RTS && driver.serverStateBeforeDisconnect
                        != QpState.RTS, "still in RTS (client " + driver.stateBeforeDisconnect + ", server "
                        + driver.serverStateBeforeDisconnect + ")");
                expect(problems, driver.mismatches.isEmpty() && target.mismatches.isEmpty(), "damaged messages "
                        + "delivered: " + driver.mismatches + target.mismatches);
                expectNothingActedOnAfter(problems, driver, injection, true);
                if (injection.damagedPayload() != null) {
                    ByteBuffer memory = injection.toServer() ? target.memory : driver.memory;
                    int from = injection.toServer() ? 0 : SLOT; // the client's first slot is its source, not a target
                    expect(problems, !contains(memory, from, memory.capacity(), injection.damagedPayload()),
                            "the flipped payload was placed");
                }
            }
            case CUT -> {
                expect(problems, driver.stateBeforeDisconnect != QpState.RTS && driver.serverStateBeforeDisconnect
                        != QpState.RTS, "still in RTS (client " + driver.stateBeforeDisconnect + ", server "
                        + driver.serverStateBeforeDisconnect + ")");
                expectNoTerminate(problems, client, server);
                expect(problems, driver.mismatches.isEmpty() && target.mismatches.isEmpty(), "damaged messages "
                        + "delivered: " + driver.mismatches + target.mismatches);
                expectNothingActedOnAfter(problems, driver, injection, false);
            }
            default -> throw new IllegalStateException(expectation.toString());
        }
        return problems;
    }

    /**
     * Nothing the sender sent from the damaged FPDU on was acted on; when {@code exactly}, all it
     * completed before that was delivered (a cut may also lose what was in flight).
     */
    private static void expectNothingActedOnAfter(List<String> problems, Driver driver, Injection injection,
            boolean exactly) {
        FaultInjector.Counts before = injection.before();
        Target target = driver.target;
        if (injection.toServer()) {
            expect(problems, exactly ? target.receivesCompleted == before.sends()
                    : target.receivesCompleted <= before.sends(), "the server received " + target.receivesCompleted
                    + " Sends where the client completed " + before.sends() + " before the fault");
            long answered = driver.connection.toClient.counts().readResponses();
            expect(problems, answered <= before.readRequests(), "the server answered " + answered + " Read Requests "
                    + "where the client completed " + before.readRequests() + " before the fault");
        } else {
            expect(problems, exactly ? driver.readsCompleted == before.readResponses()
                    : driver.readsCompleted <= before.readResponses(), driver.readsCompleted + " Reads completed where "
                    + "the server completed " + before.readResponses() + " Read Responses before the fault");
        }
    }

    private static void expectNoTerminate(List<String> problems, QueuePair client, QueuePair server) {
        expect(problems, client.terminateSent() == null && server.terminateSent() == null
                && client.terminateReceived() == null && server.terminateReceived() == null, "a Terminate: client sent "
                + client.terminateSent() + ", received " + client.terminateReceived() + "; server sent "
                + server.terminateSent() + ", received " + server.terminateReceived());
    }

    private static void expect(List<String> problems, boolean holds, String otherwise) {
        if (!holds) {
            problems.add(otherwise);
        }
    }

    /** Whether {@code needle} occurs anywhere in {@code memory[from, to)}. */
    static boolean contains(ByteBuffer memory, int from, int to, byte[] needle) {
        outer:
        for (int at = from; at + needle.length <= to; at++) {
            for (int i = 0; i < needle.length; i++) {
                if (memory.get(at + i) != needle[i]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * Waits, until one deadline {@code within} from now, for each thread not in {@code before} to
     * end; returns those still alive then, by name and state.
     */
    static List<String> threadsLeft(Set<Thread> before, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        List<String> left = new ArrayList<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (before.contains(thread)) {
                continue;
            }
            long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remaining > 0) {
                thread.join(remaining);
            }
            if (thread.isAlive()) {
                left.add(thread.getName() + " (" + thread.getState() + ")");
            }
        }
        return left;
    }

    private static String report(int rounds, long seed, List<Driver> drivers, Stats stats,
            Map<Expected, Integer> outcomes, long heapEarly, long heapLate, int threadsBefore, List<String> threadsLeft) {
        Map<Fault, Integer> faults = new EnumMap<>(Fault.class);
        for (Driver driver : drivers) {
            faults.merge(driver.connection.plan.fault(), 1, Integer::sum);
        }
        faults.remove(Fault.NONE);
        return String.format(Locale.ROOT, "| figure | value |%n|---|---|%n"
                        + "| rounds per queue pair, seed | %d, %d |%n"
                        + "| queue pairs | %d (%d with CRC, %d without) |%n"
                        + "| traffic moved | %.1f MB (%d Sends checked by the receiver, %d Writes read back and checked) |%n"
                        + "| faults injected | %s, each on a connection of its own; every stream re-segmented and delayed |%n"
                        + "| outcomes, each as expected | %s |%n"
                        + "| damaged messages found by the checks | %d (the faults without CRC that nothing on the wire "
                        + "sees) |%n"
                        + "| heap after GC, after 1/4 and 3/4 of the rounds | %.1f MB, %.1f MB |%n"
                        + "| threads before / left after | %d / %s |%n"
                        + "| leaked buffers | 0 (paranoid leak detector, checked per test class) |%n",
                rounds, seed, drivers.size(), QPS / 2, QPS / 2, stats.bytes.get() / 1e6, stats.sendsChecked.get(),
                stats.readsChecked.get(), faults, outcomes, stats.mismatches.get(), heapEarly / 1e6, heapLate / 1e6,
                threadsBefore, threadsLeft.isEmpty() ? "none" : threadsLeft);
    }

    private static long heapAfterGc() {
        System.gc();
        System.gc();
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    /** Traffic counters, all queue pairs together. */
    static final class Stats {
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong sendsChecked = new AtomicLong();
        final AtomicLong readsChecked = new AtomicLong();
        final AtomicLong mismatches = new AtomicLong();
    }

    /** Rounds completed by the queue pairs that stay up, waited for by count. */
    static final class Progress {
        private long rounds;
        private String trouble;

        synchronized void roundDone() {
            rounds++;
            notifyAll();
        }

        /** A queue pair that must stay up stopped: no count it was part of will be reached. */
        synchronized void trouble(String what) {
            if (trouble == null) {
                trouble = what;
            }
            notifyAll();
        }

        synchronized void awaitRounds(long n, Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (rounds < n && trouble == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(rounds + " of " + n + " rounds done after " + within.toMinutes() + " min");
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            if (trouble != null) {
                throw new AssertionError("the traffic stopped: " + trouble);
            }
        }
    }

    /**
     * Messages whose every octet says which message it is: queue pair, sequence number and length,
     * then octets derived from those and their position, so that a flipped bit, a hole or a shift
     * anywhere fails {@link #check}. Octet {@code i} (from 12 on) is octet {@code i mod 8} of the
     * message's key plus {@code i / 8}; the memory is little-endian, so eight of them are one long.
     *
     * <pre>
     *   | queue pair (4) | sequence number (4) | length (4) | key[4..7]+1 | key[0..7]+2 | key[0..7]+3 | ...
     * </pre>
     */
    static final class Message {

        private static final long LOW_SEVEN = 0x7F7F_7F7F_7F7F_7F7FL;
        private static final long HIGH_BITS = 0x8080_8080_8080_8080L;

        private Message() {
        }

        static long key(int qp, int seq) {
            long z = ((long) qp << 32 | (seq & 0xFFFF_FFFFL)) + 0x9E37_79B9_7F4A_7C15L;
            z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
            return z ^ (z >>> 31);
        }

        /** Octets {@code 8 * block} to {@code 8 * block + 7}: each octet of {@code key} plus {@code block}, without carries. */
        static long block(long key, int block) {
            long add = (block & 0xFFL) * 0x0101_0101_0101_0101L;
            return ((key & LOW_SEVEN) + (add & LOW_SEVEN)) ^ ((key ^ add) & HIGH_BITS);
        }

        static byte octet(long key, int i) {
            return (byte) (block(key, i >>> 3) >>> ((i & 7) << 3));
        }

        /** Writes message {@code seq} of {@code qp}, {@code length} octets, at {@code offset} of little-endian {@code memory}. */
        static void fill(ByteBuffer memory, int offset, int qp, int seq, int length) {
            long key = key(qp, seq);
            int i = 12;
            for (; i < 16 && i < length; i++) {
                memory.put(offset + i, octet(key, i));
            }
            for (; i + 8 <= length; i += 8) {
                memory.putLong(offset + i, block(key, i >>> 3));
            }
            for (; i < length; i++) {
                memory.put(offset + i, octet(key, i));
            }
            memory.putInt(offset, qp);
            memory.putInt(offset + 4, seq);
            memory.putInt(offset + 8, length);
        }

        /** What is wrong with the {@code length} octets at {@code offset} as message {@code seq} of {@code qp}, or {@code null}. */
        static String check(ByteBuffer memory, int offset, int length, int qp, int seq) {
            if (length < MIN_LENGTH) {
                return "message " + seq + ": " + length + " octets";
            }
            int q = memory.getInt(offset);
            int s = memory.getInt(offset + 4);
            int l = memory.getInt(offset + 8);
            if (q != qp || s != seq || l != length) {
                return "message " + seq + ": reads as QP " + q + " message " + s + " of " + l + " octets, not QP " + qp
                        + " message " + seq + " of " + length;
            }
            long key = key(qp, seq);
            for (int i = 12; i < 16; i++) {
                if (memory.get(offset + i) != octet(key, i)) {
                    return differs(memory, offset, seq, key, i);
                }
            }
            int i = 16;
            while (i + 8 <= length && memory.getLong(offset + i) == block(key, i >>> 3)) {
                i += 8;
            }
            for (; i < length; i++) {
                if (memory.get(offset + i) != octet(key, i)) {
                    return differs(memory, offset, seq, key, i);
                }
            }
            return null;
        }

        private static String differs(ByteBuffer memory, int offset, int seq, long key, int i) {
            return String.format(Locale.ROOT, "message %d: octet %d is 0x%02x, not 0x%02x", seq, i, memory.get(offset + i),
                    octet(key, i));
        }
    }

    /** The server side of one queue pair: keeps receives posted and checks every Send against the next in sequence. */
    static final class Target {
        private final Rnic rnic;
        private final ProtectionDomain pd;
        private final Stats stats;
        private final Map<Integer, Target> targets;
        final ByteBuffer memory = ByteBuffer.allocateDirect(2 * SLOTS * SLOT).order(ByteOrder.LITTLE_ENDIAN);
        final List<String> mismatches = new CopyOnWriteArrayList<>();
        volatile int receivesCompleted;
        QueuePair qp;
        private int index;

        Target(Rnic rnic, ProtectionDomain pd, Stats stats, Map<Integer, Target> targets) {
            this.rnic = rnic;
            this.pd = pd;
            this.stats = stats;
            this.targets = targets;
        }

        void accept(ConnectRequest request) {
            index = ByteBuffer.wrap(request.privateData()).getInt();
            CompletionQueue cq = rnic.createCq(256);
            qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(8).receiveDepth(SLOTS));
            MemoryRegion region = pd.register(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            // Receives land in the second half; remote Writes and Reads use the first.
            for (int i = 0; i < SLOTS; i++) {
                qp.postReceive(new ReceiveWorkRequest(i, new Sge(region, (long) (SLOTS + i) * SLOT, SLOT)));
            }
            cq.onCompletion(wc -> {
                if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.RECEIVE) {
                    return;
                }
                int slot = (int) wc.workRequestId();
                int offset = (SLOTS + slot) * SLOT;
                int seq = ++receivesCompleted;
                String bad = Message.check(memory, offset, (int) wc.byteLength(), index, seq);
                if (bad == null) {
                    stats.sendsChecked.incrementAndGet();
                } else {
                    mismatches.add(bad);
                    stats.mismatches.incrementAndGet();
                }
                try {
                    qp.postReceive(new ReceiveWorkRequest(slot, new Sge(region, offset, SLOT)));
                } catch (IllegalStateException e) {
                    // the connection is ending: nothing more will arrive
                }
            });
            targets.put(index, this);
            ByteBuffer reply = ByteBuffer.allocate(12).putLong(region.address()).putInt(region.rkey());
            request.accept(qp, reply.array());
            qp.closeFuture().thenRun(region::deregister);
        }
    }

    /**
     * The client side of one queue pair, driven by its completions: each round a Send, a Write of
     * the same message, and a Read of it back, then a check of what the Read brought.
     */
    static final class Driver {
        private static final long ROUND = 1;
        private static final long PROBE = 2;
        private static final long FLOOD_ID = 3;
        private static final byte[] ZEROS = new byte[SLOT];
        final int index;
        final boolean crc;
        final int rounds;
        final QueuePair qp;
        final CompletionQueue cq;
        final ByteBuffer memory = ByteBuffer.allocateDirect(2 * SLOT).order(ByteOrder.LITTLE_ENDIAN);
        final MemoryRegion region;
        final Stats stats;
        final Progress progress;
        final SplittableRandom random;
        /** Counted down when the rounds are over: all done, or a work request failed. */
        final CountDownLatch finished = new CountDownLatch(1);
        final java.util.concurrent.CompletableFuture<Void> finishedFuture = new java.util.concurrent.CompletableFuture<>();
        final CountDownLatch probed = new CountDownLatch(1);
        final List<String> mismatches = new CopyOnWriteArrayList<>();
        FaultyProxy.Connection connection;
        boolean staysUp;
        Target target;
        QpState stateBeforeDisconnect;
        QpState serverStateBeforeDisconnect;
        volatile int roundsDone;
        volatile int readsCompleted;
        volatile int outstanding;
        volatile String error;
        volatile String probeResult;
        private long remoteAddress;
        private int rkey;
        private int seq;
        private int length;

        Driver(int index, boolean crc, int rounds, Rnic rnic, ProtectionDomain pd, Stats stats, Progress progress) {
            this.index = index;
            this.crc = crc;
            this.rounds = rounds;
            this.stats = stats;
            this.progress = progress;
            this.random = new SplittableRandom(index);
            this.cq = rnic.createCq(64);
            this.qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(16).receiveDepth(1));
            this.region = pd.register(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            cq.onCompletion(this::completed);
            qp.closeFuture().thenRun(region::deregister);
        }

        java.util.concurrent.CompletableFuture<Driver> connect(InetSocketAddress proxy) {
            byte[] who = ByteBuffer.allocate(4).putInt(index).array();
            return qp.pd().rnic().connect(qp, proxy, who).thenApply(connected -> {
                ByteBuffer reply = ByteBuffer.wrap(qp.parameters().peerPrivateData());
                remoteAddress = reply.getLong();
                rkey = reply.getInt();
                return this;
            });
        }

        void start() {
            qp.execute(this::round);
        }

        /** One round: Send, Write, Read back. */
        private void round() {
            if (roundsDone == rounds || qp.state() != QpState.RTS) {
                finished.countDown();
                finishedFuture.complete(null);
                return;
            }
            seq++;
            int slot = seq % SLOTS;
            length = MIN_LENGTH + random.nextInt(SLOT - MIN_LENGTH + 1);
            Message.fill(memory, 0, index, seq, length);
            zero(SLOT, length);
            long remote = remoteAddress + (long) slot * SLOT;
            SendWorkRequest[] chain = {
                SendWorkRequest.send(ROUND, new Sge(region, 0, length)),
                SendWorkRequest.write(ROUND, remote, rkey, new Sge(region, 0, length)),
                SendWorkRequest.read(ROUND, remote, rkey, new Sge(region, SLOT, length)),
            };
            outstanding += chain.length;
            try {
                qp.postSend(chain, chain.length);
            } catch (IllegalStateException e) {
                outstanding -= chain.length;
                stop("post refused: " + e.getMessage());
            }
        }

        /** After the rounds, on a connection that must be up: reads the last message back once more. */
        void probe() {
            qp.execute(() -> {
                zero(SLOT, length);
                outstanding++;
                try {
                    qp.postSend(SendWorkRequest.read(PROBE, remoteAddress + (long) (seq % SLOTS) * SLOT, rkey,
                            new Sge(region, SLOT, length)));
                } catch (IllegalStateException e) {
                    outstanding--;
                    probeResult = "refused: " + e.getMessage();
                    probed.countDown();
                }
            });
        }

        /**
         * On a connection whose fault must end it: {@value #FLOOD} Writes and Reads of a slot,
         * posted at once, so that a receiver waiting for the octets a damaged length announced gets them.
         */
        void flood() {
            try {
                qp.execute(() -> {
                    for (int i = 0; i < FLOOD; i++) {
                        SendWorkRequest[] pair = {
                            SendWorkRequest.write(FLOOD_ID, remoteAddress, rkey, new Sge(region, 0, SLOT)),
                            SendWorkRequest.read(FLOOD_ID, remoteAddress, rkey, new Sge(region, SLOT, SLOT)),
                        };
                        outstanding += pair.length;
                        try {
                            qp.postSend(pair, pair.length);
                        } catch (IllegalStateException e) {
                            outstanding -= pair.length;
                            return; // the connection has ended already
                        }
                    }
                });
            } catch (IllegalStateException e) {
                // not connected any more: nothing to flood
            }
        }

        private void completed(WorkCompletion wc) {
            outstanding--;
            if (wc.status() != WcStatus.SUCCESS) {
                if (wc.workRequestId() == PROBE) {
                    probeResult = wc.toString();
                    probed.countDown();
                } else {
                    stop(wc.toString());
                }
                return;
            }
            if (wc.opcode() != WcOpcode.RDMA_READ) {
                return;
            }
            readsCompleted++;
            if (wc.workRequestId() == FLOOD_ID) {
                return; // counted: the checks say whether such a Read may complete
            }
            String bad = Message.check(memory, SLOT, length, index, seq);
            if (wc.workRequestId() == PROBE) {
                probeResult = bad == null ? "answered" : "answered with " + bad;
                probed.countDown();
                return;
            }
            stats.bytes.addAndGet(3L * length);
            if (bad == null) {
                stats.readsChecked.incrementAndGet();
            } else {
                mismatches.add(bad);
                stats.mismatches.incrementAndGet();
            }
            roundsDone++;
            if (staysUp) {
                progress.roundDone();
            }
            round();
        }

        private void stop(String what) {
            if (error == null) {
                error = what;
                if (staysUp) {
                    progress.trouble(this + ": " + what);
                }
            }
            finished.countDown();
            finishedFuture.complete(null);
        }

        private void zero(int offset, int n) {
            memory.put(offset, ZEROS, 0, n);
        }

        @Override
        public String toString() {
            return "QP " + index + " (CRC " + (crc ? "on" : "off") + ", " + (connection == null ? "unplanned"
                    : connection.plan) + ", " + roundsDone + " rounds" + (error == null ? "" : ", " + error) + ")";
        }
    }
}
