package org.jiwarp.wire.perftest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The octets of perftest's control messages (all big-endian; see the package javadoc for who sends
 * which, and when). Every message is one Send on the control connection, received into a buffer
 * of {@link #DEST_LENGTH} octets, so no message may be longer.
 *
 * <pre>
 *   version          16  C string, NUL padded ("6.06"); a jiwarp end adds its run after the NUL
 *   cycle buffer      4  int, the page size        ) check_sys_data
 *   cache line        4  int                       )
 *   MTU               2  "%d" of enum ibv_mtu, NUL ("5" = 4096)
 *   pingpong_dest    56  see {@link PingpongDest}
 *   bw report     5 x 8  size, iters, bw_peak, bw_avg, msgRate_avg (longs and IEEE doubles)
 * </pre>
 */
public final class PerftestWire {

    /** The protocol version jiwarp speaks: perftest 6.06's (Debian's perftest 4.5-0.17). */
    public static final String VERSION = "6.06";
    /** perftest's {@code check_version_compatibility}: older peers are refused. */
    public static final double MIN_PEER_VERSION = 5.70;
    /** {@code MAX_VERSION}: the version field's size. */
    public static final int VERSION_LENGTH = 16;
    /** {@code sizeof(struct pingpong_dest)} on LP64, the control receive buffer's size. */
    public static final int DEST_LENGTH = PingpongDest.LENGTH;
    public static final int INT_LENGTH = 4;
    /** check_mtu with a peer of version 5.31 or later: {@code sizeof(char[2])}. */
    public static final int MTU_LENGTH = 2;
    /** A field of {@code struct bw_report_data} (iters is 64-bit from peer version 5.33). */
    public static final int REPORT_FIELD_LENGTH = 8;
    /** enum ibv_mtu IBV_MTU_4096: what jiwarp reports (it has no path MTU of its own). */
    public static final int IBV_MTU_4096 = 5;
    /** perftest's default page size and cache line, which jiwarp offers in check_sys_data. */
    public static final int PAGE_SIZE = 4096;
    public static final int CACHE_LINE_SIZE = 64;

    private PerftestWire() {
    }

    public static byte[] version(String version) {
        byte[] bytes = version.getBytes(StandardCharsets.US_ASCII);
        if (bytes.length >= VERSION_LENGTH) {
            throw new IllegalArgumentException("version too long: " + version);
        }
        byte[] field = new byte[VERSION_LENGTH];
        System.arraycopy(bytes, 0, field, 0, bytes.length);
        return field;
    }

    /**
     * What a jiwarp end puts after the version string's NUL: perftest reads the field with
     * {@code atof} and prints it with {@code %s}, so it never sees these octets, and sends zeros there
     * itself. A marker octet, the program, {@code -n} and {@code -s}, so that two jiwarp ends find a
     * mismatch in the first exchange and both say so:
     * <pre>
     *   octet  5      'j'
     *   octet  6      program: 2 x verb ordinal + 1 for a latency test
     *   octets 7-10   iterations, big-endian
     *   octets 11-14  message size, big-endian
     *   octet  15     zero
     * </pre>
     */
    public record JiwarpRun(Verb verb, boolean latency, int iters, int size) {
        private static final int AT = 5;
        private static final byte MARKER = 'j';

        public String program() {
            return verb.program(latency);
        }
    }

    /** The version field with {@code run} after the version string (see {@link JiwarpRun}). */
    public static byte[] version(String version, JiwarpRun run) {
        byte[] field = version(version);
        if (version.length() >= JiwarpRun.AT) {
            throw new IllegalArgumentException("version too long to carry a run: " + version);
        }
        ByteBuffer.wrap(field, JiwarpRun.AT, VERSION_LENGTH - 1 - JiwarpRun.AT).put(JiwarpRun.MARKER)
                .put((byte) (2 * run.verb().ordinal() + (run.latency() ? 1 : 0))).putInt(run.iters()).putInt(run.size());
        return field;
    }

    /** The run a jiwarp peer put in its version field, or null for a perftest peer (or an unknown program). */
    public static JiwarpRun jiwarpRun(byte[] field) {
        if (field.length != VERSION_LENGTH || field[JiwarpRun.AT - 1] != 0 || field[JiwarpRun.AT] != JiwarpRun.MARKER) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(field, JiwarpRun.AT + 1, VERSION_LENGTH - 2 - JiwarpRun.AT);
        int program = b.get() & 0xFF;
        if (program >= 2 * Verb.values().length) {
            return null;
        }
        return new JiwarpRun(Verb.values()[program / 2], program % 2 == 1, b.getInt(), b.getInt());
    }

    /** The C string at the start of {@code bytes}. */
    public static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.US_ASCII);
    }

    /** {@code atof} of a version string: its leading number, or 0. */
    public static double versionNumber(String version) {
        int end = 0;
        boolean dot = false;
        while (end < version.length()) {
            char c = version.charAt(end);
            if (c == '.' && !dot) {
                dot = true;
            } else if (c < '0' || c > '9') {
                break;
            }
            end++;
        }
        try {
            return end == 0 ? 0 : Double.parseDouble(version.substring(0, end));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    public static byte[] int32(int value) {
        return ByteBuffer.allocate(INT_LENGTH).putInt(value).array();
    }

    public static int int32(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getInt();
    }

    public static byte[] int64(long value) {
        return ByteBuffer.allocate(8).putLong(value).array();
    }

    public static long int64(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getLong();
    }

    /** {@code hton_double}: the IEEE 754 bits, big-endian. */
    public static byte[] float64(double value) {
        return ByteBuffer.allocate(8).putDouble(value).array();
    }

    public static double float64(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getDouble();
    }

    /** check_mtu's message: the decimal enum ibv_mtu and a NUL. */
    public static byte[] mtu(int ibvMtu) {
        if (ibvMtu < 1 || ibvMtu > 9) {
            throw new IllegalArgumentException("enum ibv_mtu out of range: " + ibvMtu);
        }
        return new byte[] {(byte) ('0' + ibvMtu), 0};
    }

    /** {@code strtol} of check_mtu's message; 0 when it holds no number. */
    public static int mtu(byte[] bytes) {
        int value = 0;
        for (byte b : bytes) {
            if (b < '0' || b > '9') {
                break;
            }
            value = value * 10 + (b - '0');
        }
        return value;
    }

    /** {@code MTU_SIZE}: the octets of an enum ibv_mtu (1 = 256 ... 5 = 4096), 0 if invalid. */
    public static int mtuOctets(int ibvMtu) {
        return ibvMtu >= 1 && ibvMtu <= 5 ? 128 << ibvMtu : 0;
    }
}
