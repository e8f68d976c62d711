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
                .ird(spec.readCredits()).ord(spec.readCredits()));
        // Write latency sends from the first half and polls the second, where the server writes back.
        boolean polled = spec.mode() == BenchMode.LAT && spec.op() == BenchOp.WRITE;
        MemoryRegion region = pd.register(ByteBuffer.allocateDirect(polled ? 2 * spec.size() : spec.size()),
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
        cq.onCompletion(wc -> {
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
                };
            }
            this.chain = new SendWorkRequest[spec.txDepth() + 1];
            this.syncRead = SendWorkRequest.read(SYNC_ID, remoteAddress, rkey, new Sge(region, 0, 1));
            cq.onCompletion(this::onCompletion);
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
            return finished().thenApply(p -> new Result(p.posted, p.startNanos, p.endNanos, p.latency));
        }

        @Override
        public CompletableFuture<Void> verify() {
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

        PingPong(QueuePair qp, CompletionQueue cq, MemoryRegion region, long remoteAddress, int rkey, BenchSpec spec,
                Limit limit, LongAdder progress) {
            super(spec, limit, progress);
            this.qp = qp;
            this.cq = cq;
            this.region = region;
            Sge whole = Sge.of(region);
            this.ping = spec.op() == BenchOp.READ ? SendWorkRequest.read(0, remoteAddress, rkey, whole)
                    : SendWorkRequest.send(0, whole);
            this.receive = new ReceiveWorkRequest(0, whole);
            cq.onCompletion(this::onCompletion);
            if (spec.op() == BenchOp.SEND) {
                qp.postReceive(receive);
            }
        }

        private void onCompletion(WorkCompletion wc) {
            if (wc.status() != WcStatus.SUCCESS) {
                failed(new IllegalStateException("work request failed: " + wc));
            } else if (wc.opcode() == WcOpcode.RECEIVE) {
                qp.postReceive(receive);
                pong();
            } else if (wc.opcode() == WcOpcode.RDMA_READ) {
                pong();
            }
        }

        @Override
        void ping(long index) {
            qp.postSend(ping.id(index));
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
            cq.onCompletion(wc -> {
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
