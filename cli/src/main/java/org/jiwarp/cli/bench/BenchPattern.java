package org.jiwarp.cli.bench;

import io.netty.buffer.ByteBuf;

/** The octets every benchmark message carries, so that a run can check what arrived. */
final class BenchPattern {

    private BenchPattern() {
    }

    static byte at(int index) {
        return (byte) (index * 131 + 7);
    }

    static void fill(ByteBuf buffer, int index, int length) {
        for (int i = 0; i < length; i++) {
            buffer.setByte(index + i, at(i));
        }
    }

    /** The first octet of {@code [index, index + length)} that is not the pattern, or -1. */
    static int firstMismatch(ByteBuf buffer, int index, int length) {
        for (int i = 0; i < length; i++) {
            if (buffer.getByte(index + i) != at(i)) {
                return i;
            }
        }
        return -1;
    }
}
