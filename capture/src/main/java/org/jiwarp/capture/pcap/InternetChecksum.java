package org.jiwarp.capture.pcap;

/**
 * The Internet checksum of RFC 1071: the 16-bit ones' complement of the ones' complement sum of
 * the data taken as big-endian 16-bit words (an odd last byte padded with a zero byte). IPv4
 * (RFC 791) and TCP (RFC 9293 section 3.1, over the pseudo-header of RFC 9293 or RFC 8200
 * section 8.1) both use it.
 */
final class InternetChecksum {

    private InternetChecksum() {
    }

    /** Adds {@code length} bytes from {@code offset} to a running, unfolded 32-bit-plus sum. */
    static long add(long sum, byte[] data, int offset, int length) {
        int end = offset + length;
        int i = offset;
        for (; i + 1 < end; i += 2) {
            sum += (data[i] & 0xFF) << 8 | (data[i + 1] & 0xFF);
        }
        if (i < end) {
            sum += (data[i] & 0xFF) << 8;
        }
        return sum;
    }

    /** Folds a running sum to 16 bits and complements it. */
    static int finish(long sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int) (~sum & 0xFFFF);
    }

    /** The checksum of {@code length} bytes from {@code offset}. */
    static int of(byte[] data, int offset, int length) {
        return finish(add(0, data, offset, length));
    }
}
