package org.jiwarp.capture.decode;

import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Finds where FPDUs begin in a TCP byte stream whose start the capture missed (it began after the
 * MPA negotiation, or in the middle of an FPDU): the first offset from which a chain of FPDUs
 * lines up, each with a plausible DDP and RDMAP header (RFC 5041 section 4, RFC 5040 section 4)
 * and, when the CRC is in use, a CRC-32C that matches (RFC 5044 section 4.1 and 6). Markers are
 * not supported here: a stream with markers needs the MPA frames (or {@code jiwarp}'s marker
 * search, not yet written).
 */
final class FpduBoundarySearch {

    /** How far into the stream a boundary is looked for: one largest FPDU and then some. */
    static final int SEARCH_LIMIT = 70_000;
    /** Consecutive plausible FPDUs that make a boundary believable without a CRC. */
    static final int CHAIN_WITHOUT_CRC = 4;
    /** Consecutive FPDUs with a good CRC that make a boundary believable. */
    static final int CHAIN_WITH_CRC = 2;

    /** Where the FPDUs begin and whether their CRCs are in use. */
    record Boundary(int offset, boolean crc) {
    }

    private FpduBoundarySearch() {
    }

    /** The first believable FPDU boundary in {@code bytes}, or {@code null}. */
    static Boundary find(byte[] bytes) {
        int limit = Math.min(bytes.length, SEARCH_LIMIT);
        for (int offset = 0; offset < limit; offset++) {
            for (boolean crc : new boolean[] {true, false}) {
                int n = 0;
                int at = offset;
                for (int length; (length = wireLength(bytes, at)) > 0 && at + length <= bytes.length
                        && plausible(bytes, at, crc); at += length) {
                    n++;
                }
                // What is left after the chain is nothing, or an FPDU the capture cut short.
                int left = bytes.length - at;
                boolean tail = left == 0 || left < Fpdu.HEADER_LENGTH || wireLength(bytes, at) > left;
                if (crc ? n >= CHAIN_WITH_CRC || (n == 1 && tail) : n >= CHAIN_WITHOUT_CRC || (n >= 2 && tail)) {
                    return new Boundary(offset, crc);
                }
            }
        }
        return null;
    }

    /** The FPDU's length on the wire (length field, ULPDU, pad, CRC), or -1 when too short to tell. */
    private static int wireLength(byte[] bytes, int at) {
        if (at + Fpdu.HEADER_LENGTH > bytes.length) {
            return -1;
        }
        int ulpdu = (bytes[at] & 0xFF) << 8 | (bytes[at + 1] & 0xFF);
        if (ulpdu < DdpHeaders.TAGGED_HEADER_LENGTH) {
            return -1;
        }
        return Fpdu.HEADER_LENGTH + ulpdu + Fpdu.padLength(ulpdu) + 4;
    }

    private static boolean plausible(byte[] bytes, int at, boolean crc) {
        int ulpdu = (bytes[at] & 0xFF) << 8 | (bytes[at + 1] & 0xFF);
        int ddp = at + Fpdu.HEADER_LENGTH;
        int control = bytes[ddp] & 0xFF;
        if ((control & DdpHeaders.VERSION_MASK) != DdpHeaders.DDP_VERSION || (control & DdpHeaders.RESERVED_MASK) != 0) {
            return false;
        }
        int rdmap = bytes[ddp + 1] & 0xFF;
        if ((rdmap & RdmapHeaders.VERSION_MASK) >>> RdmapHeaders.VERSION_SHIFT != RdmapHeaders.RDMAP_VERSION) {
            return false;
        }
        RdmapOpcode opcode = RdmapOpcode.valueOf(rdmap & RdmapHeaders.OPCODE_MASK);
        boolean tagged = (control & DdpHeaders.TAGGED_FLAG) != 0;
        if (opcode == null || opcode.tagged() != tagged
                || (!tagged && ulpdu < DdpHeaders.UNTAGGED_HEADER_LENGTH)) {
            return false;
        }
        if (!crc) {
            return true;
        }
        int covered = Fpdu.HEADER_LENGTH + ulpdu + Fpdu.padLength(ulpdu);
        int field = (bytes[at + covered] & 0xFF) | (bytes[at + covered + 1] & 0xFF) << 8
                | (bytes[at + covered + 2] & 0xFF) << 16 | (bytes[at + covered + 3] & 0xFF) << 24;
        return Crc32c.compute(bytes, at, covered) == field;
    }
}
