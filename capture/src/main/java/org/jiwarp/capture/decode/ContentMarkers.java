package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Reads FPDUs of a direction with markers by finding each marker by its content rather than by
 * its place on RFC 5044's grid (section 4.3): a 4-octet word whose reserved half is zero and
 * whose FPDUPTR, in either byte order, is exactly the distance back to this FPDU's ULPDU_LENGTH
 * field. It follows the sender's own grid: the next marker is looked for near where the last one
 * found and the sender's learned drift put it, so it reads streams whose sender got markers wrong:
 * a grid that drifts with every FPDU, an FPDUPTR written little-endian.
 *
 * <pre>
 *   sender's grid:   M ........ 512 ........ M+512+drift ........ M+1024+2*drift ...
 *   a marker:        | 0x0000 | FPDUPTR |   FPDUPTR = marker - ULPDU_LENGTH field (0 before an FPDU)
 * </pre>
 *
 * <p>A marker falls wherever the grid puts it, inside a DDP or RDMAP header too, where header words
 * can read as markers themselves (an MSN of 12 twelve octets into its FPDU looks like a marker with
 * FPDUPTR 12). Every 4-octet position within reach of the predicted place is tried, and the
 * marker is the look-alike whose removal leaves a header consistent with the FPDUs before it (MSN
 * sequence, MO and TO following the lengths before), then the one where the learned grid puts it.
 *
 * <p>Indices are into one gap-free stretch of the stream, so they count stream octets. Instances
 * keep the learned grid and what deviated from the RFC, for one direction.
 */
final class ContentMarkers {

    /** How far from its predicted place a marker is looked for. */
    static final int WINDOW = 128;
    /** The largest drift per FPDU, either way, that a sender's grid is believed to have. */
    static final int MAX_DRIFT = 16;

    /** Where the next marker is predicted: the last marker found (or the grid's first point, minus 512). */
    private long lastMarker;
    private int fpdusSinceMarker;
    private int driftPerFpdu;
    private boolean littleEndian;
    /** The grid RFC 5044 would have used: a marker every 512 octets from here. */
    private final long rfcOrigin;

    /** What the FPDUs read so far say the next one's header holds, to tell a marker from a look-alike. */
    private final Neighbours neighbours = new Neighbours();

    /** Set by {@link #read} when it gave up because a marker the sender's grid calls for is missing. */
    boolean markerMissing;
    /** Set by {@link #read} when a marker of the FPDU it read was off the RFC grid, or little-endian. */
    boolean deviated;
    int markersFound;
    int misplaced;
    int littleEndianPointers;
    long largestDeviation;

    /**
     * @param firstMarker where the first marker of the stretch is expected (on the RFC grid when
     *                    the negotiation was seen, else one found by {@link #find})
     */
    ContentMarkers(long firstMarker, boolean littleEndian) {
        this.lastMarker = firstMarker - Markers.INTERVAL;
        this.rfcOrigin = firstMarker;
        this.littleEndian = littleEndian;
    }

    /** Markers lie about 512 octets apart whatever the sender's quirk: none comes much sooner. */
    private long earliest() {
        return lastMarker + Markers.INTERVAL - MAX_DRIFT;
    }

    /** The predicted place of the next marker. */
    private long predicted() {
        return lastMarker + Markers.INTERVAL + (long) driftPerFpdu * fpdusSinceMarker;
    }

