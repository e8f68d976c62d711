package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.Sge;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The jiwarp under attack: one {@link Rnic} listening on loopback, one event loop thread, its
 * memory, and a {@link HealthyPair} beside every case.
 *
 * <p>Memory: an arena of {@value #ARENA_SIZE} octets filled with a known pattern. Each case
 * registers its regions ({@link Regions}) on slices of the arena, separated by unregistered guard
 * zones; after the case, every octet of the arena must still hold the pattern except the ranges the
 * case expects to be written ({@link #checkArena}), and the arena is refilled.
 *
 * <pre>
 *   0      4096          12288  16384   20480 24576   28672 32768   36864 ...
 *   | guard | write (ALL) | guard | RO    | guard | WO    | guard | recv  | guard | foreign | ...
 * </pre>
 *
 * <p>Connections are routed by the initiator's private data: {@link #expect} prepares a queue
 * pair for a token, and the listener accepts the connection carrying that token onto it (or holds
 * the request, for cases that need the application to be slow).
 */
final class JiwarpTarget implements AutoCloseable {

    static final int IRD = 4;
    static final int ORD = 4;
    static final int ALL = Access.ALL;
    static final int RECEIVE_SIZE = 64;
    static final long FIRST_RECEIVE_ID = 900;
    /** The largest inbound ULPDU the target accepts, so that an over-long FPDU can be sent. */
    static final int MAX_INBOUND_ULPDU = 16384;
    /** Short, so that the timeout cases are quick; long enough for a cold JVM's first connection. */
    static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1000);
    static final Duration REPLY_TIMEOUT = Duration.ofMillis(1000);

    static final int REGION_LENGTH = 4096;
    static final int WRITE_OFFSET = 4096;
    static final int WRITE_LENGTH = 8192;
    static final int READ_ONLY_OFFSET = 16384;
    static final int WRITE_ONLY_OFFSET = 24576;
    static final int RECEIVE_OFFSET = 32768;
    static final int FOREIGN_OFFSET = 40960;
    static final int INVALIDATED_OFFSET = 49152;
    static final int DEREGISTERED_OFFSET = 57344;
    static final int SHARED_OFFSET = 65536;
    static final int SINK_OFFSET = 73728;
    static final int ARENA_SIZE = 86016;
    /** The source of the Read that holds the IRD full: bigger than a socket buffer. */
    static final int BIG_SOURCE_SIZE = 8 << 20;

    final MpaSettings settings;
    final Rnic rnic;
    final Rnic clientRnic;
    final ProtectionDomain pd;
    final ProtectionDomain otherPd;
    final RnicListener listener;
    final MemoryRegion bigSource;
    private final ByteBuffer arena = ByteBuffer.allocateDirect(ARENA_SIZE);
    private final Map<String, Served> pending = new ConcurrentHashMap<>();
    /** MPA setup failures the live listener reported, by the raw peer's port. */
    private final Map<Integer, CompletableFuture<SetupFailure>> setupFailures = new ConcurrentHashMap<>();

    /** An MPA setup failure as the listener reported it. */
    record SetupFailure(TerminateError error, String reason) {
    }
    private HealthyPair healthy;

    JiwarpTarget(MpaSettings settings) {
        this.settings = settings;
        rnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(settings));
        clientRnic = Rnic.open(RnicOptions.defaults().threads(1)
                .mpa(MpaSettings.builder().replyTimeout(REPLY_TIMEOUT).rtrOffers(EnumSet.of(RtrType.WRITE)).build()));
        pd = rnic.allocatePd();
        otherPd = rnic.allocatePd();
        fillArena();
        bigSource = pd.register(ByteBuffer.allocateDirect(BIG_SOURCE_SIZE), Access.REMOTE_READ);
        listener = rnic.listen(new InetSocketAddress("127.0.0.1", 0), this::onConnectRequest)
                .onSetupFailure((remote, error, reason) -> setupFailures.computeIfAbsent(remote.getPort(),
                        port -> new CompletableFuture<>()).complete(new SetupFailure(error, reason)));
    }

    /** The default target: CRC when asked, markers when asked, short startup timeouts. */
    static MpaSettings plainSettings() {
        return MpaSettings.builder().requestTimeout(REQUEST_TIMEOUT).replyTimeout(REPLY_TIMEOUT)
                .maxInboundUlpdu(MAX_INBOUND_ULPDU).rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ)).build();
    }

    /** The setup failure the listener reported for the connection from {@code peerPort}, or {@code null} after {@code millis}. */
    SetupFailure awaitSetupFailure(int peerPort, long millis) throws InterruptedException {
        try {
            return setupFailures.computeIfAbsent(peerPort, port -> new CompletableFuture<>())
                    .get(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return null;
        } finally {
            setupFailures.remove(peerPort);
        }
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    synchronized HealthyPair healthy() throws Exception {
        for (int attempt = 1; healthy == null; attempt++) {
            try {
                healthy = new HealthyPair(this, clientRnic);
            } catch (java.util.concurrent.ExecutionException e) {
                // A cold JVM may miss the short startup timeouts once; the healthy pair is not under test.
                if (attempt == 3) {
                    throw e;
                }
            }
        }
        return healthy;
    }

    private void onConnectRequest(ConnectRequest request) {
        String token = new String(request.privateData(), StandardCharsets.US_ASCII);
        Served served = pending.remove(token);
        if (served == null) {
            request.reject("who?".getBytes(StandardCharsets.US_ASCII));
            return;
        }
        served.request = request;
        if (served.hold) {
            served.held.complete(request);
            return;
        }
        request.accept(served.qp, "ok".getBytes(StandardCharsets.US_ASCII)).whenComplete((qp, error) -> {
            if (error != null) {
                served.established.completeExceptionally(error);
            } else {
                served.established.complete(qp);
            }
        });
    }

    /**
     * Prepares the queue pair that takes the connection carrying {@code token}, with
     * {@code receives} receives of {@value #RECEIVE_SIZE} octets posted in the case's receive
     * region (work request ids 900, 901, ...).
     *
     * @param hold keep the request undecided (the application is slow)
     */
    Served expect(String token, Regions regions, int receives, boolean hold) {
        CompletionQueue cq = rnic.createCq(1 << 10);
        QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).ird(IRD).ord(ORD).rfc7306(true));
        for (int i = 0; i < receives; i++) {
            qp.postReceive(new ReceiveWorkRequest(FIRST_RECEIVE_ID + i,
                    new Sge(regions.receive, (long) i * RECEIVE_SIZE, RECEIVE_SIZE)));
        }
        Served served = new Served(token, qp, cq, hold);
        pending.put(token, served);
        return served;
    }

    /** Forgets a prepared queue pair that no connection took. */
    void forget(Served served) {
        pending.remove(served.token);
    }

    /** A server queue pair prepared for one connection. */
    static final class Served {
        final String token;
        final QueuePair qp;
        final CompletionQueue cq;
        final boolean hold;
        final CompletableFuture<QueuePair> established = new CompletableFuture<>();
        final CompletableFuture<ConnectRequest> held = new CompletableFuture<>();
        volatile ConnectRequest request;

        Served(String token, QueuePair qp, CompletionQueue cq, boolean hold) {
            this.token = token;
            this.qp = qp;
            this.cq = cq;
            this.hold = hold;
        }

        QueuePair awaitEstablished() throws Exception {
            return established.get(10, TimeUnit.SECONDS);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Memory

    private static byte patternAt(int index) {
        return (byte) (index * 7 + 3);
    }

    private void fillArena() {
        for (int i = 0; i < ARENA_SIZE; i++) {
            arena.put(i, patternAt(i));
        }
    }

    private ByteBuffer slice(int offset, int length) {
        return arena.duplicate().position(offset).limit(offset + length).slice();
    }

    /** A range of arena octets a case may change. */
    record Range(int offset, int length) {
    }

    /**
     * Fails unless every arena octet outside {@code allowed} still holds the pattern; then refills
     * the arena for the next case.
     */
    void checkArena(List<Range> allowed) {
        try {
            List<String> changed = new ArrayList<>();
            for (int i = 0; i < ARENA_SIZE; i++) {
                if (arena.get(i) != patternAt(i) && !inside(allowed, i)) {
                    int start = i;
                    while (i < ARENA_SIZE && arena.get(i) != patternAt(i) && !inside(allowed, i)) {
                        i++;
                    }
                    changed.add(String.format("[%d, %d) (%s)", start, i, area(start)));
                }
            }
            if (!changed.isEmpty()) {
                fail("registered or guard memory outside the case's target changed: " + changed);
            }
        } finally {
            fillArena();
        }
    }

    private static boolean inside(List<Range> allowed, int index) {
        for (Range r : allowed) {
            if (index >= r.offset && index < r.offset + r.length) {
                return true;
            }
        }
        return false;
    }

    private static String area(int offset) {
        int[] starts = {WRITE_OFFSET, READ_ONLY_OFFSET, WRITE_ONLY_OFFSET, RECEIVE_OFFSET, FOREIGN_OFFSET,
            INVALIDATED_OFFSET, DEREGISTERED_OFFSET, SHARED_OFFSET, SINK_OFFSET};
        String[] names = {"write", "read-only", "write-only", "receive", "foreign", "invalidated", "deregistered",
            "shared", "sink"};
        for (int i = 0; i < starts.length; i++) {
            int length = starts[i] == WRITE_OFFSET ? WRITE_LENGTH : REGION_LENGTH;
            if (offset >= starts[i] && offset < starts[i] + length) {
                return names[i] + " region";
            }
        }
        return "guard zone";
    }

    /** Registers a case's regions on the arena. */
    Regions newRegions() {
        return new Regions();
    }

    /**
     * The regions of one case, registered fresh (so that invalidations do not leak into the next
     * case) and deregistered by {@link #close()}.
     */
    final class Regions implements AutoCloseable {
        final MemoryRegion write = pd.register(slice(WRITE_OFFSET, WRITE_LENGTH), ALL);
        final MemoryRegion readOnly = pd.register(slice(READ_ONLY_OFFSET, REGION_LENGTH), Access.REMOTE_READ);
        final MemoryRegion writeOnly = pd.register(slice(WRITE_ONLY_OFFSET, REGION_LENGTH), Access.REMOTE_WRITE);
        final MemoryRegion receive = pd.register(slice(RECEIVE_OFFSET, REGION_LENGTH), Access.LOCAL_WRITE);
        final MemoryRegion foreign = otherPd.register(slice(FOREIGN_OFFSET, REGION_LENGTH), ALL);
        final MemoryRegion invalidated = pd.register(slice(INVALIDATED_OFFSET, REGION_LENGTH), ALL);
        final MemoryRegion shared = pd.register(slice(SHARED_OFFSET, REGION_LENGTH), ALL);
        final MemoryRegion sink = pd.register(slice(SINK_OFFSET, REGION_LENGTH), Access.LOCAL_WRITE);
        /** The STag of a region registered and then deregistered. */
        final int deregisteredStag;
        final long deregisteredAddress;

        Regions() {
            invalidated.invalidate();
            MemoryRegion gone = pd.register(slice(DEREGISTERED_OFFSET, REGION_LENGTH), ALL);
            deregisteredStag = gone.stag();
            deregisteredAddress = gone.address();
            gone.deregister();
        }

        /** The arena range of {@code length} octets at {@code offset} into the write region. */
        Range inWrite(long offset, int length) {
            return new Range(WRITE_OFFSET + (int) offset, length);
        }

        /** The arena range of receive {@code index}'s first {@code length} octets. */
        Range inReceive(int index, int length) {
            return new Range(RECEIVE_OFFSET + index * RECEIVE_SIZE, length);
        }

        Range inSink(long offset, int length) {
            return new Range(SINK_OFFSET + (int) offset, length);
        }

        /** The payload octets a case wrote at {@code offset} of the write region, as they must read now. */
        boolean writeRegionHolds(long offset, byte[] expected) {
            ByteBuf memory = write.buffer();
            for (int i = 0; i < expected.length; i++) {
                if (memory.getByte((int) offset + i) != expected[i]) {
                    return false;
                }
            }
            return true;
        }

        /** Whether receive {@code index} begins with {@code expected}. */
        boolean receiveHolds(int index, byte[] expected) {
            ByteBuf memory = receive.buffer();
            for (int i = 0; i < expected.length; i++) {
                if (memory.getByte(index * RECEIVE_SIZE + i) != expected[i]) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void close() {
            for (MemoryRegion r : new MemoryRegion[] {write, readOnly, writeOnly, receive, foreign, invalidated, shared,
                sink}) {
                r.deregister();
            }
        }
    }

    @Override
    public void close() {
        listener.close();
        clientRnic.close();
        rnic.close();
    }

    /** A copy of octets, for messages. */
    static String hex(byte[] bytes) {
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        try {
            return io.netty.buffer.ByteBufUtil.hexDump(b);
        } finally {
            b.release();
        }
    }
}
