package org.jiwarp.benchmarks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * End to end: RDMA Writes between two {@link Rnic}s in this JVM over loopback TCP, through MPA,
 * DDP and RDMAP. One operation is a chain of 64 Writes of {@code size} octets (the last signaled),
 * then a 1-octet RDMA Read that the target can answer only after placing all of them, so the figure
 * is data placed, not data queued. The {@code writtenBytes} counter is payload per second. For the
 * comparison with plain TCP in one run, use {@code jiwarp bench --baseline tcp}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Dio.netty.leakDetection.level=disabled")
public class WriteBandwidthBenchmark {

    private static final int CHAIN = 64;

    @Param({"4096", "65536"})
    int size;

    @Param({"false", "true"})
    boolean crc;

    private Rnic server;
    private Rnic client;
    private RnicListener listener;
    private QueuePair qp;
    private CompletionQueue cq;
    private MemoryRegion local;
    private MemoryRegion remote;
    private SendWorkRequest[] chain;

    /** Payload octets written, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Payload {
        public long writtenBytes;

        @Setup(Level.Iteration)
        public void reset() {
            writtenBytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        MpaSettings mpa = RnicOptions.defaults().mpa().toBuilder().largeFpdus(true)
                .crc(crc ? CrcPolicy.REQUIRE : CrcPolicy.ACCEPT).build();
        server = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa));
        client = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa));
        ProtectionDomain serverPd = server.allocatePd();
        remote = serverPd.register(ByteBuffer.allocateDirect(size), Access.LOCAL_WRITE | Access.REMOTE_WRITE
                | Access.REMOTE_READ);
        listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), request -> {
            CompletionQueue serverCq = server.createCq(16);
            request.accept(server.createQp(new QpConfig(serverPd, serverCq, serverCq)), new byte[0]);
        });
        ProtectionDomain pd = client.allocatePd();
        cq = client.createCq(4 * CHAIN);
        qp = client.createQp(new QpConfig(pd, cq, cq).sendDepth(4 * CHAIN));
        local = pd.register(ByteBuffer.allocateDirect(size), Access.LOCAL_WRITE);
        client.connect(qp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
        chain = new SendWorkRequest[CHAIN + 1];
        for (int i = 0; i < CHAIN; i++) {
            chain[i] = SendWorkRequest.write(i, remote.address(), remote.rkey(), Sge.of(local)).signaled(false);
        }
        chain[CHAIN] = SendWorkRequest.read(CHAIN, remote.address(), remote.rkey(), new Sge(local, 0, 1));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
    }

    @Benchmark
    public WorkCompletion writeChain(Payload payload) throws InterruptedException {
        qp.postSend(chain, chain.length);
        WorkCompletion wc = cq.take(30, TimeUnit.SECONDS);
        if (wc == null || wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("write chain failed: " + wc);
        }
        payload.writtenBytes += (long) CHAIN * size;
        return wc;
    }
}
