package org.jiwarp.cli.bench;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;

/**
 * The passive end of {@code jiwarp bench}: accepts any number of queue pairs, each with the
 * {@link BenchSpec} its client sent, and serves it. For Writes and Reads it only offers a registered
 * buffer (named in the MPA Reply); for Sends it keeps receives posted, reposting each one from the
 * completion call-back on the event loop, so the receive queue never runs dry; for Send latency it
 * answers every message with one of the same size; for Write latency it watches the last octet of
 * its buffer, as perftest's {@code ib_write_lat} does, and writes back.
 */
public final class BenchServer implements AutoCloseable {

    private final Rnic rnic;
    private final ProtectionDomain pd;
    private final RnicListener listener;
    private final Consumer<String> log;
    private final AtomicLong served = new AtomicLong();

    public BenchServer(Rnic rnic, InetSocketAddress bind, Consumer<String> log) {
        this.rnic = rnic;
        this.pd = rnic.allocatePd();
        this.log = log;
        this.listener = rnic.listen(bind, this::onConnectRequest);
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** Queue pairs accepted so far. */
    public long served() {
        return served.get();
    }

    private void onConnectRequest(ConnectRequest request) {
        BenchSpec spec;
        try {
            spec = BenchSpec.decode(request.privateData());
        } catch (IllegalArgumentException e) {
            log.accept("rejecting " + request.remoteAddress() + ": " + e.getMessage());
            request.reject(new byte[0]);
            return;
        }
        int depth = spec.txDepth() + 2;
        CompletionQueue cq = rnic.createCq(2 * depth + 4);
        QueuePair qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(depth).receiveDepth(depth)
                .ird(spec.readCredits()).ord(spec.readCredits()).rfc7306(spec.op().rfc7306()));
        MemoryRegion region = pd.register(ByteBuffer.allocateDirect(spec.size()),
                Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC);
        Sge whole = Sge.of(region);
        // What the client's Reads fetch and check.
        BenchPattern.fill(region.buffer(), 0, spec.size());
        if (spec.op().received()) {
            ReceiveWorkRequest receive = new ReceiveWorkRequest(0, whole);
            SendWorkRequest echo = SendWorkRequest.send(1, whole);
            cq.onCompletionLent(wc -> {
                if (wc.status() != WcStatus.SUCCESS) {
                    return;
                }
                if (wc.opcode() == org.jiwarp.rnic.WcOpcode.RECEIVE) {
                    qp.postReceive(receive);
                    if (spec.mode() == BenchMode.LAT) {
                        qp.postSend(echo);
                    }
                } else if (wc.opcode() == org.jiwarp.rnic.WcOpcode.RECEIVE_IMMEDIATE_DATA) {
                    qp.postReceive(receive);
                    if (spec.mode() == BenchMode.LAT) {
                        // Echoes the 8 octets, which the client checks.
                        qp.postSend(SendWorkRequest.immediateData(1, wc.immediateData()));
                    }
                }
            });
            for (int i = 0; i < spec.txDepth() + 1; i++) {
                qp.postReceive(receive);
            }
        } else {
            cq.onCompletionLent(wc -> { });
        }
        served.incrementAndGet();
        request.accept(qp, BenchSpec.encodeBuffer(region.address(), region.stag(), region.length()))
                .whenComplete((connected, failure) -> {
                    if (failure != null) {
                        log.accept("accepting " + request.remoteAddress() + " failed: " + failure.getMessage());
                        region.deregister();
                        return;
                    }
                    if (spec.op() == BenchOp.WRITE && spec.mode() == BenchMode.LAT) {
                        WriteLatencyPoller.serve(qp, region, spec);
                    }
                    qp.closeFuture().thenRun(region::deregister);
                });
    }

    @Override
    public void close() {
        listener.close();
    }
}
