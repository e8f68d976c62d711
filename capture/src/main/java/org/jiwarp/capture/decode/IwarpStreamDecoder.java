package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;

/**
 * Decodes the iWARP traffic of a capture: per TCP conversation, finds the MPA Request and Reply by
 * their keys at the start of the two directions, applies what they negotiated (CRC in both
 * directions if either set C; markers per direction, RFC 5044 section 7.1), then reads FPDUs in
 * both directions, strips markers, checks CRCs and decodes DDP and RDMAP headers.
 *
 * <p>Never throws on bad input: what cannot be decoded becomes a problem on the PDU or a note on
 * the capture.
 */
public final class IwarpStreamDecoder {

    private IwarpStreamDecoder() {
    }

    /** Decodes every conversation of a capture held in memory. */
    public static CaptureDecode decode(PcapFile file) {
        List<DecodedPdu> pdus = new ArrayList<>();
        StreamingDecode stream = new StreamingDecode(pdus::add, Long.MAX_VALUE);
        for (PcapRecord record : file.records()) {
            stream.add(record, file.linkType(record));
        }
        List<String> notes = new ArrayList<>();
        if (file.warning() != null) {
            notes.add(file.warning());
        }
        stream.finish();
        notes.addAll(stream.notes());
        return new CaptureDecode(pdus, notes, stream.iwarpConversations(), stream.tcpConversations());
    }

    /**
     * What {@link #decodeConversation} decided for a conversation: whether it is iWARP, and the
     * decoder that read each direction's FPDUs ({@code null} where none runs).
     */
    record Setup(boolean iwarp, FpduDecoder forward, FpduDecoder backward, boolean forwardByContent,
            boolean backwardByContent) {
    }

    /**
     * Decodes a conversation from its start: the MPA Request and Reply, then FPDUs both ways; or, for
     * a capture that began later, from the FPDU boundaries found. {@code partial}: the streams go
     * on past what {@code forward} and {@code backward} hold (see {@link FpduDecoder#partial()}).
     */
    static Setup decodeConversation(int index, String client, String server, CapturedStream forward,
            CapturedStream backward, List<DecodedPdu> pdus, List<String> notes, boolean partial) {
        CapturedStream initiator;
        CapturedStream responder;
        if (forward.startsWithRequest()) {
            initiator = forward;
            responder = backward;
        } else if (backward.startsWithRequest()) {
            initiator = backward;
            responder = forward;
        } else {
            return decodeMidConnection(index, client, server, forward, backward, pdus, notes, partial);
        }
        Setup notDecoded = new Setup(true, null, null, false, false);
        ByteBuf requestBytes = Unpooled.wrappedBuffer(initiator.bytes, 0, initiator.firstRunEnd());
        DecodedPdu request = decodeFrame(initiator, requestBytes, index, DecodedPdu.Kind.MPA_REQUEST);
        pdus.add(request);
        if (request.problems().contains(TRUNCATED_FRAME)) {
            notes.add("conversation " + index + ": the capture ends inside the MPA Request");
            return notDecoded;
        }
        if (privateDataTooLong(requestBytes, index, "Request", notes)) {
            return notDecoded;
        }
        ByteBuf replyBytes = Unpooled.wrappedBuffer(responder.bytes, 0, responder.firstRunEnd());
        if (responder.firstRunEnd() < MpaFrames.KEY_LENGTH || !MpaFrames.isReply(replyBytes, 0)) {
            notes.add("conversation " + index + ": MPA Request without an MPA Reply");
            return notDecoded;
        }
        DecodedPdu reply = decodeFrame(responder, replyBytes, index, DecodedPdu.Kind.MPA_REPLY);
        pdus.add(reply);
        if (reply.problems().contains(TRUNCATED_FRAME)) {
            notes.add("conversation " + index + ": the capture ends inside the MPA Reply");
            return notDecoded;
        }
        if (privateDataTooLong(replyBytes, index, "Reply", notes)) {
            return notDecoded;
        }
        if (MpaFrames.rejectFlag(replyBytes, 0)) {
            notes.add("conversation " + index + ": the responder rejected the connection (R bit)");
            return notDecoded;
        }
        // RFC 5044 section 7.1: CRC in both directions if either side set C; M asks the peer for markers.
        boolean crc = MpaFrames.crcFlag(requestBytes, 0) || MpaFrames.crcFlag(replyBytes, 0);
        boolean initiatorMarkers = MpaFrames.markerFlag(replyBytes, 0);
        boolean responderMarkers = MpaFrames.markerFlag(requestBytes, 0);
        int requestEnd = MpaFrames.frameLength(requestBytes, 0);
        int replyEnd = MpaFrames.frameLength(replyBytes, 0);
        FpduDecoder initiatorFpdus = new FpduDecoder(initiator, index, crc, initiatorMarkers, requestEnd, pdus, notes);
        FpduDecoder responderFpdus = new FpduDecoder(responder, index, crc, responderMarkers, replyEnd, pdus, notes);
        if (partial) {
            initiatorFpdus.partial();
            responderFpdus.partial();
        }
        initiatorFpdus.decodeFrom(requestEnd);
        responderFpdus.decodeFrom(replyEnd);
        return initiator == forward ? new Setup(true, initiatorFpdus, responderFpdus, false, false)
                : new Setup(true, responderFpdus, initiatorFpdus, false, false);
    }

