package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.jiwarp.wire.mpa.FpduReader;

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

    private final CapturedStream stream;
    private final int conversation;
    private final boolean crc;
    private final boolean markers;
    /** Stream offset of the first FPDU of full operation: the origin of the marker grid. */
    private final long origin;
    private final List<DecodedPdu> pdus;
    private final List<String> notes;

    FpduDecoder(CapturedStream stream, int conversation, boolean crc, boolean markers, int firstFpdu,
            List<DecodedPdu> pdus, List<String> notes) {
        this.stream = stream;
        this.conversation = conversation;
        this.crc = crc;
        this.markers = markers;
        this.origin = stream.streamOffset(firstFpdu);
        this.pdus = pdus;
        this.notes = notes;
    }

    /** Decodes every FPDU from {@code bytes[start]}, which is an FPDU boundary, on. */
    void decodeFrom(int start) {
        int run = stream.runOf(start);
        int at = start;
        boolean resynchronised = false;
        while (run < stream.runs()) {
            int end = stream.runEnd(run);
            at = readRun(run, at, end, resynchronised);
            if (run == stream.runs() - 1) {
                if (at < end) {
                    notes.add(prefix() + (end - at) + " octets at the end are not a whole FPDU");
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
            FpduBoundarySearch.Boundary boundary = null;
            int skippedRuns = 0;
            while (++run < stream.runs()) {
                int from = stream.runStart(run);
                boundary = FpduBoundarySearch.find(stream.bytes, from, stream.runEnd(run),
                        stream.streamOffset(run, from) - origin, markers, new boolean[] {crc});
                if (boundary != null) {
                    break;
                }
                skippedRuns++;
            }
            if (boundary == null) {
                notes.add(note.append("; no FPDU boundary found in what was captured after it").toString());
                return;
            }
            int skipped = boundary.offset() - stream.runStart(run);
            note.append("; resynchronised at stream offset ").append(stream.streamOffset(run, boundary.offset()))
                    .append(" (frame ").append(stream.frameAt(boundary.offset())).append(") after skipping ")
                    .append(skipped).append(" captured octet").append(skipped == 1 ? "" : "s");
            if (skippedRuns > 0) {
                note.append(" and ").append(skippedRuns).append(" further stretch")
                        .append(skippedRuns == 1 ? "" : "es").append(" without one");
            }
            notes.add(note.append(", found ").append(boundary.how()).toString());
            at = boundary.offset();
            resynchronised = true;
        }
        if (stream.missingTail) {
            notes.add(prefix() + "TCP data missing from the capture; decoded up to the gap");
        }
    }

    /** Reads FPDUs in {@code bytes[start, end)}; returns where the first incomplete one begins. */
    private int readRun(int run, int start, int end, boolean resynchronised) {
        ByteBuf buf = Unpooled.wrappedBuffer(stream.bytes, 0, end);
        buf.readerIndex(start);
        FpduReader reader = new FpduReader(markers, stream.streamOffset(run, start) - origin);
        boolean first = resynchronised;
        while (buf.isReadable()) {
            int fpduStart = buf.readerIndex();
            FpduReader.Frame frame = reader.read(buf);
            if (frame == null) {
                return fpduStart;
            }
            DecodedPdu pdu = toPdu(frame, fpduStart);
            if (first) {
                pdu.resynchronised(true);
                first = false;
            }
            pdus.add(pdu);
        }
        return end;
    }

    private DecodedPdu toPdu(FpduReader.Frame frame, int fpduStart) {
        int last = fpduStart + frame.wireLength - 1;
        DecodedPdu pdu = new DecodedPdu(stream.frameAt(last), conversation, stream.source, stream.destination,
                DecodedPdu.Kind.FPDU);
        pdu.put("iwarp_mpa.ulpdulength", WiresharkFormat.dec(frame.ulpduLength));
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
            pdu.put("iwarp_mpa.marker_res", join(pdu, "iwarp_mpa.marker_res",
                    WiresharkFormat.hex16(frame.markerReserved[i])));
            pdu.put("iwarp_mpa.marker_fpduptr", join(pdu, "iwarp_mpa.marker_fpduptr",
                    WiresharkFormat.dec(frame.markerPointers[i])));
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

    private static String join(DecodedPdu pdu, String field, String value) {
        String before = pdu.fields().get(field);
        return before == null ? value : before + "," + value;
    }
}
