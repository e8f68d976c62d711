package org.jiwarp.conformance.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.rnic.Access;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * The fault-injection soak: mixed traffic (Sends checked by the receiver, Writes read back and
 * checked by the writer) over 100 queue pairs through a {@link FaultyProxy}. Every connection's
 * bytes are re-segmented and delayed; one in five also gets one destructive fault (a dropped run of
 * octets, a flipped bit, or the connection cut mid-stream) at a random point. With CRC on, damage
 * must never be placed and no Send is delivered twice. After the traffic every queue pair gets probe
 * Reads (a stream missing a few octets only shows its damage when more octets arrive), then each
 * fault must have been detected the way the RFCs say: a flipped bit is an MPA CRC error, reported
 * in a Terminate by the side that received it (RFC 5044 section 8, RFC 5040 section 7.1); a drop
 * or a cut closes that connection (the queue pair leaves RTS before the test disconnects it, its
 * work all completed). Every other queue pair moved only verified data and answers its probe; no
 * thread was left behind, and (through the project's leak check) no buffer leaked.
 *
 * <p>{@code -Djiwarp.soakSeconds=N} sets the length (60 in CI; the README gives the 10-minute run).
 * The figures go to {@code target/soak-report.md}.
 */
class FaultInjectionSoakTest {

    private static final int QPS = 100;
    private static final int SLOT = 16 * 1024;
    private static final int SLOTS = 4;

    @Test
    void mixedTrafficSurvivesFaultsOnSomeConnections() throws Exception {
        long seconds = Long.getLong("jiwarp.soakSeconds", 60);
        int threadsBefore = Thread.activeCount();
        MpaSettings mpa = RnicOptions.defaults().mpa().toBuilder().crc(CrcPolicy.REQUIRE).build();
        Stats stats = new Stats();
        List<Driver> drivers = new ArrayList<>();
        long heapEarly;
        long heapLate;
        int proxied;
        long injected;
        try (Rnic serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa));
                Rnic clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa))) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            RnicListener listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> new Target(serverRnic, serverPd, stats).accept(request));
            SplittableRandom plans = new SplittableRandom(seconds);
            FaultInjector.Fault[] destructive = {FaultInjector.Fault.DROP, FaultInjector.Fault.CORRUPT,
                FaultInjector.Fault.TRUNCATE};
            try (FaultyProxy proxy = new FaultyProxy(listener.localAddress(), n -> {
                synchronized (plans) {
                    // Within what a queue pair moves in a quarter of the run, so that every fault is injected.
                    long after = 4096 + plans.nextLong(Math.min(1L << 20, seconds * 4096));
                    FaultInjector.Fault none = FaultInjector.Fault.RESEGMENT_AND_DELAY;
                    if (n % 5 != 0) {
                        return new FaultyProxy.Plan(none, 0, none, 0);
                    }
                    FaultInjector.Fault fault = destructive[(n / 5) % destructive.length];
                    return plans.nextBoolean() ? new FaultyProxy.Plan(fault, after, none, 0)
                            : new FaultyProxy.Plan(none, 0, fault, after);
                }
            })) {
                ProtectionDomain pd = clientRnic.allocatePd();
                List<CompletableFuture<Driver>> connecting = new ArrayList<>();
                for (int i = 0; i < QPS; i++) {
                    Driver driver = new Driver(i, clientRnic, pd, stats);
                    drivers.add(driver);
                    connecting.add(driver.connect(proxy.address()));
                }
                for (CompletableFuture<Driver> c : connecting) {
                    c.get(30, TimeUnit.SECONDS);
                }
                for (Driver driver : drivers) {
                    driver.port = driver.qp.localAddress() != null ? driver.qp.localAddress().getPort() : -1;
                    driver.plan = proxy.planFor(driver.port);
                    driver.start(System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds));
                }
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds) / 4);
                heapEarly = heapAfterGc();
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds) * 3 / 4);
                heapLate = heapAfterGc();
                for (Driver driver : drivers) {
                    // A faulted one may wait for octets a drop took away: its probes bring them.
                    boolean stopped = driver.stopped.await(driver.plan.destructive() ? 2 : 30, TimeUnit.SECONDS);
                    assertTrue(stopped || driver.plan.destructive(), driver + " did not stop");
                }
                for (Driver driver : drivers) {
                    driver.probe();
                    driver.injected = proxy.injectedFor(driver.port);
                    driver.stateBeforeDisconnect = driver.qp.state();
                }
                for (Driver driver : drivers) {
                    driver.qp.disconnect().get(30, TimeUnit.SECONDS);
                }
                proxied = proxy.connections();
                injected = proxy.injected();
            }
            listener.close();
        }
        Thread.sleep(500);
        int threadsAfter = Thread.activeCount();

        // First what every queue pair owes, faulted or not: each Send delivered at most once.
        assertEquals(0, stats.duplicates.get(), "a Send was delivered twice");
        int faulted = 0;
        int terminatedEarly = 0;
        int byTerminate = 0;
        long healthyIterations = 0;
        List<String> undetected = new ArrayList<>();
        for (Driver driver : drivers) {
            assertTrue(driver.plan != null, "QP " + driver.index + " has a plan");
            assertEquals(0, driver.outstanding, driver + ": all its work completed");
            if (driver.plan.destructive()) {
                faulted++;
                if (driver.error != null) {
                    terminatedEarly++;
                }
                if (driver.qp.terminateSent() != null || driver.qp.terminateReceived() != null) {
                    byTerminate++;
                }
                String why = detection(driver);
                if (why != null) {
                    undetected.add(driver + ": " + why);
                }
            } else {
                assertEquals(null, driver.error, driver + " was not faulted and must not fail");
                assertEquals(QpState.RTS, driver.stateBeforeDisconnect, driver + " was not faulted and must stay up");
                assertEquals(0, driver.injected, driver + " was not to be faulted");
                assertTrue(driver.probeAnswered, driver + " did not answer its probe Read");
                assertTrue(driver.iterations > 0, driver + " moved data");
                healthyIterations += driver.iterations;
            }
        }
        String report = String.format(Locale.ROOT, "| figure | value |%n|---|---|%n"
                        + "| length | %d s |%n| queue pairs | %d (through the proxy: %d) |%n"
                        + "| traffic moved | %.1f MB (%d Sends checked by the receiver, %d Writes read back and checked) |%n"
                        + "| faults injected | %d destructive (drop, bit flip, cut) on %d QPs, every byte of all QPs "
                        + "re-segmented and delayed |%n"
                        + "| faulted QPs terminated | %d before the end, %d at disconnect (%d with a Terminate sent or "
                        + "received, the rest by the cut connection); each detected as the RFCs say, with its work "
                        + "completed |%n| data mismatches, Sends delivered twice | %d, %d |%n| heap after GC, at 1/4 and at the end | %.1f MB, %.1f MB |%n"
                        + "| live threads before / after | %d / %d |%n| leaked buffers | 0 (paranoid leak detector, "
                        + "checked per test class) |%n", seconds, QPS, proxied, stats.bytes.get() / 1e6,
                stats.sendsChecked.get(), stats.readsChecked.get(), injected, faulted, terminatedEarly,
                faulted - terminatedEarly, byTerminate, stats.mismatches.get(), stats.duplicates.get(), heapEarly / 1e6, heapLate / 1e6, threadsBefore,
                threadsAfter);
        System.out.println(report);
        Path out = Path.of("target", "soak-report.md");
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(out, report);
        } catch (IOException e) {
            System.err.println("could not write " + out + ": " + e);
        }
        assertEquals(0, stats.mismatches.get(), "damaged data was never placed");
        assertEquals(QPS / 5, faulted);
        assertEquals(List.of(), undetected, "faults not detected as the RFCs say");
        assertTrue(healthyIterations > 0);
        assertTrue(threadsAfter <= threadsBefore + 2, "threads: " + threadsBefore + " before, " + threadsAfter + " after");
        assertTrue(heapLate - heapEarly < 64 << 20, "heap grew from " + heapEarly + " to " + heapLate);
    }

    /**
     * Why {@code driver}'s fault was not detected the way the RFCs say, or {@code null}. The fault
     * must have been injected (else the soak did not test it); a flipped bit is a CRC error in a
     * Terminate from the side that received it (RFC 5044 section 8: LLP layer, MPA CRC error); a
     * drop or a cut closed the connection before the test's own disconnect.
     */
    private static String detection(Driver driver) {
        FaultyProxy.Plan plan = driver.plan;
        if (driver.injected != 1) {
            return driver.injected + " faults injected, expected 1";
        }
        if (driver.stateBeforeDisconnect == QpState.RTS) {
            return "the queue pair was still in RTS after the traffic and its probes";
        }
        FaultInjector.Fault fault = plan.toServer().destructive ? plan.toServer() : plan.toClient();
        if (fault == FaultInjector.Fault.CORRUPT) {
            TerminateError expected = TerminateError.LLP_CRC_ERROR;
            if (plan.toClient() == fault && driver.qp.terminateSent() != expected) {
                return "the client received the flipped bit and sent " + driver.qp.terminateSent() + ", not " + expected;
            }
            RemoteTerminate received = driver.qp.terminateReceived();
            if (plan.toServer() == fault && (received == null || received.error() != expected)) {
                return "the server received the flipped bit; the client got " + received + ", not " + expected;
            }
        }
        return null;
    }

    private static long heapAfterGc() {
        System.gc();
        System.gc();
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    /** Traffic counters, all QPs together. */
    static final class Stats {
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong sendsChecked = new AtomicLong();
        final AtomicLong readsChecked = new AtomicLong();
        final AtomicLong mismatches = new AtomicLong();
        final AtomicLong duplicates = new AtomicLong();
        /** Every Send delivered, as (queue pair index, sequence number). */
        final java.util.Set<Long> delivered = java.util.concurrent.ConcurrentHashMap.newKeySet();
    }

    /** The pattern of message {@code seq} of queue pair {@code qp}: its first 8 octets say which it is. */
    static byte patternAt(int qp, int seq, int i) {
        return (byte) (qp * 31 + seq * 7 + i);
    }

    static void fill(MemoryRegion region, int offset, int qp, int seq, int length) {
        region.buffer().setInt(offset, qp);
        region.buffer().setInt(offset + 4, seq);
        for (int i = 8; i < length; i++) {
            region.buffer().setByte(offset + i, patternAt(qp, seq, i));
        }
    }

    static boolean check(MemoryRegion region, int offset, int length) {
        int qp = region.buffer().getInt(offset);
        int seq = region.buffer().getInt(offset + 4);
        for (int i = 8; i < length; i++) {
            if (region.buffer().getByte(offset + i) != patternAt(qp, seq, i)) {
                return false;
            }
        }
        return true;
    }

    /** The server side of one QP: keeps receives posted and checks every Send it gets. */
    static final class Target {
        private final Rnic rnic;
        private final ProtectionDomain pd;
        private final Stats stats;

        Target(Rnic rnic, ProtectionDomain pd, Stats stats) {
            this.rnic = rnic;
            this.pd = pd;
            this.stats = stats;
        }

        void accept(org.jiwarp.rnic.ConnectRequest request) {
            CompletionQueue cq = rnic.createCq(256);
            QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(8).receiveDepth(SLOTS));
            MemoryRegion region = pd.register(ByteBuffer.allocateDirect(2 * SLOTS * SLOT),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            // Receives land in the second half; remote Writes and Reads use the first.
            for (int i = 0; i < SLOTS; i++) {
                qp.postReceive(new ReceiveWorkRequest(i, new Sge(region, (long) (SLOTS + i) * SLOT, SLOT)));
            }
            cq.onCompletion(wc -> {
                if (wc.status() == WcStatus.SUCCESS && wc.opcode() == WcOpcode.RECEIVE) {
                    int slot = (int) wc.workRequestId();
                    int offset = (SLOTS + slot) * SLOT;
                    if (check(region, offset, (int) wc.byteLength())) {
                        stats.sendsChecked.incrementAndGet();
                        long message = (long) region.buffer().getInt(offset) << 32 | region.buffer().getInt(offset + 4);
                        if (!stats.delivered.add(message)) {
                            stats.duplicates.incrementAndGet();
                        }
                    } else {
                        stats.mismatches.incrementAndGet();
                    }
                    qp.postReceive(new ReceiveWorkRequest(slot, new Sge(region, offset, SLOT)));
                }
            });
            ByteBuffer reply = ByteBuffer.allocate(12).putLong(region.address()).putInt(region.rkey());
            request.accept(qp, reply.array());
            qp.closeFuture().thenRun(region::deregister);
        }
    }

    /**
     * The client side of one QP, driven by its completions: each round a Send, a Write of the same
     * message, and a Read of it back, then a check of what the Read brought.
     */
    static final class Driver {
        private static final int PROBES = 8;
        private static final long PROBE_ID = 99;
        final int index;
        final QueuePair qp;
        final CompletionQueue cq;
        final MemoryRegion region;
        final Stats stats;
        final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        final SplittableRandom random;
        FaultyProxy.Plan plan;
        int port;
        long injected;
        QpState stateBeforeDisconnect;
        volatile boolean probeAnswered;
        private volatile java.util.concurrent.CountDownLatch probe;
        volatile String error;
        volatile int outstanding;
        long iterations;
        private long remoteAddress;
        private int rkey;
        private long deadline;
        private int seq;
        private int length;
        private int slot;

        Driver(int index, Rnic rnic, ProtectionDomain pd, Stats stats) {
            this.index = index;
            this.stats = stats;
            this.random = new SplittableRandom(index);
            this.cq = rnic.createCq(64);
            this.qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(16).receiveDepth(1));
            this.region = pd.register(ByteBuffer.allocateDirect(2 * SLOT),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            cq.onCompletion(this::completed);
            qp.closeFuture().thenRun(() -> {
                stopped.countDown();
                region.deregister();
            });
        }

        CompletableFuture<Driver> connect(InetSocketAddress proxy) {
            return qp.pd().rnic().connect(qp, proxy, new byte[0]).thenApply(connected -> {
                ByteBuffer reply = ByteBuffer.wrap(qp.parameters().peerPrivateData());
                remoteAddress = reply.getLong();
                rkey = reply.getInt();
                return this;
            });
        }

        void start(long deadline) {
            this.deadline = deadline;
            qp.execute(this::round);
        }

        /**
         * After the traffic: Reads of a slot, one at a time, until one is answered or the queue
         * pair leaves RTS (at most {@value #PROBES}; enough octets to complete any FPDU a dropped
         * run of octets left waiting).
         */
        void probe() throws InterruptedException {
            for (int i = 0; i < PROBES && qp.state() == QpState.RTS && !probeAnswered; i++) {
                java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
                probe = done;
                qp.execute(() -> {
                    outstanding++;
                    try {
                        qp.postSend(SendWorkRequest.read(PROBE_ID, remoteAddress, rkey, new Sge(region, SLOT, SLOT)));
                    } catch (IllegalStateException e) {
                        outstanding--;
                        done.countDown();
                    }
                });
                assertTrue(done.await(30, TimeUnit.SECONDS), this + ": probe Read neither answered nor flushed");
            }
            probe = null;
        }

        /** One round: Send, Write, Read back (the Read signaled; the others signaled too, to count them). */
        private void round() {
            if (System.nanoTime() > deadline || qp.state() != QpState.RTS) {
                stopped.countDown();
                return;
            }
            seq++;
            slot = seq % SLOTS;
            length = 8 + random.nextInt(SLOT - 8);
            fill(region, 0, index, seq, length);
            long remote = remoteAddress + (long) slot * SLOT;
            SendWorkRequest[] chain = {
                SendWorkRequest.send(1, new Sge(region, 0, length)),
                SendWorkRequest.write(2, remote, rkey, new Sge(region, 0, length)),
                SendWorkRequest.read(3, remote, rkey, new Sge(region, SLOT, length)),
            };
            region.buffer().setZero(SLOT, length);
            outstanding += chain.length;
            try {
                qp.postSend(chain, chain.length);
            } catch (IllegalStateException e) {
                outstanding -= chain.length;
                fail("post refused: " + e.getMessage());
            }
        }

        private void completed(WorkCompletion wc) {
            outstanding--;
            java.util.concurrent.CountDownLatch probing = probe;
            if (probing != null && wc.workRequestId() == PROBE_ID) {
                probeAnswered |= wc.status() == WcStatus.SUCCESS;
                probing.countDown();
                return;
            }
            if (wc.status() != WcStatus.SUCCESS) {
                fail(wc.toString());
                return;
            }
            if (wc.opcode() == WcOpcode.RDMA_READ) {
                if (check(region, SLOT, length) && region.buffer().getInt(SLOT + 4) == seq) {
                    stats.readsChecked.incrementAndGet();
                } else {
                    stats.mismatches.incrementAndGet();
                }
                stats.bytes.addAndGet(3L * length);
                iterations++;
                round();
            }
        }

        private void fail(String what) {
            if (error == null) {
                error = what;
            }
            if (outstanding <= 0) {
                stopped.countDown();
            }
        }

        @Override
        public String toString() {
            return "QP " + index + " (" + plan + ", " + iterations + " rounds" + (error == null ? "" : ", " + error)
                    + ")";
        }
    }
}
