package org.jiwarp.wire.crc;

/**
 * Table-driven CRC-32C (Castagnoli, reflected polynomial {@code 0x82F63B78}), one byte per step.
 *
 * <p>Deliberately simple: it is the oracle for {@link Crc32c} in tests and the fallback when
 * {@code -Djiwarp.crc32c=table} is given. The running value is the inverted register, as in
 * {@code java.util.zip.CRC32C}: start from {@link #INITIAL}, finish with {@link #finish(int)}.
 */
public final class Crc32cTable {

    /** The reflected Castagnoli polynomial (RFC 3385 section 4.1: 0x1EDC6F41, bit-reversed). */
    public static final int POLYNOMIAL_REFLECTED = 0x82F63B78;

    /** Register value before the first byte. */
    public static final int INITIAL = 0xFFFFFFFF;

    private static final int[] TABLE = new int[256];

    static {
        for (int n = 0; n < 256; n++) {
            int c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ POLYNOMIAL_REFLECTED : c >>> 1;
            }
            TABLE[n] = c;
        }
    }

    private Crc32cTable() {
    }

    /** Feeds one byte into the register {@code crc}. */
    public static int update(int crc, int b) {
        return (crc >>> 8) ^ TABLE[(crc ^ b) & 0xFF];
    }

    /** Feeds {@code length} bytes of {@code bytes} from {@code offset} into the register. */
    public static int update(int crc, byte[] bytes, int offset, int length) {
        int c = crc;
        for (int i = offset, end = offset + length; i < end; i++) {
            c = (c >>> 8) ^ TABLE[(c ^ bytes[i]) & 0xFF];
        }
        return c;
    }

    /** The CRC value of a finished register. */
    public static int finish(int crc) {
        return ~crc;
    }

    /** CRC-32C of a whole array. */
    public static int compute(byte[] bytes) {
        return finish(update(INITIAL, bytes, 0, bytes.length));
    }
}