    /**
     * Reads the FPDU that starts at {@code bytes[start]}, stopping at {@code end}.
     *
     * @return the frame, or {@code null} when it runs past {@code end} or a marker it should hold is
     *     nowhere near where the sender's grid puts it
     */
    FpduReader.Frame read(byte[] bytes, int start, int end) {
        markerMissing = false;
        deviated = false;
        int misplacedBefore = misplaced;
        int littleBefore = littleEndianPointers;
        List<long[]> found = new ArrayList<>(2);
        int header = start;
        if (start + Markers.LENGTH <= end && word(bytes, start) == 0 && start >= earliest()) {
            // RFC 5044 section 4.3: a marker just before an FPDU has FPDUPTR 0; no ULPDU_LENGTH is 0.
            found.add(new long[] {start, 0, 0});
            header += Markers.LENGTH;
            learn(start);
        }
        fpdusSinceMarker++;
        if (header + Fpdu.HEADER_LENGTH > end) {
            return null;
        }
        int ulpduLength = (bytes[header] & 0xFF) << 8 | (bytes[header + 1] & 0xFF);
        int unmarked = Fpdu.length(ulpduLength);
        byte[] body = new byte[unmarked];
        int filled = 0;
        int crcStart = -1;
        int i = header;
        boolean noMarkerLeft = false; // the look-alikes in this FPDU were weighed and none is a marker
        while (filled < unmarked) {
            long expected = predicted();
            if (i >= end) {
                return null;
            }
            if (i > expected + WINDOW) {
                markerMissing = true; // the sender's grid put a marker here, and none points at this FPDU
                return null;
            }
            boolean candidate = !noMarkerLeft && (i - header) % 4 == 0
                    && i >= Math.max(expected - WINDOW, earliest()) && i > header
                    && markerOrder(bytes, i, end, i - header) != 0;
            int marker = candidate ? choose(bytes, header, i, end, body, filled, unmarked, expected) : -1;
            noMarkerLeft = candidate && marker < 0;
            if (marker >= 0) {
                // Header and payload words can read as markers too (an MSN of 12 twelve octets in):
                // the look-alikes in reach were weighed, and this one is the sender's marker.
                for (; i < marker; i++) {
                    if (filled == unmarked - Fpdu.CRC_LENGTH) {
                        crcStart = i;
                    }
                    body[filled++] = bytes[i];
                }
                int order = markerOrder(bytes, i, end, i - header);
                littleEndian = order < 0;
                found.add(new long[] {i, i - header, order});
                learn(i);
                if (order < 0) {
                    littleEndianPointers++;
                }
                i += Markers.LENGTH;
                continue;
            }
            if (filled == unmarked - Fpdu.CRC_LENGTH) {
                crcStart = i;
            }
            body[filled++] = bytes[i++];
        }
        FpduReader.Frame frame = new FpduReader.Frame();
        frame.streamPosition = start;
        frame.wireLength = i - start;
        frame.ulpduLength = ulpduLength;
        frame.ulpdu = Arrays.copyOfRange(body, Fpdu.HEADER_LENGTH, Fpdu.HEADER_LENGTH + ulpduLength);
        frame.pad = Arrays.copyOfRange(body, Fpdu.HEADER_LENGTH + ulpduLength, unmarked - Fpdu.CRC_LENGTH);
        int c = unmarked - Fpdu.CRC_LENGTH;
        frame.crcField = (body[c] & 0xFF) | (body[c + 1] & 0xFF) << 8 | (body[c + 2] & 0xFF) << 16
                | (body[c + 3] & 0xFF) << 24;
        frame.crcComputed = Crc32c.compute(bytes, start, crcStart - start);
        frame.markerPointers = new int[found.size()];
        frame.markerPositions = new long[found.size()];
        frame.markerReserved = new int[found.size()];
        for (int m = 0; m < found.size(); m++) {
            frame.markerPositions[m] = found.get(m)[0];
            frame.markerPointers[m] = (int) found.get(m)[1];
        }
        frame.markersValid = true;
        deviated = misplaced != misplacedBefore || littleEndianPointers != littleBefore;
        neighbours.follow(body, unmarked - Fpdu.CRC_LENGTH);
        return frame;
    }

    /**
     * Which of the marker look-alikes from {@code bytes[first]} on, within reach of the sender's
     * grid and inside the FPDU that starts at {@code bytes[start]}, is its marker, or -1 when none
     * is and the marker lies in a later FPDU (possible only when this one ends within reach). The
     * reading that wins is, in order: the one whose header is most consistent with the FPDUs before
     * it ({@link Neighbours}); once the grid is known (two markers seen), the one nearest where it
     * puts the marker; a look-alike rather than none; one in the byte order the sender has used;
     * the first.
     */
    private int choose(byte[] bytes, int header, int first, int end, byte[] body, int filled, int unmarked,
            long expected) {
        int best = -1;
        long bestRank = Long.MAX_VALUE;
        boolean gridKnown = markersFound >= 2;
        int left = unmarked - filled; // octets of this FPDU still to read, markers aside
        boolean noneInReach = first + left <= expected + WINDOW;
        // The last option is reading no marker here: whether it fits the grid, then the look-alikes.
        for (int at = first; at <= first + left; at += Markers.LENGTH) {
            boolean none = at == first + left;
            int order = 0;
            if (none ? !noneInReach : at + Markers.LENGTH > end || at > expected + WINDOW
                    || (order = markerOrder(bytes, at, end, at - header)) == 0) {
                continue;
            }
            int skip = none ? -1 : at;
            int inconsistencies = 0;
            if (filled < Neighbours.PREFIX) {
                byte[] prefix = Arrays.copyOf(body, Neighbours.PREFIX);
                int length = filled;
                for (int j = first; length < Math.min(unmarked, Neighbours.PREFIX) && j < end; j++) {
                    if (j < skip || j >= skip + Markers.LENGTH) {
                        prefix[length++] = bytes[j];
                    }
                }
                inconsistencies = neighbours.inconsistencies(prefix, length);
            }
            long distance = !gridKnown ? 0 : none ? Math.max(0, first + left - expected) : Math.abs(at - expected);
            int otherOrder = none || (order < 0) == littleEndian ? 0 : 1;
            long rank = (long) Math.min(inconsistencies, 0xFF) << 52
                    | Math.min(distance, 0x7FFF_FFFFL) << 21 | (none ? 1L : 0) << 20 | (long) otherOrder << 19
                    | (at - first);
            if (rank < bestRank) {
                bestRank = rank;
                best = skip;
            }
        }
        return best;
    }

