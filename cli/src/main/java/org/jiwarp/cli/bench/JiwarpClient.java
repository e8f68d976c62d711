package org.jiwarp.cli.bench;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * The active end of {@code jiwarp bench} over jiwarp: one queue pair per connection, each with its
 * own registered buffer and completion queue, driven from completion call-backs on its event loop
 * (Write latency excepted: it polls memory, as {@code ib_write_lat} does).
 */
final class JiwarpClient implements BenchTransport {

    private final Rnic rnic;
    private final InetSocketAddress server;

    JiwarpClient(Rnic rnic, InetSocketAddress server) {
        this.rnic = rnic;
        this.server = server;
    }

    @Override
    public String name() {
        return "jiwarp";
    }

    @Override
    public List<Connection> connect(BenchSpec spec, int count, LongAdder progress, Limit limit) throws Exception {
        ProtectionDomain pd = rnic.allocatePd();
        List<CompletableFuture<Connection>> pending = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pending.add(connectOne(pd, spec, progress, limit));
        }
        List<Connection> connections = new ArrayList<>();
        for (CompletableFuture<Connection> future : pending) {
            connections.add(future.get());
        }
        return connections;
    }

    private CompletableFuture<Connection> connectOne(ProtectionDomain pd, BenchSpec spec, LongAdder progress,
            Limit limit) {
        int depth = spec.txDepth() + 2;
        CompletionQueue cq = rnic.createCq(2 * depth + 4);
        QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(depth).receiveDepth(depth)
                .ird(spec.readCredits()).ord(spec.readCredits()).rfc7306(spec.op().rfc7306()));
        // Write latency sends from the first half and polls the second, where the server writes back.
        boolean polled = spec.mode() == BenchMode.LAT && spec.op() == BenchOp.WRITE;
        // An atomic's result lands in octets 0 to 7; its check reads the server's value into 8 to 15.
        int length = polled ? 2 * spec.size() : spec.op().eightOctets() ? 16 : spec.size();
        MemoryRegion region = pd.register(ByteBuffer.allocateDirect(length),
                Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        BenchSpec sent = spec.withRemote(region.address() + (polled ? spec.size() : 0), region.stag());
        BenchPattern.fill(region.buffer(), 0, spec.size());
        return rnic.connect(qp, server, sent.encode()).thenApply(connected -> {
            long[] remote = BenchSpec.decodeBuffer(qp.parameters().peerPrivateData());
            Connection connection = spec.mode() == BenchMode.BW
                    ? new Stream(qp, cq, region, remote[0], (int) remote[1], spec, limit, progress)
                    : spec.op() == BenchOp.WRITE
                            ? new PolledWrites(qp, cq, region, remote[0], (int) remote[1], spec, limit, progress)
                            : new PingPong(qp, cq, region, remote[0], (int) remote[1], spec, limit, progress);
            qp.closeFuture().thenRun(region::deregister);
            return connection;
        });
    }

    /**
     * Checks the data once the run is over: after Writes and Sends, reads the server's buffer back
     * (it holds the last message) into the client's and compares; after Reads and echoes, compares
     * what arrived; after Write latency, compares the half the server wrote back (but its last
     * octet, the ping marker).
     */
    static CompletableFuture<Void> verify(QueuePair qp, CompletionQueue cq, MemoryRegion region, long remoteAddress,
            int rkey, BenchSpec spec) {
        int size = spec.size();
        boolean readBack = spec.mode() == BenchMode.BW && spec.op() != BenchOp.READ;
        int from = spec.mode() == BenchMode.LAT && spec.op() == BenchOp.WRITE ? size : 0;
        int length = from == 0 ? size : size - 1;
        CompletableFuture<Void> checked = new CompletableFuture<>();
        Runnable compare = () -> {
            int mismatch = BenchPattern.firstMismatch(region.buffer(), from, length);
            if (mismatch < 0) {
                checked.complete(null);
            } else {
                checked.completeExceptionally(new IllegalStateException("data mismatch after the " + spec.op()
                        .displayName() + " run at octet " + mismatch + " of " + length));
            }
        };
        if (!readBack) {
            compare.run();
            return checked;
        }
        region.buffer().setZero(0, size);
        cq.onCompletionLent(wc -> {
            if (wc.status() != WcStatus.SUCCESS) {
                checked.completeExceptionally(new IllegalStateException("reading the server's buffer back failed: " + wc));
            } else if (wc.workRequestId() == VERIFY_ID) {
                compare.run();
            }
        });
        qp.postSend(SendWorkRequest.read(VERIFY_ID, remoteAddress, rkey, new Sge(region, 0, size)));
        return checked;
    }

    private static final long VERIFY_ID = -2;

    /**
     * The atomic of a run, on the first 8 octets of the server's buffer, its result in the first 8
     * of the client's: fetch-and-add adds 1; compare-and-swap compares with and writes the
     * pattern's first 8 octets (so it always matches and leaves them: every one does the full
     * compare and write).
     */
    static SendWorkRequest atomic(BenchSpec spec, long id, long remoteAddress, int rkey, MemoryRegion region) {
        Sge result = new Sge(region, 0, 8);
        return spec.op() == BenchOp.FETCH_ADD ? SendWorkRequest.fetchAdd(id, remoteAddress, rkey, result, 1)
                : SendWorkRequest.compareSwap(id, remoteAddress, rkey, result, PATTERN_WORD, PATTERN_WORD);
    }

    /** The pattern's first 8 octets as a big-endian value: what the server's buffer starts with. */
    static final long PATTERN_WORD = patternWord();

    private static long patternWord() {
        long word = 0;
        for (int i = 0; i < 8; i++) {
            word = word << 8 | (BenchPattern.at(i) & 0xFF);
        }
        return word;
    }

    /**
     * Checks an atomic run by reading the server's 8 octets back: after {@code count}
     * fetch-and-adds of 1 they hold the pattern word plus {@code count}; after compare-and-swaps,
     * the pattern word.
     */
    static CompletableFuture<Void> verifyAtomics(QueuePair qp, CompletionQueue cq, MemoryRegion region,
            long remoteAddress, int rkey, BenchSpec spec, long count) {
        long expected = spec.op() == BenchOp.FETCH_ADD ? PATTERN_WORD + count : PATTERN_WORD;
        return verifyServerValue(qp, cq, region, remoteAddress, rkey, expected, count + " "
                + spec.op().displayName() + " operations");
    }

    /** Reads the server's first 8 octets into octets 8 to 15 of {@code region} and compares them with {@code expected}. */
    static CompletableFuture<Void> verifyServerValue(QueuePair qp, CompletionQueue cq, MemoryRegion region,
            long remoteAddress, int rkey, long expected, String after) {
        CompletableFuture<Void> checked = new CompletableFuture<>();
        cq.onCompletionLent(wc -> {
            if (wc.status() != WcStatus.SUCCESS) {
                checked.completeExceptionally(new IllegalStateException("reading the server's value back failed: "
                        + wc));
            } else if (wc.workRequestId() == VERIFY_ID) {
                long value = region.buffer().getLong(8);
                if (value == expected) {
                    checked.complete(null);
                } else {
                    checked.completeExceptionally(new IllegalStateException(String.format(
                            "after %s the server holds 0x%x, expected 0x%x", after, value, expected)));
                }
            }
        });
        qp.postSend(SendWorkRequest.read(VERIFY_ID, remoteAddress, rkey, new Sge(region, 8, 8)));
        return checked;
    }

    /** The bandwidth pattern over one queue pair. */
    private static final class Stream extends StreamPattern implements Connection {
        private static final long SYNC_ID = -1;
        private final QueuePair qp;
        private final CompletionQueue cq;
        private final MemoryRegion region;
        private final long remoteAddress;
        private final int rkey;
        private final SendWorkRequest[] requests;
        private final SendWorkRequest[] chain;
        private final SendWorkRequest syncRead;
        private int chained;

        Stream(QueuePair qp, CompletionQueue cq, MemoryRegion region, long remoteAddress, int rkey, BenchSpec spec,
                Limit limit, LongAdder progress) {
            super(spec, limit, progress);
            this.qp = qp;
            this.cq = cq;
            this.region = region;
            this.remoteAddress = remoteAddress;
            this.rkey = rkey;
            Sge whole = Sge.of(region);
            this.requests = new SendWorkRequest[spec.txDepth()];
            for (int i = 0; i < requests.length; i++) {
                requests[i] = switch (spec.op()) {
                    case WRITE -> SendWorkRequest.write(i, remoteAddress, rkey, whole);
                    case READ -> SendWorkRequest.read(i, remoteAddress, rkey, whole);
                    case SEND -> SendWorkRequest.send(i, whole);
                    case IMMEDIATE -> SendWorkRequest.immediateData(i, i);
                    default -> atomic(spec, i, remoteAddress, rkey, region);
                };
            }
            this.chain = new SendWorkRequest[spec.txDepth() + 1];
            this.syncRead = SendWorkRequest.read(SYNC_ID, remoteAddress, rkey, new Sge(region, 0, 1));
            cq.onCompletionLent(this::onCompletion);
        }

        private void onCompletion(WorkCompletion wc) {
            if (wc.status() != WcStatus.SUCCESS) {
                failed(new IllegalStateException("work request " + wc.workRequestId() + " failed: " + wc));
            } else if (wc.workRequestId() == SYNC_ID) {
                synced();
            } else {
                completed(wc.workRequestId());
            }
        }

        @Override
        void post(long index, boolean signaled) {
            SendWorkRequest wr = requests[(int) (index % requests.length)];
            chain[chained++] = wr.id(index).signaled(signaled);
        }

        @Override
        void sync() {
            chain[chained++] = syncRead;
        }

        @Override
        void flushPosts() {
            int count = chained;
            chained = 0;
            qp.postSend(chain, count);
        }

        @Override
        public void begin() {
            qp.execute(this::start);
        }

        @Override
        public CompletableFuture<Result> result() {
            return finished().thenApply(p -> new Result(p.posted, p.startNanos, p.endNanos, p.latency()));
        }

        @Override
        public CompletableFuture<Void> verify() {
            if (spec.op().atomic()) {
                return finished().thenCompose(p -> verifyAtomics(qp, cq, region, remoteAddress, rkey, spec, p.posted));
            }
            if (spec.op() == BenchOp.IMMEDIATE) {
                // The server's receives all start at its buffer: the last Immediate Data's 8 octets are there.
                return finished().thenCompose(p -> verifyServerValue(qp, cq, region, remoteAddress, rkey,
                        (p.posted - 1) % spec.txDepth(), p.posted + " Immediate Data messages"));
            }
            return JiwarpClient.verify(qp, cq, region, remoteAddress, rkey, spec);
        }

        @Override
        public void close() {
            qp.disconnect();
        }
    }

    /** Send or Read latency: each answer posts the next ping from the call-back. */
    private static final class PingPong extends PingPongPattern implements Connection {
        private final QueuePair qp;
        private final CompletionQueue cq;
        private final MemoryRegion region;
        private final SendWorkRequest ping;
        private final ReceiveWorkRequest receive;
        private final long remoteAddress;
        private final int rkey;

        PingPong(QueuePair qp, CompletionQueue cq, MemoryRegion region, long remoteAddress, int rkey, BenchSpec spec,
                Limit limit, LongAdder progress) {
            super(spec, limit, progress);
            this.qp = qp;
            this.cq = cq;
            this.region = region;
            Sge whole = Sge.of(region);
            this.remoteAddress = remoteAddress;
            this.rkey = rkey;
            this.ping = spec.op() == BenchOp.READ ? SendWorkRequest.read(0, remoteAddress, rkey, whole)
                    : spec.op().atomic() ? atomic(spec, 0, remoteAddress, rkey, region) : SendWorkRequest.send(0, whole);
            this.receive = new ReceiveWorkRequest(0, whole);
            cq.onCompletionLent(this::onCompletion);
            if (spec.op().received()) {
                qp.postReceive(receive);
            }
        }

        private void onCompletion(WorkCompletion wc) {
            if (wc.status() != WcStatus.SUCCESS) {
                failed(new IllegalStateException("work request failed: " + wc));
            } else if (wc.opcode() == WcOpcode.RECEIVE) {
                qp.postReceive(receive);
                pong();
            } else if (wc.opcode() == WcOpcode.RECEIVE_IMMEDIATE_DATA) {
                qp.postReceive(receive);
                // The server echoes the 8 octets of ping number count.
                if (wc.immediateData() != count) {
                    failed(new IllegalStateException("Immediate Data echo " + wc.immediateData() + ", expected "
                            + count));
                    return;
                }
                pong();
            } else if (wc.opcode() == WcOpcode.RDMA_READ || wc.opcode() == WcOpcode.ATOMIC_FETCH_ADD
                    || wc.opcode() == WcOpcode.ATOMIC_COMPARE_SWAP) {
                pong();
            }
        }

        @Override
        void ping(long index) {
            qp.postSend(spec.op() == BenchOp.IMMEDIATE ? SendWorkRequest.immediateData(index, index) : ping.id(index));
        }

        @Override
        public void begin() {
            qp.execute(this::start);
        }

        @Override
        public CompletableFuture<Result> result() {
            return finished().thenApply(p -> new Result(p.count, p.startNanos, p.endNanos, p.latency));
        }

        @Override
        public CompletableFuture<Void> verify() {
            if (spec.op().atomic()) {
                return finished().thenCompose(p -> verifyAtomics(qp, cq, region, remoteAddress, rkey, spec, p.count));
            }
            if (spec.op() == BenchOp.IMMEDIATE) {
                // Every echo was checked as it arrived (onCompletion).
                return finished().thenApply(p -> null);
            }
            return JiwarpClient.verify(qp, cq, region, 0, 0, spec);
        }

        @Override
        public void close() {
            qp.disconnect();
        }
    }

    /**
     * Write latency as {@code ib_write_lat}: each side writes a message with a new value in its last
     * octet and spins on the last octet of the message the peer writes back (the client sends from
     * the first half of its buffer and receives into the second).
     */
    private static final class PolledWrites extends PingPongPattern implements Connection {
        private final QueuePair qp;
        private final CompletionQueue cq;
        private final MemoryRegion region;
        private final SendWorkRequest write;
        private volatile boolean closed;

        PolledWrites(QueuePair qp, CompletionQueue cq, MemoryRegion region, long remoteAddress, int rkey,
                BenchSpec spec, Limit limit, LongAdder progress) {
            super(spec, limit, progress);
            this.qp = qp;
            this.cq = cq;
            this.region = region;
            this.write = SendWorkRequest.write(0, remoteAddress, rkey, new Sge(region, 0, spec.size()));
            cq.onCompletionLent(wc -> {
                if (wc.status() != WcStatus.SUCCESS) {
                    failed(new IllegalStateException("work request failed: " + wc));
                }
            });
        }

        /** The next ping to make, set by {@link #ping} (called from {@code pong()}), run by the loop. */
        private long next = -1;

        @Override
        void ping(long index) {
            next = index;
        }

        /** Pings until the pattern stops asking, on this thread (no recursion through pong()). */
        private void loop() {
            start();
            while (next >= 0) {
                long index = next;
                next = -1;
                byte value = WriteLatencyPoller.marker(index);
                region.buffer().setByte(spec.size() - 1, value);
                qp.postSend(write.id(index));
                if (!WriteLatencyPoller.await(region, 2 * spec.size() - 1, value, () -> closed || qp.state()
                        != org.jiwarp.rnic.QpState.RTS)) {
                    failed(new IllegalStateException("the connection closed during the run"));
                    return;
                }
                pong();
            }
        }

        @Override
        public void begin() {
            Thread thread = new Thread(this::loop, "jiwarp-write-lat-" + qp.number());
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public CompletableFuture<Result> result() {
            return finished().thenApply(p -> new Result(p.count, p.startNanos, p.endNanos, p.latency));
        }

        @Override
        public CompletableFuture<Void> verify() {
            return JiwarpClient.verify(qp, cq, region, 0, 0, spec);
        }

        @Override
        public void close() {
            closed = true;
            qp.disconnect();
        }
    }
}