    /**
     * Whether the whole Request or Reply at the start of {@code frame} announces more private data
     * than RFC 5044 section 7.1 allows, noting it if so. Such a frame is invalid (a peer fails the
     * connection on it, MPA error 0x04), so it starts no full operation: its announced length,
     * up to 65 535 octets past the header, says nothing about where FPDUs would begin and may lie
     * past everything captured. Wireshark stops at it too.
     */
    private static boolean privateDataTooLong(ByteBuf frame, int index, String which, List<String> notes) {
        int pdLength = MpaFrames.privateDataLength(frame, 0);
        if (pdLength <= MpaFrames.MAX_PRIVATE_DATA_LENGTH) {
            return false;
        }
        notes.add("conversation " + index + ": the MPA " + which + " announces " + pdLength + " octets of private "
                + "data, more than the 512 of RFC 5044 section 7.1; no FPDUs are decoded after an invalid " + which);
        return true;
    }

    /**
     * A conversation whose capture began after the MPA negotiation (or inside an FPDU): each
     * direction is searched first for a marker that points at an FPDU (markers located by their
     * content, which also finds a sender's grid that is not RFC 5044's), then for the first FPDU
     * boundary a chain of plausible FPDUs confirms, and decoded from there, with the skipped octets
     * reported.
     */
    private static Setup decodeMidConnection(int index, String client, String server, CapturedStream forward,
            CapturedStream backward, List<DecodedPdu> pdus, List<String> notes, boolean partial) {
        List<CapturedStream> streams = List.of(forward, backward);
        ContentMarkers.Located[] located = new ContentMarkers.Located[2];
        FpduBoundarySearch.Boundary[] plain = new FpduBoundarySearch.Boundary[2];
        boolean any = false;
        boolean crc = false;
        for (int i = 0; i < 2; i++) {
            CapturedStream stream = streams.get(i);
            located[i] = firstMarker(stream);
            plain[i] = firstBoundary(stream);
            if (located[i] != null && plain[i] != null) {
                // Payload words can pass for markers (periodic data, small integers): take markers
                // as on only when reading with them explains more of the stream than without.
                int end = stream.runEnd(stream.runOf(located[i].offset()));
                int withMarkers = located[i].reach(stream.bytes, end);
                int without = plain[i].offset() < end
                        ? FpduBoundarySearch.reach(stream.bytes, plain[i].offset(), end, plain[i].crc()) : -1;
                if (without >= withMarkers) {
                    located[i] = null;
                } else {
                    plain[i] = null;
                }
            }
            any |= located[i] != null || plain[i] != null;
            // RFC 5044 section 7.1: CRC is used both ways or neither; a good CRC either way decides.
            crc |= (located[i] != null && located[i].crc()) || (plain[i] != null && plain[i].crc());
        }
        if (!any) {
            notes.add("conversation " + index + " (" + client + " <-> " + server
                    + "): not iWARP: no MPA Request frame at the start of either direction, and no run of FPDUs");
            return new Setup(false, null, null, false, false);
        }
        FpduDecoder[] decoders = new FpduDecoder[2];
        for (int i = 0; i < 2; i++) {
            CapturedStream stream = streams.get(i);
            if (located[i] == null && plain[i] == null) {
                continue;
            }
            int offset = located[i] != null ? located[i].offset() : plain[i].offset();
            String how = located[i] != null ? "a marker pointing at one (markers located by their content)"
                    : (crc ? "length, header and CRC" : "length and header") + " plausibility";
            notes.add("conversation " + index + " " + stream.source + ": the capture begins mid-connection (no MPA "
                    + "Request); FPDUs found by " + how + " after " + offset + " octet" + (offset == 1 ? "" : "s")
                    + " skipped; CRC taken as " + (crc ? "on" : "off") + ", markers as "
                    + (located[i] != null ? "on" : "off"));
            FpduDecoder decoder = new FpduDecoder(stream, index, crc, located[i] != null, offset, pdus, notes);
            if (partial) {
                decoder.partial();
            }
            if (located[i] != null) {
                decoder.decodeFrom(offset, located[i].markers());
            } else {
                decoder.decodeFrom(offset);
            }
            decoders[i] = decoder;
        }
        return new Setup(true, decoders[0], decoders[1], located[0] != null, located[1] != null);
    }

    /** The first FPDU a marker points at, in the first run of {@code stream} that holds one, CRC on or off. */
    static ContentMarkers.Located firstMarker(CapturedStream stream) {
        for (int run = 0; run < stream.runs(); run++) {
            for (boolean crc : new boolean[] {true, false}) {
                ContentMarkers.Located located = ContentMarkers.find(stream.bytes, stream.runStart(run),
                        stream.runEnd(run), crc);
                if (located != null) {
                    return located;
                }
            }
        }
        return null;
    }

