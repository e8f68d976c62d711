package org.jiwarp.conformance.fuzz;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * Reads a fuzzer's {@code byte[]} front to back as small unsigned fields, returning zeros once it
 * runs out, so that a fuzz target is a plain function of its bytes and a seed can be written field
 * by field with {@link Builder} (Jazzer's {@code FuzzedDataProvider} takes numbers from the back and
 * bytes from the front, which makes hand-made seeds hard to read).
 */
public final class FuzzInput {

    private final byte[] data;
    private int at;

    public FuzzInput(byte[] data) {
        this.data = data;
    }

    public int remaining() {
        return data.length - at;
    }

    public boolean exhausted() {
        return at >= data.length;
    }

    public int u8() {
        return at < data.length ? data[at++] & 0xFF : 0;
    }

    public int u16() {
        return u8() << 8 | u8();
    }

    public long u32() {
        return (long) u16() << 16 | u16();
    }

    public long u64() {
        return u32() << 32 | u32();
    }

    /** Up to {@code n} octets (fewer when the input runs out). */
    public byte[] bytes(int n) {
        int take = Math.max(0, Math.min(n, remaining()));
        byte[] out = Arrays.copyOfRange(data, at, at + take);
        at += take;
        return out;
    }

    /** Every octet left. */
    public byte[] rest() {
        return bytes(remaining());
    }

    /** Writes seeds in the order {@link FuzzInput} reads them. */
    public static final class Builder {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        public Builder u8(int value) {
            out.write(value);
            return this;
        }

        public Builder u16(int value) {
            return u8(value >>> 8).u8(value);
        }

        public Builder u32(long value) {
            return u16((int) (value >>> 16)).u16((int) value);
        }

        public Builder u64(long value) {
            return u32(value >>> 32).u32(value);
        }

        public Builder bytes(byte[] bytes) {
            out.writeBytes(bytes);
            return this;
        }

        public byte[] build() {
            return out.toByteArray();
        }
    }
}
