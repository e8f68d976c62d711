package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;

/**
 * Reads the FPDUs of one direction of a conversation, from a known FPDU boundary to the end of
 * the capture, across the gaps the capture has (RFC 5044 sections 4.1, 4.3, 6).
 *
 * <p>At a gap (octets the TCP sequence numbers show were sent but the capture does not hold), the
 * FPDU the gap cut is reported, and the next FPDU boundary is searched for in the octets captured
 * after it by {@link FpduBoundarySearch}: on the 4-octet alignment and the marker grid the TCP
 * sequence numbers still give, with the CRC when it is in use, with markers when they are in use,
 * by plausible DDP/RDMAP headers otherwise. A note says what was skipped and how the boundary was
 * found, and the first PDU after it is marked {@linkplain DecodedPdu#resynchronised() resynchronised}.
 */
final class FpduDecoder {

    /** The problem on an FPDU whose markers the sender put off RFC 5044's grid or wrote little-endian. */
    static final String MARKER_DEVIATION = "marker placed by the sender's own grid, not where RFC 5044 section 4.3 "
            + "puts it (or its FPDUPTR little-endian)";

    private final CapturedStream stream;
    private final int conversation;
    private final boolean crc;
    private final boolean markers;
    /** Stream offset of the first FPDU of full operation: the origin of the marker grid. */
    private final long origin;
    private final List<DecodedPdu> pdus;
    private final List<String> notes;
    /** The stream goes on past what was captured so far: stop at its end instead of reporting it. */
    private boolean partial;
    /** Partial: where the next stretch of the stream must be decoded from, or -1 when nothing is left over. */
    private int resumeAt = -1;
    /** Partial: the FPDU boundary at {@link #resumeAt} is not known; it must be searched for. */
    private boolean resumeBySearch;

    FpduDecoder(CapturedStream stream, int conversation, boolean crc, boolean markers, int firstFpdu,
            List<DecodedPdu> pdus, List<String> notes) {
        this(stream, conversation, crc, markers, stream.streamOffset(firstFpdu), pdus, notes);
    }

    /** A decoder whose marker grid starts at stream offset {@code origin} (RFC 5044 section 4.3). */
    FpduDecoder(CapturedStream stream, int conversation, boolean crc, boolean markers, long origin,
            List<DecodedPdu> pdus, List<String> notes) {
        this.stream = stream;
        this.conversation = conversation;
        this.crc = crc;
        this.markers = markers;
        this.origin = origin;
        this.pdus = pdus;
        this.notes = notes;
    }

    /**
     * Makes this a decoder of a stretch of a stream that goes on: the FPDU cut by the stretch's end
     * is left for the next stretch ({@link #resumeAt()}) instead of being reported as cut.
     */
    FpduDecoder partial() {
        this.partial = true;
        return this;
    }

    /** After a partial decode: the index where the next stretch starts, or -1 when nothing is left over. */
    int resumeAt() {
        return resumeAt;
    }

    /** After a partial decode: the next stretch must first search for an FPDU boundary. */
    boolean resumeBySearch() {
        return resumeBySearch;
    }

    boolean crc() {
        return crc;
    }

    boolean markers() {
        return markers;
    }

    long origin() {
        return origin;
    }

    /**
     * Decodes every FPDU from {@code bytes[start]}, which is an FPDU boundary, on. {@code start}
     * lies in the captured stream (at most at its end): the caller takes it from frames it has
     * checked are whole in the capture, never from a length it has not.
     */
    void decodeFrom(int start) {
        Attempt rfc = new Attempt(null);
        rfc.decodeFrom(start);
        Attempt chosen = rfc;
        if (markers && (rfc.markerProblems > 0 || rfc.unreadTail > 0)) {
            // RFC 5044 section 4.3 puts markers on a 512-octet grid; where they are not there, look for
            // the markers the sender actually wrote and keep that reading if it is the better one. An
            // FPDU that starts where the grid has a marker and a drifting sender has none reads as
            // running past the capture's end rather than as a marker problem.
            Attempt byContent = new Attempt(new ContentMarkers(stream.streamOffset(start) - origin == 0 ? start
                    : start - (int) Math.floorMod(stream.streamOffset(start) - origin, (long) Markers.INTERVAL), false));
            byContent.decodeFrom(start);
            if (byContent.problemPdus < rfc.problemPdus
                    || (byContent.problemPdus == rfc.problemPdus && byContent.unreadTail < rfc.unreadTail)) {
                chosen = byContent;
            }
        }
        chosen.finish();
    }

