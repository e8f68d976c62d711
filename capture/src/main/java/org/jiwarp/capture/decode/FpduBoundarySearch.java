package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Finds where FPDUs begin in a stretch of a TCP byte stream whose start the capture missed (it
 * began after the MPA negotiation, or after a gap: lost segments, a capture drop): the first
 * offset from which a chain of FPDUs lines up, each with a plausible DDP and RDMAP header (RFC 5041
 * section 4, RFC 5040 section 4), a CRC-32C that matches when the CRC is in use (RFC 5044 sections
 * 4.1 and 6) and, when markers are in use on a known grid, markers whose FPDUPTR points at the
 * FPDU (RFC 5044 section 4.3).
 *
 * <p>When the grid is known (a gap after a decoded MPA negotiation), FPDUs start only at multiples
 * of four octets from the grid's origin, since every FPDU's length on the wire is such a multiple.
 */
final class FpduBoundarySearch {

    /** How far into the stretch a boundary is looked for: one largest FPDU and then some. */
    static final int SEARCH_LIMIT = 70_000;
    /** Consecutive plausible FPDUs that make a boundary believable without a CRC or a marker. */
    static final int CHAIN_WITHOUT_CRC = 4;
    /** Consecutive FPDUs with a good CRC or a matching marker that make a boundary believable. */
    static final int CHAIN_WITH_CRC = 2;

    /**
     * Where the FPDUs begin, whether their CRCs are in use, and what confirmed it.
     *
     * @param offset  index of the boundary in the searched array
     * @param crc     whether the CRCs checked (and so are taken as in use)
     * @param markers the number of markers in the confirming chain whose FPDUPTR pointed right
     * @param chain   the number of FPDUs in the confirming chain
     */
    record Boundary(int offset, boolean crc, int markers, int chain) {

        /** How the boundary was found, as a phrase ("by ...") for notes. */
        String how() {
            StringBuilder how = new StringBuilder("by a run of ").append(chain).append(" FPDU")
                    .append(chain == 1 ? "" : "s").append(" with plausible DDP/RDMAP headers");
            if (crc) {
                how.append(", good CRCs");
            }
            if (markers > 0) {
                how.append(", ").append(markers).append(" marker").append(markers == 1 ? "" : "s")
                        .append(" pointing at them");
            }
            return how.toString();
        }
    }

    private FpduBoundarySearch() {
    }

    /** The first believable FPDU boundary in {@code bytes}, CRC on or off, no markers, or {@code null}. */
    static Boundary find(byte[] bytes) {
        return find(bytes, 0, bytes.length, -1, false, new boolean[] {true, false});
    }

    /**
     * The first believable FPDU boundary in {@code bytes[from, to)}, or {@code null}.
     *
     * @param gridPosition where {@code bytes[from]} lies counted from the start of the first FPDU
     *                     (the marker grid's origin), or -1 when unknown (then no markers)
     * @param markers      whether markers are in use (only with a known grid)
     * @param crcModes     the CRC settings to try at each offset, in order
     */
    static Boundary find(byte[] bytes, int from, int to, long gridPosition, boolean markers, boolean[] crcModes) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes, 0, to);
        int limit = (int) Math.min(to, (long) from + SEARCH_LIMIT);
        for (int offset = from; offset < limit; offset++) {
            long position = gridPosition < 0 ? 0 : gridPosition + (offset - from);
            if (gridPosition >= 0 && (position & 3) != 0) {
                continue;
            }
            for (boolean crc : crcModes) {
                Boundary boundary = chainAt(buf, offset, to, position, markers && gridPosition >= 0, crc);
                if (boundary != null) {
                    return boundary;
                }
            }
        }
        return null;
    }

    private static Boundary chainAt(ByteBuf buf, int offset, int to, long position, boolean markers, boolean crc) {
        if (!quickCheck(buf, offset, to, markers && Markers.isMarkerPosition(position))) {
            return null;
        }
        FpduReader reader = new FpduReader(markers, position);
        buf.readerIndex(offset);
        int n = 0;
        int checkedMarkers = 0;
        boolean tail = false;
        while (n < 8) {
            FpduReader.Frame frame = reader.read(buf);
            if (frame == null) {
                tail = true; // nothing more, or an FPDU the capture cut short
                break;
            }
            if (!plausible(frame.ulpdu) || !frame.markersValid || (crc && !frame.crcGood())) {
                break;
            }
            n++;
            for (int pointer : frame.markerPointers) {
                checkedMarkers += pointer != 0 ? 1 : 0;
            }
        }
        boolean confirmed = crc || checkedMarkers > 0;
        boolean believable = confirmed ? n >= CHAIN_WITH_CRC || (n == 1 && tail)
                : n >= CHAIN_WITHOUT_CRC || (n >= 2 && tail);
        return believable ? new Boundary(offset, crc, checkedMarkers, n) : null;
    }

    /** How far into {@code bytes[from, to)} unmarked FPDUs read from {@code from}, plausible and with good CRCs where on. */
    static int reach(byte[] bytes, int from, int to, boolean crc) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes, 0, to);
        buf.readerIndex(from);
        FpduReader reader = new FpduReader(false);
        int at = from;
        for (FpduReader.Frame frame; (frame = reader.read(buf)) != null && plausible(frame.ulpdu)
                && (!crc || frame.crcGood()); ) {
            at += frame.wireLength;
        }
        return at;
    }

    /** A cheap look at the length field and the DDP control byte before reading a whole chain. */
    private static boolean quickCheck(ByteBuf buf, int offset, int to, boolean markerFirst) {
        int header = offset + (markerFirst ? Markers.LENGTH : 0);
        if (header + Fpdu.HEADER_LENGTH + 2 > to) {
            return false;
        }
        int ulpdu = buf.getUnsignedShort(header);
        int control = buf.getUnsignedByte(header + Fpdu.HEADER_LENGTH);
        return ulpdu >= DdpHeaders.TAGGED_HEADER_LENGTH
                && (control & DdpHeaders.VERSION_MASK) == DdpHeaders.DDP_VERSION
                && (control & DdpHeaders.RESERVED_MASK) == 0;
    }

    /** Whether a ULPDU starts with a DDP and RDMAP header a sender could have written. */
    static boolean plausible(byte[] ulpdu) {
        if (ulpdu.length < DdpHeaders.TAGGED_HEADER_LENGTH) {
            return false;
        }
        int control = ulpdu[0] & 0xFF;
        if ((control & DdpHeaders.VERSION_MASK) != DdpHeaders.DDP_VERSION || (control & DdpHeaders.RESERVED_MASK) != 0) {
            return false;
        }
        int rdmap = ulpdu[1] & 0xFF;
        if ((rdmap & RdmapHeaders.VERSION_MASK) >>> RdmapHeaders.VERSION_SHIFT != RdmapHeaders.RDMAP_VERSION) {
            return false;
        }
        RdmapOpcode opcode = RdmapOpcode.valueOf(rdmap & RdmapHeaders.OPCODE_MASK);
        boolean tagged = (control & DdpHeaders.TAGGED_FLAG) != 0;
        return opcode != null && opcode.tagged() == tagged
                && (tagged || ulpdu.length >= DdpHeaders.UNTAGGED_HEADER_LENGTH);
    }
}
