package org.jiwarp.tools.perftest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.zip.CRC32C;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.perftest.PerftestWire;
import org.jiwarp.wire.perftest.PingpongDest;
import org.jiwarp.wire.perftest.Verb;

/**
 * One perftest run at one end, client or server, from the control connection to the last
 * message, in the order the package javadoc gives. Runs on the caller's thread, polling its
 * completion queues as perftest does (blocking takes where perftest spins).
 */
final class PerftestSession {

    /** How the two connections come about: connect (client) or accept (server). */
    interface Connections {
        /** Connects or accepts the control connection onto {@code qp}; returns once it is up. */
        void control(QueuePair qp);

        /** Connects or accepts the test connection onto a queue pair from {@code factory}. */
        TestQp test(Supplier<TestQp> factory);
    }

    /** The test connection's queue pair with its own completion queues. */
    record TestQp(QueuePair qp, CompletionQueue sendCq, CompletionQueue receiveCq) {
    }

    /** The credit word (ib_send_bw over iWARP) is written in the x86 peer's host order. */
    private static final VarHandle INT_LE = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    /** Offset of the peer-written credit word in the credit buffer (perftest's {@code ctrl_buf + num_qps}). */
    private static final int CREDIT_WORD = 4;
    private static final long CREDIT_WRITE_ID = -1;
    private static final long VERIFY_READ_ID = -2;
    /** The warm-up's work requests count down from here. */
    private static final long WARM_UP_ID = -1000;
    /** How long each end waits for the peer to close first (see tearDown). */
    private static final long CLIENT_CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final long SERVER_CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Rnic rnic;
    private final PerftestParameters p;
    private final boolean server;
    private final Connections connections;
    private final Consumer<String> out;
    private final Consumer<String> log;
    private final long timeoutNanos;
    private final ProtectionDomain pd;
    private final SplittableRandom random = new SplittableRandom();

    private ControlChannel control;
    private TestQp test;
    private String peerVersion;
    private BufferLayout layout;
    private ByteBuffer data;
    private MemoryRegion dataRegion;
    private ByteBuffer credit;
    private MemoryRegion creditRegion;
    private PingpongDest local;
    private PingpongDest remote;
    private boolean finished;

    PerftestSession(Rnic rnic, PerftestParameters parameters, boolean server, Connections connections,
            Consumer<String> out, Consumer<String> log) {
        this.rnic = rnic;
        this.p = parameters;
        this.server = server;
        this.connections = connections;
        this.out = out;
        this.log = log;
        this.timeoutNanos = parameters.timeout().toNanos();
        this.pd = rnic.allocatePd();
    }

    PerftestResult run() {
        try {
            return exchangeAndRun();
        } finally {
            tearDown();
        }
    }

