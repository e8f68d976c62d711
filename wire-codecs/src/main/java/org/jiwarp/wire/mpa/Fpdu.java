package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;

/**
 * The Framed Protocol Data Unit (RFC 5044 section 4.1), before markers are inserted.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |          ULPDU_LENGTH         |                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
 *  ~                              ULPDU                            ~
 *  +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                               |          PAD (0-3 bytes)      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     CRC (32 bits, little-endian)              |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>ULPDU_LENGTH counts the ULPDU only. The pad makes length field + ULPDU + pad a multiple of 4.
 * The CRC-32C covers the length field, ULPDU, pad and any markers inside the FPDU, and goes on the
 * wire least-significant byte first, as Linux siw and Wireshark read it. With CRC off the field is
 * still sent (as zero) and not checked.
 */
public final class Fpdu {

    public static final int ULPDU_LENGTH_OFFSET = 0;
    /** Length of the ULPDU_LENGTH field. */
    public static final int HEADER_LENGTH = 2;
    public static final int CRC_LENGTH = 4;
    /** The most octets an FPDU carries after its ULPDU without markers: 3 of pad and the CRC. */
    public static final int MAX_TRAILER_LENGTH = 3 + CRC_LENGTH;
    /** The largest ULPDU the 16-bit length field can describe. */
    public static final int MAX_ULPDU_LENGTH = 0xFFFF;

    private Fpdu() {
    }

    public static int ulpduLength(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + ULPDU_LENGTH_OFFSET);
    }

    /** Pad octets after a ULPDU of this length (RFC 5044 section 4.1). */
    public static int padLength(int ulpduLength) {
        return -(HEADER_LENGTH + ulpduLength) & 3;
    }

    /** Octets of an FPDU without markers: length field, ULPDU, pad and CRC. */
    public static int length(int ulpduLength) {
        return HEADER_LENGTH + ulpduLength + padLength(ulpduLength) + CRC_LENGTH;
    }

    /** Reads a CRC field (little-endian). */
    public static int crc(ByteBuf buf, int index) {
        return buf.getIntLE(index);
    }

    /** Appends a CRC field (little-endian). */
    public static void writeCrc(ByteBuf out, int crc) {
        out.writeIntLE(crc);
    }

    /**
     * MULPDU, the largest ULPDU that fits one TCP segment of {@code emss} octets (RFC 5044 section
     * 5.2): {@code EMSS - (6 + EMSS mod 4)} without markers and
     * {@code EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4)} with them.
     */
    public static int mulpdu(int emss, boolean markers) {
        int overhead = HEADER_LENGTH + CRC_LENGTH + emss % 4;
        if (markers) {
            overhead += Markers.LENGTH * ((emss + Markers.INTERVAL - 1) / Markers.INTERVAL);
        }
        return Math.min(MAX_ULPDU_LENGTH, emss - overhead);
    }
}
