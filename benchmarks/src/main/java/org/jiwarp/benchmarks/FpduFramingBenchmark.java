package org.jiwarp.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.FpduDeframer;
import org.jiwarp.mpa.UlpduSink;
import org.jiwarp.mpa.FpduFramer;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.Markers;
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
 * Throughput of the MPA FPDU framer and deframer in a Netty pipeline ({@link EmbeddedChannel}, so
 * pipeline and promise costs are included), over a stream of about 64 KiB of ULPDUs per operation.
 *
 * <p>{@code frame}: write each ULPDU (a retained duplicate of a pooled direct buffer) through
 * {@link FpduFramer}, flush, take and release the FPDUs. {@code deframe}: pass the same stream,
 * framed beforehand by {@link FpduWriter}, as one buffer through {@link FpduDeframer} and release the
 * ULPDUs. {@code deframeAndPlace}: the same stream through a deframer with a sink ({@link
 * FpduDeframer#deliverTo}; with CRC, each FPDU held until verified), whose sink takes a 14-octet header per ULPDU and copies each payload piece
 * straight from the input into a 1 MiB direct region, as the RNIC's tagged placement does: the one
 * pass over the octets that the receive path makes. With markers on, a short filler ULPDU makes the stream a multiple of 512 octets, so that
 * every operation starts at the same marker phase. The {@code ulpduBytes} counter is ULPDU payload
 * per second (GB/s = ulpduBytes / 1e9); the primary score is streams per second. Leak detection is
 * off in the fork, as its sampling would otherwise add noise.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Dio.netty.leakDetection.level=disabled")
public class FpduFramingBenchmark {

    private static final int STREAM_BYTES = 64 * 1024;

    @Param({"1448", "16384"})
    int ulpduLength;

    @Param({"false", "true"})
    boolean crc;

    @Param({"false", "true"})
    boolean markers;

    private ByteBuf[] ulpdus;
    private long streamPayload;
    private ByteBuf wire;
    private EmbeddedChannel framerChannel;
    private EmbeddedChannel deframerChannel;
    private EmbeddedChannel streamingChannel;
    private PlacingSink placing;

    /** ULPDU payload octets processed, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Payload {
        public long ulpduBytes;

        @Setup(Level.Iteration)
        public void reset() {
            ulpduBytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        SplittableRandom random = new SplittableRandom(42);
        List<Integer> lengths = new ArrayList<>();
        for (int n = 0; n + ulpduLength <= STREAM_BYTES; n += ulpduLength) {
            lengths.add(ulpduLength);
        }
        if (markers) {
            lengths.add(fillerLength(lengths));
        }
        ulpdus = new ByteBuf[lengths.size()];
        FpduWriter writer = new FpduWriter(crc, markers);
        ByteBuf framed = Unpooled.buffer();
        for (int i = 0; i < ulpdus.length; i++) {
            byte[] bytes = new byte[lengths.get(i)];
            random.nextBytes(bytes);
            ulpdus[i] = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
            streamPayload += bytes.length;
            writer.write(ulpdus[i], framed);
        }
        if (markers && writer.streamPosition() % 512 != 0) {
            throw new IllegalStateException("stream of " + writer.streamPosition() + " octets");
        }
        wire = PooledByteBufAllocator.DEFAULT.directBuffer(framed.readableBytes()).writeBytes(framed);
        framed.release();
        framerChannel = new EmbeddedChannel(new FpduFramer(crc, markers));
        deframerChannel = new EmbeddedChannel(new FpduDeframer(crc, markers));
        FpduDeframer streaming = new FpduDeframer(crc, markers);
        placing = new PlacingSink();
        streaming.deliverTo(placing);
        streamingChannel = new EmbeddedChannel(streaming);
    }

    /** Takes a tagged DDP header's worth, then copies each payload piece into a 1 MiB region, wrapping. */
    static final class PlacingSink implements UlpduSink {
        private static final int REGION = 1 << 20;
        final ByteBuf region = PooledByteBufAllocator.DEFAULT.directBuffer(REGION, REGION);
        private int at;
        int ulpdus;

        @Override
        public int headerLength(int ddpControl, int rdmapControl, int ulpduLength) {
            return 14;
        }

        @Override
        public void begin(ByteBuf header, int ulpduLength) {
            if (at + ulpduLength > REGION) {
                at = 0;
            }
        }

        @Override
        public void payload(ByteBuf source, int index, int length) {
            region.setBytes(at, source, index, length);
            at += length;
        }

        @Override
        public void end() {
            ulpdus++;
        }
    }

    /** A ULPDU length whose FPDU brings the stream of {@code lengths} to a multiple of 512 octets. */
    private static int fillerLength(List<Integer> lengths) {
        long position = 0;
        for (int length : lengths) {
            position += Markers.markedLength(position, Fpdu.length(length));
        }
        for (int filler = 0; filler < 2048; filler++) {
            if ((position + Markers.markedLength(position, Fpdu.length(filler))) % Markers.INTERVAL == 0) {
                return filler;
            }
        }
        throw new IllegalStateException("no filler ULPDU after " + position + " octets");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        framerChannel.finishAndReleaseAll();
        deframerChannel.finishAndReleaseAll();
        streamingChannel.finishAndReleaseAll();
        placing.region.release();
        for (ByteBuf ulpdu : ulpdus) {
            ulpdu.release();
        }
        wire.release();
    }

    @Benchmark
    public int frame(Payload payload) {
        for (ByteBuf ulpdu : ulpdus) {
            framerChannel.write(ulpdu.retainedDuplicate());
        }
        framerChannel.flush();
        int fpdus = 0;
        for (Object fpdu; (fpdu = framerChannel.readOutbound()) != null; fpdus++) {
            ((ByteBuf) fpdu).release();
        }
        payload.ulpduBytes += streamPayload;
        return fpdus;
    }

    @Benchmark
    public int deframe(Payload payload) {
        deframerChannel.writeInbound(wire.retainedDuplicate());
        int received = 0;
        for (Object ulpdu; (ulpdu = deframerChannel.readInbound()) != null; received++) {
            ((ByteBuf) ulpdu).release();
        }
        payload.ulpduBytes += streamPayload;
        return received;
    }

    @Benchmark
    public int deframeAndPlace(Payload payload) {
        streamingChannel.writeInbound(wire.retainedDuplicate());
        payload.ulpduBytes += streamPayload;
        return placing.ulpdus;
    }
}
