package org.jiwarp.capture.decode;

/**
 * Field values formatted as {@code tshark -T fields} prints them (Wireshark 4.0): booleans as
 * {@code 1}/{@code 0}, {@code BASE_HEX} integers zero-padded to their type's width, byte strings
 * as lower-case hex without separators, {@code BASE_DEC} integers in decimal.
 */
public final class WiresharkFormat {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private WiresharkFormat() {
    }

    public static String bool(boolean value) {
        return value ? "1" : "0";
    }

    public static String hex8(int value) {
        return String.format("0x%02x", value & 0xFF);
    }

    public static String hex16(int value) {
        return String.format("0x%04x", value & 0xFFFF);
    }

    public static String hex32(int value) {
        return String.format("0x%08x", value);
    }

    public static String hex64(long value) {
        return String.format("0x%016x", value);
    }

    public static String dec(long value) {
        return Long.toString(value);
    }

    /** An unsigned 64-bit value in decimal. */
    public static String decUnsigned64(long value) {
        return Long.toUnsignedString(value);
    }

    public static String bytes(byte[] bytes, int offset, int length) {
        char[] out = new char[length * 2];
        for (int i = 0; i < length; i++) {
            int b = bytes[offset + i] & 0xFF;
            out[2 * i] = HEX[b >>> 4];
            out[2 * i + 1] = HEX[b & 0xF];
        }
        return new String(out);
    }

    public static String bytes(byte[] bytes) {
        return bytes(bytes, 0, bytes.length);
    }
}
