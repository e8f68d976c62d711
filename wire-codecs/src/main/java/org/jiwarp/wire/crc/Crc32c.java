package org.jiwarp.wire.crc;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * A reusable CRC-32C accumulator over {@link ByteBuf} ranges, one per connection direction.
 *
 * <p>Backed by {@link CRC32C} (an intrinsic on current JVMs) unless {@code -Djiwarp.crc32c=table}
 * selects the pure-Java {@link Crc32cTable}. Reading a range never moves the buffer's indices and
 * allocates nothing for array-backed or single-NIO-buffer buffers; composite buffers are walked
 * component by component.
 *
 * <p>Not thread-safe: each FPDU framer or deframer owns one.
 */
public final class Crc32c {

    /** {@code true} when the pure-Java table implementation is in use. */
    public static final boolean TABLE_FALLBACK = "table".equalsIgnoreCase(System.getProperty("jiwarp.crc32c"));

    private final CRC32C jdk;
    private int register = Crc32cTable.INITIAL;

    /** An accumulator on the default implementation. */
    public Crc32c() {
        this(TABLE_FALLBACK);
    }

    /** An accumulator on the table implementation when {@code table}, else on {@link CRC32C}. */
    public Crc32c(boolean table) {
        this.jdk = table ? null : new CRC32C();
    }

    /** Starts a new CRC. */
    public Crc32c reset() {
        if (jdk != null) {
            jdk.reset();
        } else {
            register = Crc32cTable.INITIAL;
        }
        return this;
    }

    /** Adds {@code length} bytes of {@code buf} starting at absolute index {@code index}. */
    public Crc32c update(ByteBuf buf, int index, int length) {
        if (length == 0) {
            return this;
        }
        if (buf instanceof io.netty.buffer.CompositeByteBuf) {
            // Component by component: no array of NIO views for the whole range.
            io.netty.buffer.CompositeByteBuf composite = (io.netty.buffer.CompositeByteBuf) buf;
            for (int i = composite.toComponentIndex(index); length > 0; i++) {
                ByteBuf part = composite.internalComponent(i);
                int offset = index - composite.toByteIndex(i);
                int n = Math.min(length, part.readableBytes() - offset);
                update(part, part.readerIndex() + offset, n);
                index += n;
                length -= n;
            }
        } else if (buf.hasArray()) {
            update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            update(buf.internalNioBuffer(index, length));
        } else {
            for (ByteBuffer part : buf.nioBuffers(index, length)) {
                update(part);
            }
        }
        return this;
    }

    /** Adds {@code length} bytes of {@code bytes} from {@code offset}. */
    public Crc32c update(byte[] bytes, int offset, int length) {
        if (jdk != null) {
            jdk.update(bytes, offset, length);
        } else {
            register = Crc32cTable.update(register, bytes, offset, length);
        }
        return this;
    }

    /** Adds one byte. */
    public Crc32c update(int b) {
        if (jdk != null) {
            jdk.update(b);
        } else {
            register = Crc32cTable.update(register, b);
        }
        return this;
    }

    /** Adds the remaining bytes of {@code buffer}, consuming them (its position moves to its limit). */
    public Crc32c update(ByteBuffer buffer) {
        if (jdk != null) {
            jdk.update(buffer);
        } else if (buffer.hasArray()) {
            register = Crc32cTable.update(register, buffer.array(), buffer.arrayOffset() + buffer.position(),
                    buffer.remaining());
            buffer.position(buffer.limit());
        } else {
            while (buffer.hasRemaining()) {
                register = Crc32cTable.update(register, buffer.get());
            }
        }
        return this;
    }

    /** The CRC-32C of everything added since the last {@link #reset()}. */
    public int value() {
        return jdk != null ? (int) jdk.getValue() : Crc32cTable.finish(register);
    }

    /** One-shot CRC-32C of a buffer range (allocates an accumulator: not for per-FPDU code). */
    public static int compute(ByteBuf buf, int index, int length) {
        return new Crc32c().update(buf, index, length).value();
    }

    /** One-shot CRC-32C of an array range. */
    public static int compute(byte[] bytes, int offset, int length) {
        return new Crc32c().update(bytes, offset, length).value();
    }
}