    private PerftestResult exchangeAndRun() {
        control = new ControlChannel(rnic, pd, !server, p.timeout());
        connections.control(control.qp());
        log.accept("control connection up: " + org.jiwarp.tools.Failures.connection(control.qp().parameters()));
        if (!server && !p.settle().isZero()) {
            // siw's passive side attaches its receive path only after sending the Reply: what arrives
            // before sits unread until more arrives. In peer-to-peer mode that is the RTR, picked up
            // with the first message; without it, the first message itself.
            sleep(p.settle().toNanos());
        }

        // exchange_versions, check_version_compatibility, check_sys_data, check_mtu.
        byte[] versionField = control.exchange("version", PerftestWire.version(PerftestWire.VERSION,
                new PerftestWire.JiwarpRun(p.verb(), p.latency(), p.iters(), p.size())), PerftestWire.VERSION_LENGTH);
        peerVersion = PerftestWire.cString(versionField);
        if (PerftestWire.versionNumber(peerVersion) < PerftestWire.MIN_PEER_VERSION) {
            throw new PerftestException("the peer speaks perftest " + peerVersion + "; this implementation speaks "
                    + PerftestWire.VERSION + " and, like it, needs " + PerftestWire.MIN_PEER_VERSION + " or later");
        }
        PerftestWire.JiwarpRun theirs = PerftestWire.jiwarpRun(versionField);
        if (theirs != null) {
            requireSameRun(theirs);
        }
        int cycleBuffer = Math.max(PerftestWire.PAGE_SIZE, PerftestWire.int32(control.exchange("cycle buffer",
                PerftestWire.int32(PerftestWire.PAGE_SIZE), PerftestWire.INT_LENGTH)));
        int cacheLine = Math.max(PerftestWire.CACHE_LINE_SIZE, PerftestWire.int32(control.exchange("cache line size",
                PerftestWire.int32(PerftestWire.CACHE_LINE_SIZE), PerftestWire.INT_LENGTH)));
        int peerMtu = PerftestWire.mtu(control.exchange("MTU", PerftestWire.mtu(PerftestWire.IBV_MTU_4096),
                PerftestWire.MTU_LENGTH));
        int mtu = PerftestWire.mtuOctets(peerMtu) > 0 && peerMtu < PerftestWire.IBV_MTU_4096 ? peerMtu
                : PerftestWire.IBV_MTU_4096;
        if (cycleBuffer <= 0 || cacheLine <= 0 || Integer.bitCount(cacheLine) != 1 || cycleBuffer % cacheLine != 0) {
            throw new PerftestException("the peer's page size " + cycleBuffer + " or cache line " + cacheLine
                    + " makes no buffer layout");
        }
        layout = BufferLayout.of(p.size(), cycleBuffer, cacheLine, !p.latency());
        allocateBuffers();

        // create_rdma_cm_connection: a handshake of zeros on either side of the test connection's setup.
        control.handshake("handshake before the test connection", PingpongDest.zero());
        test = connections.test(this::newTestQp);
        control.watch(test.qp());
        log.accept("test connection up: " + org.jiwarp.tools.Failures.connection(test.qp().parameters()));
        control.handshake("handshake after the test connection", PingpongDest.zero());

        local = new PingpongDest(0, p.outReads(), test.qp().number(), random.nextInt(1 << 24),
                p.verb() == Verb.SEND ? creditRegion.rkey() : dataRegion.rkey(),
                p.verb() == Verb.SEND ? creditRegion.address() + CREDIT_WORD : dataRegion.address() + layout.buffSize(),
                new byte[PingpongDest.GID_LENGTH], 0, 0);
        printTestInfo(mtu);
        if (p.latency()) {
            return latencyTest();
        }
        return p.verb() == Verb.SEND ? sendBandwidthTest() : rdmaBandwidthTest();
    }