    /** The first FPDU boundary in the first run of {@code stream} that holds one. */
    static FpduBoundarySearch.Boundary firstBoundary(CapturedStream stream) {
        for (int run = 0; run < stream.runs(); run++) {
            FpduBoundarySearch.Boundary boundary = FpduBoundarySearch.find(stream.bytes, stream.runStart(run),
                    stream.runEnd(run), -1, false, new boolean[] {true, false});
            if (boundary != null) {
                return boundary;
            }
        }
        return null;
    }

    static final String TRUNCATED_FRAME = "truncated MPA Request/Reply frame";

    static DecodedPdu decodeFrame(CapturedStream stream, ByteBuf buf, int conversation, DecodedPdu.Kind kind) {
        boolean request = kind == DecodedPdu.Kind.MPA_REQUEST;
        int available = buf.readableBytes();
        int end = available >= MpaFrames.HEADER_LENGTH
                ? Math.min(available, MpaFrames.frameLength(buf, 0)) : available;
        DecodedPdu pdu = new DecodedPdu(stream.frameAt(Math.max(end - 1, 0)), conversation, stream.source,
                stream.destination, kind);
        pdu.octets(java.util.Arrays.copyOf(stream.bytes, Math.min(end, stream.bytes.length)), new byte[0]);
        if (available < MpaFrames.HEADER_LENGTH) {
            pdu.problem(TRUNCATED_FRAME);
            pdu.summary(request ? "MPA Request Frame (truncated)" : "MPA Reply Frame (truncated)");
            return pdu;
        }
        int flags = MpaFrames.flags(buf, 0);
        int revision = MpaFrames.revision(buf, 0);
        int pdLength = MpaFrames.privateDataLength(buf, 0);
        pdu.put(request ? "iwarp_mpa.key.req" : "iwarp_mpa.key.rep", WiresharkFormat.bytes(stream.bytes, 0, 16));
        pdu.put("iwarp_mpa.marker_flag", WiresharkFormat.bool((flags & MpaFrames.MARKER_FLAG) != 0));
        pdu.put("iwarp_mpa.crc_flag", WiresharkFormat.bool((flags & MpaFrames.CRC_FLAG) != 0));
        pdu.put("iwarp_mpa.rej_flag", WiresharkFormat.bool((flags & MpaFrames.REJECT_FLAG) != 0));
        pdu.put("iwarp_mpa.res", WiresharkFormat.hex8(flags & MpaFrames.RESERVED_MASK_RFC5044));
        pdu.put("iwarp_mpa.rev", WiresharkFormat.dec(revision));
        StringBuilder summary = new StringBuilder(request ? "MPA Request Frame" : "MPA Reply Frame");
        summary.append(" rev=").append(revision)
                .append(" M=").append((flags & MpaFrames.MARKER_FLAG) != 0 ? 1 : 0)
                .append(" C=").append((flags & MpaFrames.CRC_FLAG) != 0 ? 1 : 0);
        if ((flags & MpaFrames.REJECT_FLAG) != 0) {
            summary.append(" R=1 (rejected)");
        }
        if (pdLength > MpaFrames.MAX_PRIVATE_DATA_LENGTH) {
            // RFC 5044 section 7.1: private data is at most 512 octets; Wireshark stops here.
            pdu.problem("private data length " + pdLength + " exceeds 512");
            pdu.summary(summary.append(" pd_length=").append(pdLength).append(" (too long)").toString());
            return pdu;
        }
        pdu.put("iwarp_mpa.pdlength", WiresharkFormat.dec(pdLength));
        if (available < MpaFrames.HEADER_LENGTH + pdLength) {
            pdu.problem(TRUNCATED_FRAME);
            pdu.summary(summary.append(" (truncated)").toString());
            return pdu;
        }
        if (pdLength > 0) {
            pdu.put("iwarp_mpa.privatedata", WiresharkFormat.bytes(stream.bytes, MpaFrames.PRIVATE_DATA_OFFSET,
                    pdLength));
        }
        if ((flags & MpaFrames.ENHANCED_FLAG) != 0 && pdLength >= MpaEnhanced.LENGTH) {
            int pd = MpaFrames.PRIVATE_DATA_OFFSET;
            summary.append(" enhanced IRD=").append(MpaEnhanced.ird(buf, pd))
                    .append(" ORD=").append(MpaEnhanced.ord(buf, pd));
            if (MpaEnhanced.peerToPeer(buf, pd)) {
                summary.append(" P2P");
            }
            if (MpaEnhanced.sendRtr(buf, pd)) {
                summary.append(" SEND-RTR");
            }
            if (MpaEnhanced.writeRtr(buf, pd)) {
                summary.append(" WRITE-RTR");
            }
            if (MpaEnhanced.readRtr(buf, pd)) {
                summary.append(" READ-RTR");
            }
        }
        summary.append(" private_data=").append(pdLength);
        if ((flags & MpaFrames.RESERVED_MASK) != 0) {
            pdu.problem("reserved bits set in the MPA " + (request ? "Request" : "Reply"));
        }
        pdu.summary(summary.toString());
        return pdu;
    }

    static String endpoint(InetAddress address, int port) {
        String host = address.getHostAddress();
        return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
    }
}