    /** Decodes every FPDU from {@code bytes[start]} on, with markers found by {@code located}. */
    void decodeFrom(int start, ContentMarkers located) {
        Attempt attempt = new Attempt(located);
        attempt.decodeFrom(start);
        attempt.finish();
    }

    /** One reading of the direction: by the RFC's marker grid, or by markers found by their content. */
    private final class Attempt {
        final List<DecodedPdu> found = new ArrayList<>();
        final List<String> said = new ArrayList<>();
        ContentMarkers content;
        final ContentMarkers seen = new ContentMarkers(0, false);
        int markerProblems;
        int problemPdus;
        /** Octets at the end of the capture that this reading could not read as a whole FPDU. */
        int unreadTail;
        int resume = -1;
        boolean search;

        Attempt(ContentMarkers content) {
            this.content = content;
        }

        void finish() {
            if (content != null) {
                seen.absorb(content);
                String deviation = seen.deviation();
                said.add(prefix() + (deviation == null ? seen.markersFound + " markers located by their content, all "
                        + "on the 512-octet grid of RFC 5044 section 4.3 with big-endian FPDUPTRs" : deviation));
            }
            pdus.addAll(found);
            notes.addAll(said);
            resumeAt = resume;
            resumeBySearch = search;
        }

        void decodeFrom(int start) {
            int run = stream.runOf(start);
            int at = start;
            boolean resynchronised = false;
            while (run < stream.runs()) {
                int end = stream.runEnd(run);
                at = readRun(run, at, end, resynchronised);
                resynchronised = false;
                if (at < end && content != null && content.markerMissing) {
                    // Inside a stretch: the sender's grid lost; find a marker that points at an FPDU again.
                    ContentMarkers.Located again = ContentMarkers.find(stream.bytes, at + 1, end, crc);
                    String lost = prefix() + "no marker near where the sender's grid puts one in the FPDU at stream offset "
                            + stream.streamOffset(run, at);
                    if (again != null) {
                        said.add(lost + "; markers found again at stream offset " + stream.streamOffset(run, again.offset()));
                        seen.absorb(content);
                        content = again.markers();
                        at = again.offset();
                        resynchronised = true;
                        continue;
                    }
                    said.add(lost + "; no marker found after it");
                }
                if (run == stream.runs() - 1) {
                    if (partial) {
                        resume = at < end ? at : -1; // the FPDU the stretch cut, whole in the next one
                        break;
                    }
                    if (at < end) {
                        unreadTail = end - at;
                        said.add(prefix() + (end - at) + " octets at the end are not a whole FPDU");
                    }
                    break;
                }
                int next = stream.runStart(run + 1);
                long missing = stream.missingAfter(run);
                StringBuilder note = new StringBuilder(prefix()).append("the capture misses ").append(missing)
                        .append(" octet").append(missing == 1 ? "" : "s").append(" (stream offsets ")
                        .append(stream.streamOffset(run, end)).append(" to ").append(stream.streamOffset(run + 1, next) - 1)
                        .append(", before frame ").append(stream.frameAt(next)).append(')');
                if (at < end) {
                    note.append("; the FPDU at stream offset ").append(stream.streamOffset(run, at))
                            .append(" is cut by it after ").append(end - at).append(" octets");
                }
                // Search the runs after the gap until one holds a boundary.
                int boundary = -1;
                String how = null;
                int skippedRuns = 0;
                while (++run < stream.runs()) {
                    int from = stream.runStart(run);
                    if (content != null) {
                        ContentMarkers.Located located = ContentMarkers.find(stream.bytes, from, stream.runEnd(run), crc);
                        if (located != null) {
                            seen.absorb(content);
                            content = located.markers();
                            boundary = located.offset();
                            how = "by a marker pointing at it (markers located by their content)";
                            break;
                        }
                    } else {
                        FpduBoundarySearch.Boundary found = FpduBoundarySearch.find(stream.bytes, from,
                                stream.runEnd(run), stream.streamOffset(run, from) - origin, markers, new boolean[] {crc});
                        if (found != null) {
                            boundary = found.offset();
                            how = found.how();
                            break;
                        }
                    }
                    skippedRuns++;
                }
                if (boundary < 0) {
                    if (partial) {
                        // The boundary may lie in what comes next: search again from the last stretch.
                        said.add(note.toString());
                        resume = stream.runStart(stream.runs() - 1);
                        search = true;
                        return;
                    }
                    said.add(note.append("; no FPDU boundary found in what was captured after it").toString());
                    return;
                }
                int skipped = boundary - stream.runStart(run);
                note.append("; resynchronised at stream offset ").append(stream.streamOffset(run, boundary))
                        .append(" (frame ").append(stream.frameAt(boundary)).append(") after skipping ")
                        .append(skipped).append(" captured octet").append(skipped == 1 ? "" : "s");
                if (skippedRuns > 0) {
                    note.append(" and ").append(skippedRuns).append(" further stretch")
                            .append(skippedRuns == 1 ? "" : "es").append(" without one");
                }
                said.add(note.append(", found ").append(how).toString());
                at = boundary;
                resynchronised = true;
            }
            if (stream.missingTail && !partial) {
                said.add(prefix() + "TCP data missing from the capture; decoded up to the gap");
            }
        }

