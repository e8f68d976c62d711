package org.jiwarp.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.crc.Crc32c;
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
 * CRC-32C over one FPDU-sized direct buffer: the JDK intrinsic ({@code java.util.zip.CRC32C})
 * against the pure-Java table fallback. Reports operations per second; multiply by {@code size}
 * for bytes per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class Crc32cBenchmark {

    @Param({"64", "1448", "65536"})
    int size;

    private ByteBuf buffer;
    private final Crc32c jdk = new Crc32c(false);
    private final Crc32c table = new Crc32c(true);

    @Setup(Level.Trial)
    public void setUp() {
        buffer = PooledByteBufAllocator.DEFAULT.directBuffer(size);
        byte[] bytes = new byte[size];
        ThreadLocalRandom.current().nextBytes(bytes);
        buffer.writeBytes(bytes);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        buffer.release();
    }

    @Benchmark
    public int jdkIntrinsic() {
        return jdk.reset().update(buffer, buffer.readerIndex(), size).value();
    }

    @Benchmark
    public int tableFallback() {
        return table.reset().update(buffer, buffer.readerIndex(), size).value();
    }
}