    /**
     * Whether {@code bytes[at]} holds a marker whose FPDUPTR is {@code pointer}: 1 big-endian (as
     * RFC 5044 has it), -1 little-endian, 0 not a marker. The learned byte order wins a tie.
     */
    private int markerOrder(byte[] bytes, int at, int end, int pointer) {
        if (at + Markers.LENGTH > end || bytes[at] != 0 || bytes[at + 1] != 0 || pointer > Markers.MAX_FPDUPTR) {
            return 0;
        }
        int big = (bytes[at + 2] & 0xFF) << 8 | (bytes[at + 3] & 0xFF);
        int little = (bytes[at + 3] & 0xFF) << 8 | (bytes[at + 2] & 0xFF);
        if (littleEndian ? little == pointer : big == pointer) {
            return littleEndian ? -1 : 1;
        }
        if (littleEndian ? big == pointer : little == pointer) {
            return littleEndian ? 1 : -1;
        }
        return 0;
    }

    /** Takes a marker found at {@code at} as the new reference, learning the sender's drift. */
    private void learn(long at) {
        long deviation = at - predicted();
        if (deviation != 0 && fpdusSinceMarker > 0) {
            driftPerFpdu = (int) Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, driftPerFpdu + deviation / fpdusSinceMarker));
        }
        long offRfc = Math.floorMod(at - rfcOrigin, (long) Markers.INTERVAL);
        offRfc = Math.min(offRfc, Markers.INTERVAL - offRfc);
        if (offRfc != 0) {
            misplaced++;
            largestDeviation = Math.max(largestDeviation, offRfc);
        }
        markersFound++;
        lastMarker = at;
        fpdusSinceMarker = 0;
    }

    /** Adds what {@code other} found to this one's tally, for one note per direction. */
    void absorb(ContentMarkers other) {
        markersFound += other.markersFound;
        misplaced += other.misplaced;
        littleEndianPointers += other.littleEndianPointers;
        largestDeviation = Math.max(largestDeviation, other.largestDeviation);
        if (other.driftPerFpdu != 0) {
            driftPerFpdu = other.driftPerFpdu;
        }
        other.markersFound = 0;
        other.misplaced = 0;
        other.littleEndianPointers = 0;
    }

    /** What was found about the sender's markers, for a note; {@code null} when nothing deviated. */
    String deviation() {
        if (misplaced == 0 && littleEndianPointers == 0) {
            return null;
        }
        List<String> what = new ArrayList<>();
        if (misplaced > 0) {
            what.add(misplaced + " of " + markersFound + " markers off the 512-octet grid (by up to "
                    + largestDeviation + " octets" + (driftPerFpdu != 0 ? "; the sender's grid drifts "
                    + driftPerFpdu + " octets with every FPDU" : "") + ")");
        }
        if (littleEndianPointers > 0) {
            what.add(littleEndianPointers + " of " + markersFound + " FPDUPTRs written little-endian");
        }
        return String.join(" and ", what) + ", against RFC 5044 section 4.3; decoded by following the markers "
                + "the sender wrote (a known quirk of early iWARP implementations)";
    }

    private static int word(byte[] bytes, int at) {
        return (bytes[at] & 0xFF) << 24 | (bytes[at + 1] & 0xFF) << 16 | (bytes[at + 2] & 0xFF) << 8 | (bytes[at + 3] & 0xFF);
    }

    /**
     * Finds, in {@code bytes[from, to)} of a stream whose marker grid is unknown (the capture
     * began mid-connection), the first marker that points at an FPDU which reads whole, with a good
     * CRC when {@code crc}, and is followed by more such FPDUs: the marker locates the sender's grid
     * and the FPDU it points at is the boundary.
     *
     * @return the boundary and a reader set on the sender's grid, or {@code null}
     */
    static Located find(byte[] bytes, int from, int to, boolean crc) {
        int limit = (int) Math.min(to - Markers.LENGTH, (long) from + FpduBoundarySearch.SEARCH_LIMIT);
        for (int q = from; q <= limit; q++) {
            if (bytes[q] != 0 || bytes[q + 1] != 0) {
                continue;
            }
            int big = (bytes[q + 2] & 0xFF) << 8 | (bytes[q + 3] & 0xFF);
            int little = (bytes[q + 3] & 0xFF) << 8 | (bytes[q + 2] & 0xFF);
            for (int pointer : big == little ? new int[] {big} : new int[] {big, little}) {
                int header = q - pointer;
                if (pointer < Fpdu.HEADER_LENGTH || header < from) {
                    continue;
                }
                boolean littleEndian = pointer == little && pointer != big;
                Located located = chain(bytes, header, q, littleEndian, to, crc);
                if (located == null && crc && header - Markers.LENGTH >= from && word(bytes, header - Markers.LENGTH) == 0) {
                    // the FPDU may begin with a marker of its own, which its CRC covers
                    located = chain(bytes, header - Markers.LENGTH, header - Markers.LENGTH, littleEndian, to, crc);
                }
                if (located != null) {
                    return located;
                }
            }
        }
        return null;
    }

    /** A boundary found by a marker, and the reader that follows the sender's grid from it. */
    record Located(int offset, long firstMarker, boolean littleEndian, boolean crc) {

        /** A fresh reader on the sender's grid, for reading from {@link #offset}. */
        ContentMarkers markers() {
            return new ContentMarkers(firstMarker, littleEndian);
        }

        /** How far into {@code bytes} FPDUs read on this grid go, plausible and with good CRCs where on. */
        int reach(byte[] bytes, int to) {
            ContentMarkers reader = markers();
            int at = offset;
            for (FpduReader.Frame frame; (frame = reader.read(bytes, at, to)) != null
                    && FpduBoundarySearch.plausible(frame.ulpdu) && (!crc || frame.crcGood()); ) {
                at += frame.wireLength;
            }
            return at;
        }
    }

    private static Located chain(byte[] bytes, int start, int marker, boolean littleEndian, int to, boolean crc) {
        ContentMarkers probe = new ContentMarkers(marker, littleEndian);
        int at = start;
        int n = 0;
        boolean tail = false;
        // Without a CRC, two markers a grid apart must point at their FPDUs: a payload word that
        // happens to point back at a real FPDU header is not rare (rping's sizes, say).
        int markersNeeded = crc ? 1 : 2;
        while (n < 16 && !(n >= 2 && probe.markersFound >= markersNeeded)) {
            FpduReader.Frame frame = probe.read(bytes, at, to);
            if (frame == null) {
                tail = !probe.markerMissing;
                break;
            }
            if (!FpduBoundarySearch.plausible(frame.ulpdu) || (crc && !frame.crcGood())) {
                break;
            }
            at += frame.wireLength;
            n++;
        }
        boolean believable = probe.markersFound >= markersNeeded && (n >= 2 || (crc && n == 1 && tail));
        return believable ? new Located(start, marker, littleEndian, crc) : null;
    }

    /**
     * What the FPDUs read so far say the next header holds (RFC 5041 section 5: untagged messages
     * take MSNs 1, 2, ... per queue, and a message's segments follow each other with MO counting
     * its octets; a tagged message's segments continue its STag and TO; RFC 5040 section 4: the
     * queue each opcode travels on; Read Requests and Terminates are single segments). Counts what
     * a header read one way breaks, so that of two readings of an FPDU with a marker look-alike in
     * its header the one consistent with its neighbours wins.
     */
    static final class Neighbours {

        /** The octets a header's check reads: ULPDU_LENGTH and the longer (untagged) DDP header. */
        static final int PREFIX = Fpdu.HEADER_LENGTH + DdpHeaders.UNTAGGED_HEADER_LENGTH;
        private static final int QUEUES = 4;

        /** Per queue the MSN the next segment carries, 0 while unknown; and the MO, when a message continues. */
        private final long[] nextMsn = new long[QUEUES];
        private final long[] nextMo = new long[QUEUES];
        private final boolean[] continues = new boolean[QUEUES];
        private boolean taggedContinues;
        private int stag;
        private long nextTo;

        /**
         * How many things the header in {@code fpdu[0, available)} (from its ULPDU_LENGTH field on)
         * gets wrong for the FPDUs before it. Only what a marker inside the header can change is
         * looked at: the words from the fifth octet on (a marker lies at least 4 octets into its FPDU).
         */
        int inconsistencies(byte[] fpdu, int available) {
            if (available < Fpdu.HEADER_LENGTH + 2) {
                return 0;
            }
            ByteBuf ddp = Unpooled.wrappedBuffer(fpdu, Fpdu.HEADER_LENGTH, available - Fpdu.HEADER_LENGTH);
            RdmapOpcode opcode = RdmapHeaders.opcode(ddp, 0);
            if (opcode == null || opcode.tagged() != DdpHeaders.tagged(ddp, 0)) {
                return 0; // the same for every reading
            }
            int bad = 0;
            if (opcode.tagged()) {
                if (ddp.readableBytes() >= DdpHeaders.TAGGED_HEADER_LENGTH && taggedContinues) {
                    bad += DdpHeaders.stag(ddp, 0) != stag ? 1 : 0;
                    bad += DdpHeaders.taggedOffset(ddp, 0) != nextTo ? 1 : 0;
                }
                return bad;
            }
            if (ddp.readableBytes() < DdpHeaders.UNTAGGED_HEADER_LENGTH) {
                return 0;
            }
            long qn = DdpHeaders.qn(ddp, 0);
            long msn = DdpHeaders.msn(ddp, 0);
            long mo = DdpHeaders.mo(ddp, 0);
            bad += qn != opcode.queueNumber() ? 1 : 0; // RFC 5040 section 4.5: each opcode's queue
            bad += msn == 0 ? 1 : 0; // RFC 5041 section 5.1: MSNs start at 1
            if (qn < QUEUES && nextMsn[(int) qn] != 0) {
                bad += msn != nextMsn[(int) qn] ? 1 : 0;
                bad += mo != (continues[(int) qn] ? nextMo[(int) qn] : 0) ? 1 : 0;
            } else if (opcode == RdmapOpcode.RDMA_READ_REQUEST || opcode == RdmapOpcode.TERMINATE) {
                bad += mo != 0 ? 1 : 0; // RFC 5040 sections 4.4 and 4.8: one DDP segment each
            }
            return bad;
        }

        /** Takes the FPDU in {@code fpdu[0, available)} as read: what it says the next header holds. */
        void follow(byte[] fpdu, int available) {
            if (available < Fpdu.HEADER_LENGTH + DdpHeaders.TAGGED_HEADER_LENGTH) {
                return;
            }
            int ulpduLength = ulpduLength(fpdu);
            ByteBuf ddp = Unpooled.wrappedBuffer(fpdu, Fpdu.HEADER_LENGTH, available - Fpdu.HEADER_LENGTH);
            boolean last = DdpHeaders.last(ddp, 0);
            if (DdpHeaders.tagged(ddp, 0)) {
                taggedContinues = !last;
                stag = DdpHeaders.stag(ddp, 0);
                nextTo = DdpHeaders.taggedOffset(ddp, 0) + ulpduLength - DdpHeaders.TAGGED_HEADER_LENGTH;
                return;
            }
            if (ulpduLength < DdpHeaders.UNTAGGED_HEADER_LENGTH) {
                return;
            }
            long qn = DdpHeaders.qn(ddp, 0);
            if (qn >= QUEUES) {
                return;
            }
            int q = (int) qn;
            long msn = DdpHeaders.msn(ddp, 0);
            continues[q] = !last;
            nextMsn[q] = last ? (msn + 1) & 0xFFFF_FFFFL : msn; // 0 after a wrap: unknown again
            nextMo[q] = DdpHeaders.mo(ddp, 0) + ulpduLength - DdpHeaders.UNTAGGED_HEADER_LENGTH;
        }

        private static int ulpduLength(byte[] fpdu) {
            return (fpdu[0] & 0xFF) << 8 | (fpdu[1] & 0xFF);
        }
    }
}
