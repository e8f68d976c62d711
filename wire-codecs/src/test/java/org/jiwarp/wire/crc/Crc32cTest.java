package org.jiwarp.wire.crc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * CRC-32C against published vectors (RFC 3720 appendix B.4, the iwarp notes) and against
 * {@link CRC32C} over every buffer shape the framers meet.
 */
class Crc32cTest {

    private static byte[] filled(int length, int value) {
        byte[] bytes = new byte[length];
        java.util.Arrays.fill(bytes, (byte) value);
        return bytes;
    }

    private static byte[] incrementing() {
        byte[] bytes = new byte[32];
        for (int i = 0; i < 32; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }

    private static byte[] decrementing() {
        byte[] bytes = new byte[32];
        for (int i = 0; i < 32; i++) {
            bytes[i] = (byte) (31 - i);
        }
        return bytes;
    }

    private static void assertVector(int expected, byte[] input) {
        assertEquals(expected, Crc32cTable.compute(input), "table");
        assertEquals(expected, new Crc32c(true).update(input, 0, input.length).value(), "Crc32c(table)");
        assertEquals(expected, new Crc32c(false).update(input, 0, input.length).value(), "Crc32c(jdk)");
        assertEquals(expected, Crc32c.compute(input, 0, input.length), "Crc32c.compute");
        CRC32C jdk = new CRC32C();
        jdk.update(input);
        assertEquals(expected, (int) jdk.getValue(), "java.util.zip.CRC32C (sanity of the vector)");
        ByteBuf heap = Unpooled.buffer(input.length);
        ByteBuf direct = Unpooled.directBuffer(input.length);
        try {
            heap.writeBytes(input);
            direct.writeBytes(input);
            for (boolean table : new boolean[] {false, true}) {
                assertEquals(expected, new Crc32c(table).update(heap, 0, input.length).value(), "heap " + table);
                assertEquals(expected, new Crc32c(table).update(direct, 0, input.length).value(), "direct " + table);
            }
            assertEquals(expected, Crc32c.compute(direct, 0, input.length));
        } finally {
            heap.release();
            direct.release();
        }
    }

    @Test
    void thirtyTwoZeros() {
        assertVector(0x8A9136AA, new byte[32]);
    }

    @Test
    void checkString() {
        assertVector(0xE3069283, "123456789".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void rfc3720ThirtyTwoOnes() {
        assertVector(0x62A8AB43, filled(32, 0xFF));
    }

    @Test
    void rfc3720Incrementing() {
        assertVector(0x46DD794E, incrementing());
    }

    @Test
    void rfc3720Decrementing() {
        assertVector(0x113FDB5C, decrementing());
    }

    @Test
    void emptyInputIsZero() {
        assertVector(0, new byte[0]);
        ByteBuf empty = Unpooled.buffer(0);
        try {
            assertEquals(0, new Crc32c(true).update(empty, 0, 0).value());
            assertEquals(0, new Crc32c(false).update(empty, 0, 0).value());
        } finally {
            empty.release();
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void resetStartsOver(boolean table) {
        Crc32c crc = new Crc32c(table);
        crc.update(filled(100, 0x5A), 0, 100);
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertEquals(0xE3069283, crc.reset().update(check, 0, check.length).value());
        assertEquals(0, crc.reset().value());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void singleByteUpdatesMatchArrayUpdate(boolean table) {
        Crc32c crc = new Crc32c(table);
        for (byte b : "123456789".getBytes(StandardCharsets.US_ASCII)) {
            crc.update(b);
        }
        assertEquals(0xE3069283, crc.value());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void byteBufferUpdateConsumesIt(boolean table) {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer heap = ByteBuffer.wrap(check);
        ByteBuffer direct = ByteBuffer.allocateDirect(check.length).put(check).flip();
        assertEquals(0xE3069283, new Crc32c(table).update(heap).value());
        assertEquals(0xE3069283, new Crc32c(table).update(direct).value());
        assertEquals(heap.limit(), heap.position());
        assertEquals(direct.limit(), direct.position());
    }

    @Test
    void allImplementationsAgreeOnArrays() {
        Property.forAll("crc32c implementations agree on arrays", random -> {
            byte[] data = Property.bytes(random, random.nextInt(2049));
            int expected = jdk(data, 0, data.length);
            assertEquals(expected, Crc32cTable.compute(data), "Crc32cTable.compute");
            assertEquals(expected, new Crc32c(false).update(data, 0, data.length).value(), "Crc32c(jdk)");
            assertEquals(expected, new Crc32c(true).update(data, 0, data.length).value(), "Crc32c(table)");
            int from = random.nextInt(data.length + 1);
            int length = random.nextInt(data.length - from + 1);
            assertEquals(jdk(data, from, length), Crc32c.compute(data, from, length), "sub-range");
        });
    }

    /** The buffer shapes a framer sees, each holding {@code data} at absolute index {@code offset}. */
    private enum Shape { HEAP, HEAP_SLICE, DIRECT, DIRECT_SLICE, POOLED_HEAP, POOLED_DIRECT, READ_ONLY, COMPOSITE,
        COMPOSITE_ONE }

    @Test
    void allImplementationsAgreeOnByteBufs() {
        Shape[] shapes = Shape.values();
        Property.forAll("crc32c over ByteBuf shapes", random -> {
            byte[] data = Property.bytes(random, random.nextInt(2049));
            int prefix = random.nextInt(40);
            int suffix = random.nextInt(40);
            Shape shape = shapes[random.nextInt(shapes.length)];
            ByteBuf buf = build(random, shape, prefix, data, suffix);
            try {
                int readerIndex = random.nextInt(prefix + 1);
                buf.readerIndex(readerIndex);
                int writerIndex = buf.writerIndex();
                int expected = jdk(data, 0, data.length);
                int viaJdk = new Crc32c(false).update(buf, prefix, data.length).value();
                int viaTable = new Crc32c(true).update(buf, prefix, data.length).value();
                assertEquals(expected, viaJdk, () -> shape + " jdk");
                assertEquals(expected, viaTable, () -> shape + " table");
                assertEquals(readerIndex, buf.readerIndex(), () -> shape + ": update moved readerIndex");
                assertEquals(writerIndex, buf.writerIndex(), () -> shape + ": update moved writerIndex");

                // Incremental over a random split of the range equals one shot, for both implementations.
                boolean table = random.nextBoolean();
                Crc32c incremental = new Crc32c(table);
                int index = prefix;
                for (int chunk : Property.split(random, data.length, 1 + random.nextInt(600))) {
                    incremental.update(buf, index, chunk);
                    index += chunk;
                }
                assertEquals(expected, incremental.value(), () -> shape + " incremental, table=" + table);
                assertEquals(readerIndex, buf.readerIndex());
                assertEquals(writerIndex, buf.writerIndex());

                // A reused accumulator after reset gives the same, on a random sub-range too.
                int from = random.nextInt(data.length + 1);
                int length = random.nextInt(data.length - from + 1);
                assertEquals(jdk(data, from, length), incremental.reset().update(buf, prefix + from, length).value(),
                        () -> shape + " sub-range");
            } finally {
                buf.release();
            }
        });
    }

    private static ByteBuf build(SplittableRandom random, Shape shape, int prefix, byte[] data, int suffix) {
        byte[] whole = new byte[prefix + data.length + suffix];
        for (int i = 0; i < prefix; i++) {
            whole[i] = (byte) random.nextInt(256);
        }
        System.arraycopy(data, 0, whole, prefix, data.length);
        for (int i = prefix + data.length; i < whole.length; i++) {
            whole[i] = (byte) random.nextInt(256);
        }
        switch (shape) {
            case HEAP: {
                return Unpooled.buffer(whole.length).writeBytes(whole);
            }
            case HEAP_SLICE: {
                // A slice whose array offset is not zero.
                int lead = 1 + random.nextInt(16);
                ByteBuf parent = Unpooled.buffer(lead + whole.length).writerIndex(lead).writeBytes(whole);
                return parent.slice(lead, whole.length);
            }
            case DIRECT: {
                return Unpooled.directBuffer(whole.length).writeBytes(whole);
            }
            case DIRECT_SLICE: {
                int lead = 1 + random.nextInt(16);
                ByteBuf parent = Unpooled.directBuffer(lead + whole.length).writerIndex(lead).writeBytes(whole);
                return parent.slice(lead, whole.length);
            }
            case POOLED_HEAP: {
                // Pooled heap buffers sit at a non-zero offset in their chunk's array.
                return PooledByteBufAllocator.DEFAULT.heapBuffer(whole.length).writeBytes(whole);
            }
            case POOLED_DIRECT: {
                return PooledByteBufAllocator.DEFAULT.directBuffer(whole.length).writeBytes(whole);
            }
            case READ_ONLY: {
                // No accessible array: the heap bytes arrive as a read-only NIO buffer.
                return Unpooled.buffer(whole.length).writeBytes(whole).asReadOnly();
            }
            case COMPOSITE_ONE: {
                CompositeByteBuf composite = Unpooled.compositeBuffer();
                ByteBuf part = random.nextBoolean() ? Unpooled.buffer(whole.length)
                        : Unpooled.directBuffer(whole.length);
                return composite.addComponent(true, part.writeBytes(whole));
            }
            case COMPOSITE:
            default: {
                CompositeByteBuf composite = Unpooled.compositeBuffer(1024);
                int at = 0;
                int parts = 1 + random.nextInt(16);
                int maxChunk = Math.max(1, 2 * whole.length / parts);
                for (int chunk : Property.split(random, whole.length, maxChunk)) {
                    ByteBuf part = random.nextBoolean() ? Unpooled.buffer(chunk) : Unpooled.directBuffer(chunk);
                    composite.addComponent(true, part.writeBytes(whole, at, chunk));
                    at += chunk;
                }
                return composite;
            }
        }
    }

    private static int jdk(byte[] data, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(data, offset, length);
        return (int) crc.getValue();
    }
}