        /** Reads FPDUs in {@code bytes[start, end)}; returns where the first incomplete one begins. */
        private int readRun(int run, int start, int end, boolean resynchronised) {
            ByteBuf buf = Unpooled.wrappedBuffer(stream.bytes, 0, end);
            buf.readerIndex(start);
            FpduReader reader = new FpduReader(markers, stream.streamOffset(run, start) - origin);
            boolean first = resynchronised;
            int at = start;
            while (at < end) {
                FpduReader.Frame frame;
                if (content != null) {
                    frame = content.read(stream.bytes, at, end);
                } else {
                    buf.readerIndex(at);
                    frame = reader.read(buf);
                }
                if (frame == null) {
                    return at;
                }
                DecodedPdu pdu = toPdu(frame, at);
                if (first) {
                    pdu.resynchronised(true);
                    first = false;
                }
                if (!frame.markersValid) {
                    markerProblems++;
                }
                if (!pdu.problems().isEmpty()) {
                    problemPdus++;
                }
                if (content != null && content.deviated) {
                    pdu.problem(MARKER_DEVIATION);
                }
                found.add(pdu);
                at += frame.wireLength;
            }
            return end;
        }
    }

    private DecodedPdu toPdu(FpduReader.Frame frame, int fpduStart) {
        int last = fpduStart + frame.wireLength - 1;
        DecodedPdu pdu = new DecodedPdu(stream.frameAt(last), conversation, stream.source, stream.destination,
                DecodedPdu.Kind.FPDU);
        pdu.put("iwarp_mpa.ulpdulength", WiresharkFormat.dec(frame.ulpduLength));
        if (stream.receiverMss > 0) {
            pdu.mulpdu(Fpdu.mulpdu(stream.receiverMss, markers));
        }
        pdu.octets(frame.ulpdu, frame.pad);
        if (frame.pad.length > 0) {
            pdu.put("iwarp_mpa.pad", WiresharkFormat.bytes(frame.pad));
        }
        // Wireshark shows the four CRC octets as a big-endian number; the CRC itself is little-endian.
        String crcField = WiresharkFormat.hex32(Integer.reverseBytes(frame.crcField));
        String verdict = "";
        if (crc) {
            pdu.put("iwarp_mpa.crc_check", crcField);
            pdu.crcGood(frame.crcGood());
            verdict = frame.crcGood() ? " [Good CRC32]" : " [Bad CRC32]";
            if (!frame.crcGood()) {
                pdu.problem(String.format("bad CRC32: field 0x%08x, computed 0x%08x", frame.crcField,
                        frame.crcComputed));
            }
        } else {
            pdu.put("iwarp_mpa.crc", crcField);
        }
        for (int i = 0; i < frame.markerPointers.length; i++) {
            pdu.append("iwarp_mpa.marker_res", WiresharkFormat.hex16(frame.markerReserved[i]));
            pdu.append("iwarp_mpa.marker_fpduptr", WiresharkFormat.dec(frame.markerPointers[i]));
        }
        if (!frame.markersValid) {
            pdu.problem("marker FPDUPTR does not point at this FPDU (RFC 5044 section 4.3)");
        }
        String ddp = DdpRdmapFields.decode(frame.ulpdu, pdu);
        pdu.summary(ddp + " ulpdu=" + frame.ulpduLength + verdict);
        return pdu;
    }

    private String prefix() {
        return "conversation " + conversation + " " + stream.source + ": ";
    }
}