    /**
     * Both ends are jiwarp: the peer's run, from its version field, must be this end's, or the run
     * would fail later without saying why (a Send without a receive, a ping-pong that stalls). Each end
     * finds it after the version exchange, so both say it.
     */
    private void requireSameRun(PerftestWire.JiwarpRun theirs) {
        String peer = server ? "the client" : "the server";
        String self = server ? "this server" : "this client";
        if (theirs.verb() != p.verb() || theirs.latency() != p.latency()) {
            throw new PerftestException(peer + " runs " + theirs.program() + " and " + self + " " + p.program()
                    + ": give both ends the same --test and --lat");
        }
        if (theirs.iters() != p.iters() || theirs.size() != p.size()) {
            throw new PerftestException(peer + " runs " + theirs.iters() + " iterations of " + theirs.size()
                    + " octets and " + self + " " + p.iters() + " of " + p.size() + ": give both ends the same -n and -s");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The tests

    /** ib_write_bw and ib_read_bw: three key handshakes, the client's run, its report to the server. */
    private PerftestResult rdmaBandwidthTest() {
        keys("keys", "remote keys", "handshake after RTR");
        if (!server) {
            Run run = clientRun();
            StringBuilder checks = new StringBuilder(run.operations + "/" + p.iters() + " " + opName()
                    + " completed successfully in " + run.completions + " completions");
            long digest = p.verb() == Verb.READ ? verifyReadData(checks) : slotDigest(0);
            control.handshake("handshake: client done", local);
            // A perftest server's report holds nothing; a jiwarp server's was compared in the version exchange.
            exchangeReports(run.report);
            printReport(run.report);
            log.accept(figuresNote());
            control.handshake("closing handshake", local);
            return finish(run.operations, run.completions, run.report, null, checks.toString(), digest);
        }
        control.handshake("handshake: client done", local);
        String checks;
        long digest;
        if (p.verb() == Verb.WRITE) {
            checks = checkPlacement(true);
            digest = slotDigest(layout.buffSize());
        } else {
            checks = "the client read from the upper half of this end's buffer";
            digest = slotDigest(layout.buffSize());
        }
        // This server's -s and -n, nothing measured. A perftest client's report names its own run.
        BwReport theirs = exchangeReports(new BwReport(p.size(), p.iters(), 0, 0, 0));
        if (theirs.size() != p.size() || theirs.iters() != p.iters()) {
            throw new PerftestException("the client ran " + theirs.iters() + " iterations of " + theirs.size()
                    + " octets and this server expects " + p.iters() + " of " + p.size() + ": give both ends the "
                    + "same -n and -s");
        }
        printReport(theirs);
        control.handshake("closing handshake", local);
        return finish(0, 0, theirs, null, checks + "; the client reports " + theirs.iters() + " iterations of "
                + theirs.size() + " octets", digest);
    }

    /** ib_send_bw: keys (of the credit word), the server's receives, a start handshake, the run. */
    private PerftestResult sendBandwidthTest() {
        keys("keys", "handshake after the credit setup", "remote keys");
        if (server) {
            for (int k = 0; k < p.rxDepth(); k++) {
                postReceive(k);
            }
        }
        control.handshake("handshake: start", local);
        PerftestResult result;
        if (!server) {
            Run run = clientRun();
            printReport(run.report);
            log.accept(figuresNote());
            result = finish(run.operations, run.completions, run.report, null, run.operations + "/" + p.iters()
                    + " Sends completed successfully in " + run.completions + " completions; waited "
                    + run.creditWaits + " times for credit, saw " + run.credits + " credit updates from the server",
                    slotDigest(0));
        } else {
            result = sendServerRun();
            printReport(result.bandwidth());
            log.accept(figuresNote());
        }
        control.handshake("closing handshake", local);
        return result;
    }

    /** ib_write_lat: four key handshakes, then ping-pong Writes, each side polling its last octet. */
    private PerftestResult latencyTest() {
        keys("keys", "keys again", "remote keys", "handshake after RTR");
        long[] posted = new long[p.iters()];
        int postIndex = p.size() - 1;
        int pollIndex = layout.buffSize() + p.size() - 1;
        long scnt = 0;
        long ccnt = 0;
        long rcnt = 0;
        while (scnt < p.iters() || ccnt < p.iters() || rcnt < p.iters()) {
            // The server does not wait before its first Write: it moves first.
            if (rcnt < p.iters() && !(scnt < 1 && server)) {
                rcnt++;
                awaitOctet(pollIndex, (byte) rcnt, "the peer's Write " + rcnt);
            }
            if (scnt < p.iters()) {
                posted[(int) scnt] = System.nanoTime();
                data.put(postIndex, (byte) ++scnt);
                test.qp().postSend(SendWorkRequest.write(scnt, remote.vaddr(), remote.rkey(),
                        new Sge(dataRegion, 0, p.size())));
            }
            if (ccnt < p.iters()) {
                WorkCompletion wc = take(test.sendCq(), timeoutNanos, "the completion of Write " + (ccnt + 1));
                expect(wc, WcOpcode.RDMA_WRITE, "Write " + (ccnt + 1));
                if (wc.workRequestId() != ccnt + 1) {
                    throw new PerftestException("completion for Write " + wc.workRequestId() + " where "
                            + (ccnt + 1) + " was due");
                }
                ccnt++;
            }
        }
        LatencyReport report = LatencyReport.of(p.size(), p.iters(), posted);
        out.accept(BwReport.RESULT_LINE);
        out.accept(LatencyReport.HEADER);
        out.accept(report.line());
        out.accept(BwReport.RESULT_LINE);
        return finish(ccnt, ccnt, null, report, ccnt + "/" + p.iters() + " Writes completed successfully, "
                + rcnt + "/" + p.iters() + " of the peer's Writes seen in order (last octet = iteration)", -1);
    }

    /** The key handshakes before a run; the peer's last {@code struct pingpong_dest} is the one used. */
    private void keys(String... names) {
        for (String name : names) {
            remote = control.handshake(name, local);
            if (name.equals("remote keys")) {
                out.accept(local.describe("local", p.verb()));
                out.accept(remote.describe("remote", p.verb()));
                out.accept(BwReport.RESULT_LINE);
            }
        }
    }

    private record Run(long operations, long completions, long credits, long creditWaits, BwReport report) {
    }

    /** {@code run_iter_bw}: posts up to the TX depth, signals every CQ-moderation-th and the last. */
    private Run clientRun() {
        if (p.performWarmUp() && p.verb() != Verb.SEND) {
            warmUp();
        }
        int iters = p.iters();
        long[] posted = new long[iters];
        int[] completedIndex = new int[iters];
        long[] completedAt = new long[iters];
        int completions = 0;
        long scnt = 0;
        long ccnt = 0;
        long credits = 0;
        long creditWaits = 0;
        boolean wasBlocked = false;
        int lastCredit = 0;
        long progressDeadline = System.nanoTime() + timeoutNanos;
        WcOpcode expected = switch (p.verb()) {
            case WRITE -> WcOpcode.RDMA_WRITE;
            case READ -> WcOpcode.RDMA_READ;
            case SEND -> WcOpcode.SEND;
        };
        int list = p.postList();
        SendWorkRequest[] chain = new SendWorkRequest[list];
        while (ccnt < iters) {
            boolean creditBlocked = false;
            // A post list goes out whole or not at all (perftest: scnt + post_list <= tx_depth + ccnt).
            while (scnt < iters && scnt + list - ccnt <= p.txDepth()) {
                if (p.verb() == Verb.SEND) {
                    int creditNow = creditWord();
                    if (creditNow != lastCredit) {
                        lastCredit = creditNow;
                        credits++;
                        progressDeadline = System.nanoTime() + timeoutNanos;
                    }
                    // The server has room for RX depth messages beyond what it has returned as credit.
                    if (scnt + list - Integer.toUnsignedLong(creditNow) >= p.rxDepth()) {
                        creditBlocked = true;
                        break;
                    }
                }
                for (int k = 0; k < list; k++) {
                    long n = scnt + k;
                    int offset = layout.offset(n);
                    Sge sge = new Sge(dataRegion, offset, p.size());
                    SendWorkRequest wr = switch (p.verb()) {
                        case WRITE -> SendWorkRequest.write(n + 1, remote.vaddr() + offset, remote.rkey(), sge);
                        case READ -> SendWorkRequest.read(n + 1, remote.vaddr() + offset, remote.rkey(), sge);
                        case SEND -> SendWorkRequest.send(n + 1, sge);
                    };
                    wr.signaled(n % p.cqMod() == p.cqMod() - 1 || n == iters - 1);
                    chain[k] = wr;
                }
                // One time per list, as perftest's tposted (the peak's stretches start at a list's first).
                long now = System.nanoTime();
                for (int k = 0; k < list; k++) {
                    posted[(int) scnt + k] = now;
                }
                if (list == 1) {
                    test.qp().postSend(chain[0]);
                } else {
                    test.qp().postSend(chain, list);
                }
                scnt += list;
            }
            if (creditBlocked && !wasBlocked) {
                creditWaits++;
            }
            wasBlocked = creditBlocked;
            long wait = creditBlocked ? TimeUnit.MICROSECONDS.toNanos(100)
                    : Math.max(1, progressDeadline - System.nanoTime());
            WorkCompletion wc = take(test.sendCq(), wait, null);
            if (wc == null) {
                if (System.nanoTime() - progressDeadline > 0) {
                    throw new PerftestException("no progress for " + p.timeout().toMillis() + " ms: " + scnt
                            + " posted, " + ccnt + " completed" + (creditBlocked ? ", waiting for the server's credit"
                            + " (now " + Integer.toUnsignedLong(creditWord()) + ")" : ""));
                }
                continue;
            }
            expect(wc, expected, opName() + " " + wc.workRequestId());
            long done = wc.workRequestId();
            if (done <= ccnt || done > scnt) {
                throw new PerftestException("completion for work request " + done + " with " + ccnt + " completed and "
                        + scnt + " posted");
            }
            ccnt = done;
            completedIndex[completions] = (int) done - 1;
            completedAt[completions++] = System.nanoTime();
            progressDeadline = System.nanoTime() + timeoutNanos;
        }
        return new Run(ccnt, completions, credits, creditWaits,
                BwReport.of(p.size(), iters, list, p.noPeak(), posted, completedIndex, completedAt, completions));
    }

    /**
     * {@code perform_warm_up}: one TX depth of Writes or Reads to the first slots, each signalled,
     * all completed before the measured run starts (perftest skips it for Sends, whose receives the
     * server counts). As perftest's, it warms the path, not the Java compiler: a few hundred
     * messages are not the thousands the compiler waits for.
     */
    private void warmUp() {
        int count = p.txDepth();
        for (int k = 0; k < count; k++) {
            int offset = layout.offset(k);
            Sge sge = new Sge(dataRegion, offset, p.size());
            long id = WARM_UP_ID - k;
            long to = remote.vaddr() + offset;
            test.qp().postSend(p.verb() == Verb.READ ? SendWorkRequest.read(id, to, remote.rkey(), sge)
                    : SendWorkRequest.write(id, to, remote.rkey(), sge));
        }
        for (int k = 0; k < count; k++) {
            expect(take(test.sendCq(), timeoutNanos, "warm-up completion " + (k + 1) + " of " + count),
                    p.verb() == Verb.READ ? WcOpcode.RDMA_READ : WcOpcode.RDMA_WRITE, "warm-up " + opName());
        }
        log.accept("warm-up: " + count + " " + opName() + " completed before the measured run");
    }

    /** {@code run_iter_bw_server} with iWARP credits: counts the Sends, reposts, returns credit by RDMA Write. */
    private PerftestResult sendServerRun() {
        int iters = p.iters();
        long posted = p.rxDepth();
        long rcnt = 0;
        long creditsSent = 0;
        int creditsOutstanding = 0;
        int creditEvery = p.rxDepth() / 3;
        long first = 0;
        WorkCompletion[] polled = {new WorkCompletion()};
        while (rcnt < iters) {
            WorkCompletion wc = take(test.receiveCq(), timeoutNanos, "Send " + (rcnt + 1) + " of " + iters);
            expect(wc, WcOpcode.RECEIVE, "receive " + (rcnt + 1));
            if (wc.workRequestId() != rcnt) {
                throw new PerftestException("receive " + wc.workRequestId() + " completed where " + rcnt + " was due");
            }
            if (wc.byteLength() != p.size()) {
                throw new PerftestException("Send " + (rcnt + 1) + " carried " + wc.byteLength() + " octets, not "
                        + p.size());
            }
            if (rcnt == 0) {
                first = System.nanoTime();
            }
            rcnt++;
            if (posted < iters) {
                postReceive(posted++);
            }
            if ((rcnt % p.rxDepth()) % creditEvery == 0) {
                while (creditsOutstanding >= p.txDepth()) {
                    expect(take(test.sendCq(), timeoutNanos, "a credit Write's completion"), WcOpcode.RDMA_WRITE,
                            "credit Write");
                    creditsOutstanding--;
                }
                credit.putInt(0, Integer.reverseBytes((int) rcnt));
                test.qp().postSend(SendWorkRequest.write(CREDIT_WRITE_ID, remote.vaddr(), remote.rkey(),
                        new Sge(creditRegion, 0, 4)));
                creditsOutstanding++;
                creditsSent++;
            }
            while (test.sendCq().poll(polled) == 1) {
                expect(polled[0], WcOpcode.RDMA_WRITE, "credit Write");
                creditsOutstanding--;
            }
        }
        long end = System.nanoTime();
        while (creditsOutstanding > 0) {
            expect(take(test.sendCq(), timeoutNanos, "a credit Write's completion"), WcOpcode.RDMA_WRITE,
                    "credit Write");
            creditsOutstanding--;
        }
        double seconds = Math.max(1, end - first) / 1e9;
        // perftest's ib_send_bw server has no peak (noPeak): it reports 0.
        BwReport report = new BwReport(p.size(), iters, 0, (double) p.size() * iters / seconds / 0x100000,
                iters / seconds / 1e6);
        String checks = rcnt + "/" + iters + " Sends received in order, each of " + p.size() + " octets; "
                + creditsSent + " credit Writes completed; " + checkPlacement(false);
        return finish(rcnt, rcnt, report, null, checks, slotDigest(layout.buffSize()));
    }

    // ---------------------------------------------------------------------------------------------
    // Checks

    /**
     * A Read client's data check: reads the server's touched slots once more, in one Read, and
     * compares them with what the run's Reads placed in the local slots (the server's buffer does
     * not change during the test).
     */
    private long verifyReadData(StringBuilder checks) {
        int touched = layout.touchedSlots(p.iters());
        int span = (touched - 1) * layout.stride() + p.size();
        ByteBuffer verify = ByteBuffer.allocateDirect(span);
        MemoryRegion region = pd.register(verify, Access.LOCAL_WRITE);
        try {
            test.qp().postSend(SendWorkRequest.read(VERIFY_READ_ID, remote.vaddr(), remote.rkey(),
                    new Sge(region, 0, span)));
            expect(take(test.sendCq(), timeoutNanos, "the verification Read"), WcOpcode.RDMA_READ,
                    "verification Read");
            for (int slot = 0; slot < touched; slot++) {
                int at = slot * layout.stride();
                if (data.slice(at, p.size()).mismatch(verify.slice(at, p.size())) >= 0) {
                    throw new PerftestException("read data mismatch: local slot " + slot + " (offset " + at
                            + ") differs from the server's buffer read back afterwards");
                }
            }
        } finally {
            region.deregister();
        }
        checks.append("; data: ").append(touched).append(" slot(s) of ").append(p.size())
                .append(" octets read back in one more Read of ").append(span).append(" octets and matched");
        return slotDigest(0);
    }

    /**
     * The placement check of a server that was written to (ib_write_bw) or sent to (ib_send_bw):
     * its receive half was filled with a known pattern before the run; each slot the run should
     * have used must have changed (for messages of 8 octets or more; the peer's data is random) and
     * every other octet must still hold the pattern. After Writes, whose arrival the client's "done"
     * on the other connection does not order, it waits up to the timeout for the slots to settle.
     */
    private String checkPlacement(boolean waitForWrites) {
        int base = layout.buffSize();
        int touched = layout.touchedSlots(p.iters());
        long deadline = System.nanoTime() + (waitForWrites ? timeoutNanos : 0);
        String problem;
        long previous = Long.MIN_VALUE;
        while (true) {
            VarHandle.acquireFence();
            problem = placementProblem(base, touched);
            long digest = slotDigest(base);
            if (problem == null && (!waitForWrites || digest == previous)) {
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("placement check of the receive half failed: " + problem);
            }
            previous = digest;
            sleep(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return "placement: " + touched + " slot(s) of " + p.size() + " octets at stride " + layout.stride()
                + " in the receive half" + (p.size() >= 8 ? " all changed" : "") + ", the other "
                + (layout.total() - base - (long) touched * p.size()) + " octets untouched";
    }

    private String placementProblem(int base, int touched) {
        int end = layout.total();
        int slot = 0;
        for (int at = base; at < end; ) {
            boolean inSlot = slot < touched && at == base + slot * layout.stride();
            if (inSlot) {
                if (p.size() >= 8) {
                    boolean changed = false;
                    for (int i = at; i < at + p.size() && !changed; i++) {
                        changed = data.get(i) != pattern(i);
                    }
                    if (!changed) {
                        return "slot " + slot + " (offset " + (at - base) + ") still holds the fill pattern";
                    }
                }
                at += p.size();
                slot++;
                continue;
            }
            if (data.get(at) != pattern(at)) {
                return "octet " + (at - base) + " of the receive half, outside the message slots, was overwritten";
            }
            at++;
        }
        return null;
    }

    /** The fill pattern of a server's receive half. */
    private static byte pattern(int index) {
        return (byte) (index * 0x9E + 0x5A ^ index >>> 8);
    }

    /** CRC-32C of the touched message slots of the half at {@code base}. */
    private long slotDigest(int base) {
        CRC32C crc = new CRC32C();
        int touched = p.latency() ? 1 : layout.touchedSlots(p.iters());
        for (int slot = 0; slot < touched; slot++) {
            crc.update(data.slice(base + slot * layout.stride(), p.size()));
        }
        return crc.getValue();
    }

    // ---------------------------------------------------------------------------------------------
    // Resources

    private void allocateBuffers() {
        data = ByteBuffer.allocateDirect(layout.total());
        int base = layout.buffSize();
        // Like perftest's random buffer (ib_write_lat: zeros); a server's receive half, from the
        // advertised vaddr on, holds a known pattern for the placement check.
        if (!p.latency()) {
            for (int i = 0; i < base; i++) {
                data.put(i, (byte) random.nextInt());
            }
            for (int i = base; i < layout.total(); i++) {
                data.put(i, server ? pattern(i) : (byte) random.nextInt());
            }
        }
        int access = switch (p.verb()) {
            case WRITE -> Access.LOCAL_WRITE | Access.REMOTE_WRITE;
            // perftest adds remote write for iWARP, whose Read sink is written remotely.
            case READ -> Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
            case SEND -> Access.LOCAL_WRITE;
        };
        dataRegion = pd.register(data, access);
        if (p.verb() == Verb.SEND) {
            credit = ByteBuffer.allocateDirect(8);
            creditRegion = pd.register(credit, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        }
    }

    private TestQp newTestQp() {
        CompletionQueue sendCq = rnic.createCq(p.txDepth() + 8);
        CompletionQueue receiveCq = rnic.createCq(Math.max(p.rxDepth(), 1) + 8);
        QpConfig config = new QpConfig(pd, sendCq, receiveCq).sendDepth(p.txDepth() + 2)
                .receiveDepth(Math.max(1, p.rxDepth())).ird(p.outReads()).ord(p.outReads());
        return new TestQp(rnic.createQp(config), sendCq, receiveCq);
    }

    private void postReceive(long k) {
        int offset = layout.buffSize() + layout.offset(k);
        test.qp().postReceive(new ReceiveWorkRequest(k, new Sge(dataRegion, offset, p.size())));
    }

    private PerftestResult finish(long operations, long completions, BwReport bandwidth, LatencyReport latencies,
            String checks, long digest) {
        finished = true;
        return new PerftestResult(p, server, peerVersion, local, remote, operations, completions, bandwidth,
                latencies, checks, digest);
    }

    /**
     * Disconnects the test connection, then the control connection; after a run, errors do not
     * matter. After a good run, the end that received the last message lets the sender see its
     * completion first: siw fails a work request whose last FPDU has gone out when the peer's FIN
     * comes in before it has retired it (its transmit path checks for a half-closed connection after
     * each segment: status 2, IBV_WC_LOC_QP_OP_ERR, perftest's "Bad wc status 2"; seen here on the
     * server's closing Send and on ib_write_lat's last Write).
     * <ul>
     *   <li>Bandwidth tests end with the server's Send on the control connection: the client
     *       disconnects the test connection at once, as perftest's client does, and waits for the
     *       server to close the control connection (perftest's server exits right away; jiwarp's
     *       closes it once the test connection is gone).</li>
     *   <li>ib_write_lat ends with Writes on the test connection: each end waits for the other to
     *       close it (the server for a second, the client for three: two jiwarp ends wait a
     *       second).</li>
     * </ul>
     */
    private void tearDown() {
        if (finished && test != null) {
            if (server) {
                await(test.qp().closeFuture(), SERVER_CLOSE_WAIT_NANOS);
            } else {
                if (p.latency()) {
                    await(test.qp().closeFuture(), CLIENT_CLOSE_WAIT_NANOS);
                }
                disconnect(test.qp());
                await(control.qp().closeFuture(), CLIENT_CLOSE_WAIT_NANOS);
            }
        }
        if (test != null) {
            disconnect(test.qp());
        }
        if (control != null) {
            disconnect(control.qp());
            control.deregister();
        }
        if (dataRegion != null) {
            dataRegion.deregister();
        }
        if (creditRegion != null) {
            creditRegion.deregister();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Output

    private void printTestInfo(int mtu) {
        if (!p.latency() && (p.noPeak() || p.verb() == Verb.SEND && server)) {
            // perftest (after 4.5-0.17, which says nothing) announces it so; the peak is reported as 0.
            out.accept(" WARNING: BW peak won't be measured in this run.");
        }
        out.accept(BwReport.RESULT_LINE);
        out.accept("                    " + p.verb().title() + (p.latency() ? " Latency Test" : " BW Test"));
        out.accept(" Dual-port       : OFF\t\tDevice         : jiwarp");
        out.accept(" Number of qps   : 1\t\tTransport type : IW");
        out.accept(" Connection type : RC\t\tUsing SRQ      : OFF");
        if (!server || p.latency()) {
            out.accept(" TX depth        : " + p.txDepth());
        }
        if (p.postList() > 1) {
            out.accept(" Post List       : " + p.postList());
        }
        if (p.verb() == Verb.SEND && server) {
            out.accept(" RX depth        : " + p.rxDepth());
        }
        if (!p.latency()) {
            out.accept(" CQ Moderation   : " + p.cqMod());
        }
        out.accept(" Mtu             : " + PerftestWire.mtuOctets(mtu) + "[B]");
        out.accept(" Link type       : Ethernet");
        out.accept(p.verb() == Verb.READ ? " Outstand reads  : " + p.outReads() : " Max inline data : 0[B]");
        out.accept(" rdma_cm QPs\t : ON");
        out.accept(" Data ex. method : rdma_cm");
        out.accept(BwReport.RESULT_LINE);
    }

    private void printReport(BwReport report) {
        out.accept(p.reportGbits() ? BwReport.HEADER_GBITS : BwReport.HEADER);
        out.accept(report.line(p.reportGbits()));
        out.accept(BwReport.RESULT_LINE);
    }

    /**
     * Why {@code jiwarp bench} reports more for the same operation, after a bandwidth report: a
     * perftest run times its first message to its last with no warm-up, so a short run measures the
     * Java compiler's first seconds as much as the stack; and its connections send FPDUs sized for
     * the default MSS, where bench sends 64 KiB FPDUs (as siw does with segmentation offload). With
     * the bench command that measures the same way.
     */
    String figuresNote() {
        String op = switch (p.verb()) {
            case WRITE -> "write";
            case READ -> "read";
            case SEND -> "send";
        };
        return "about these figures: like perftest's, they run from the first message to the last with no "
                + "warm-up, so a short run includes the Java compiler's first seconds, and this run's FPDUs are "
                + "sized for a " + org.jiwarp.mpa.MpaSettings.DEFAULT_EMSS + "-octet MSS (RFC 5044); jiwarp bench "
                + "warms up for 2 s and sends 64 KiB FPDUs, so it reports more for the same operation, and "
                + "'jiwarp bench --op " + op + " -s " + p.size() + " -n " + p.iters() + " -t " + p.txDepth() + " -Q "
                + p.cqMod() + " --warmup 0 --emss " + org.jiwarp.mpa.MpaSettings.DEFAULT_EMSS
                + "' measures as this run does";
    }

    /** {@code xchg_bw_reports}: five fields, each its own exchange, client first. */
    private BwReport exchangeReports(BwReport mine) {
        byte[][] fields = mine.fields();
        String[] names = {"report: size", "report: iterations", "report: peak", "report: average", "report: rate"};
        byte[][] theirs = new byte[fields.length][];
        for (int i = 0; i < fields.length; i++) {
            theirs[i] = control.exchange(names[i], fields[i], PerftestWire.REPORT_FIELD_LENGTH);
        }
        return BwReport.of(theirs);
    }

    private String opName() {
        return switch (p.verb()) {
            case WRITE -> "RDMA Writes";
            case READ -> "RDMA Reads";
            case SEND -> "Sends";
        };
    }

    // ---------------------------------------------------------------------------------------------
    // Waiting

    private int creditWord() {
        return (int) INT_LE.getVolatile(credit, CREDIT_WORD);
    }

    /** Waits until the peer's Write has put {@code value} at {@code index} (perftest spins on it). */
    private void awaitOctet(int index, byte value, String what) {
        long deadline = System.nanoTime() + timeoutNanos;
        int spins = 0;
        while (true) {
            VarHandle.acquireFence();
            if (data.get(index) == value) {
                return;
            }
            if (++spins < 2000) {
                Thread.onSpinWait();
                continue;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("timed out waiting for " + what + ": the octet at " + index + " holds "
                        + data.get(index) + ", not " + value + " (" + test.qp() + ")");
            }
            LockSupport.parkNanos(20_000);
        }
    }

    private WorkCompletion take(CompletionQueue cq, long nanos, String what) {
        try {
            WorkCompletion wc = cq.take(nanos, TimeUnit.NANOSECONDS);
            if (wc == null && what != null) {
                throw new PerftestException("timed out after " + TimeUnit.NANOSECONDS.toMillis(nanos)
                        + " ms waiting for " + what + " (" + test.qp() + ")");
            }
            return wc;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted waiting for " + what, e);
        }
    }

    private void expect(WorkCompletion wc, WcOpcode opcode, String what) {
        if (wc.status() != WcStatus.SUCCESS || wc.opcode() != opcode) {
            throw new PerftestException(what + " failed: " + (wc.status() != WcStatus.SUCCESS
                    ? org.jiwarp.tools.Failures.completion(wc) : "a " + org.jiwarp.tools.Failures.operation(wc.opcode())
                            + " completed where a " + org.jiwarp.tools.Failures.operation(opcode) + " was due")
                    + (test.qp().terminateReceived() != null
                            ? "; the peer sent a Terminate: " + test.qp().terminateReceived().describe() : "")
                    + (test.qp().terminateSent() != null
                            ? "; this end sent a Terminate: " + test.qp().terminateSent().describe() : ""));
        }
    }

    /** Disconnects unless the connection is already gone (the state machine ignores a late one). */
    private static void disconnect(QueuePair qp) {
        if (qp.state() == QpState.RTS || qp.state() == QpState.CLOSING) {
            qp.disconnect();
        }
        await(qp.closeFuture(), TimeUnit.SECONDS.toNanos(2));
    }

    private static void await(CompletableFuture<?> future, long nanos) {
        try {
            future.get(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // teardown: nothing to do about it
        }
    }

    private static void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted", e);
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s %s", p.program(), server ? "server" : "client");
    }
}
