package org.jiwarp.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import org.jiwarp.rdmap.TaggedAccess;
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
 * DDP tagged placement (RFC 5041 sections 7.1-7.2): per segment, the STag lookup and the checks of
 * valid STag, protection domain, access and bounds ({@link TaggedAccess#checkSink}), then the copy
 * of the payload from a received buffer into the registered region ({@link TaggedPlacement#place}).
 * Segments walk through a 1 MiB region, so the copy is not served from one hot cache line. The
 * {@code payloadBytes} counter is payload per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Dio.netty.leakDetection.level=disabled")
public class PlacementBenchmark {

    private static final int REGION = 1 << 20;
    private static final int PD = 1;
    private static final long BASE = 0x7f00_0000_0000L;

    @Param({"64", "1448", "65514"})
    int segment;

    private StagTable table;
    private int stag;
    private ByteBuf received;
    private long offset;

    /** Payload octets placed, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Payload {
        public long payloadBytes;

        @Setup(Level.Iteration)
        public void reset() {
            payloadBytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        table = new StagTable(1 << 16);
        ByteBuf region = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(REGION));
        stag = table.register(PD, region, BASE, REGION, Access.LOCAL_WRITE | Access.REMOTE_WRITE).stag();
        received = PooledByteBufAllocator.DEFAULT.directBuffer(segment).writeZero(segment);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        received.release();
    }

    @Benchmark
    public TaggedBuffer placeOneSegment(Payload payload) {
        long to = BASE + offset;
        TaggedBuffer sink = TaggedAccess.checkSink(table, stag, to, segment, PD, Access.REMOTE_WRITE);
        TaggedPlacement.place(sink, to, received, received.readerIndex(), segment);
        offset += segment;
        if (offset + segment > REGION) {
            offset = 0;
        }
        payload.payloadBytes += segment;
        return sink;
    }
}
