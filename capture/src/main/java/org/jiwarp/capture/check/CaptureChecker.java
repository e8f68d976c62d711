package org.jiwarp.capture.check;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * Checks a decoded capture against the RFCs, connection by connection and direction by direction,
 * in frame order (see the package documentation for the rules). Findings of one rule in one
 * direction are gathered into one finding listing every frame, its sentence taken from the first.
 *
 * <p>Only what the capture shows is judged: a Read Response whose Read Request the capture missed
 * is not reported when the capture began after the connection did.
 */
public final class CaptureChecker {

    /** Linux siw's Terminate encoding, named wherever a Terminate reads correctly only in its layout. */
    public static final String SIW_TERMINATE_QUIRK = "Linux siw 6.1 writes the Terminate control bitfields "
            + "little-endian (layer and error type nibbles swapped, HdrCt in the low bits)";

    /** Early implementations' markers, named wherever markers are found only off RFC 5044's grid. */
    public static final String DRIFTING_MARKER_QUIRK = "early iWARP implementations put markers on a grid that drifts "
            + "with every FPDU, or write FPDUPTR little-endian";

    private final AdvertisedStags stags = new AdvertisedStags();
    private final Map<Integer, Connection> connections = new TreeMap<>();

    /**
     * A checker that takes a capture's PDUs one at a time, in frame order, as
     * {@link org.jiwarp.capture.decode.StreamingDecode} hands them on. It keeps, per connection, what
     * the rules compare the next PDU with (next MSN and message offset per queue, outstanding Read
     * Requests and RPC-over-RDMA calls), the advertised STags, and each finding's frames.
     */
    public CaptureChecker() {
    }

    /** Every finding in the capture, ordered by first frame. */
    public static List<Finding> check(CaptureDecode decode) {
        CaptureChecker checker = new CaptureChecker();
        for (DecodedPdu pdu : decode.pdus()) {
            checker.add(pdu);
        }
        return checker.findings();
    }

    /** Checks the capture's next PDU (PDUs come in frame order). */
    public void add(DecodedPdu pdu) {
        stags.learn(pdu);
        connections.computeIfAbsent(pdu.conversation(), c -> new Connection(c, stags)).add(pdu);
    }

    /** Every finding so far, ordered by first frame: call once the last PDU is added. */
    public List<Finding> findings() {
        List<Finding> findings = new ArrayList<>();
        for (Connection connection : connections.values()) {
            findings.addAll(connection.findings());
        }
        findings.sort(Comparator.comparing((Finding f) -> f.frames().get(0)).thenComparing(f -> f.rule().ordinal()));
        return findings;
    }

    /** One outstanding Read Request: where its response must land, and how much has arrived. */
    private static final class ReadRequest {
        final int frame;
        final int sinkStag;
        final long sinkTo;
        final long size;
        long received;

        ReadRequest(int frame, int sinkStag, long sinkTo, long size) {
            this.frame = frame;
            this.sinkStag = sinkStag;
            this.sinkTo = sinkTo;
            this.size = size;
        }
    }

    /** What one direction has sent so far. */
    private static final class Direction {
        final String name;
        final Map<Long, Long> nextMsn = new HashMap<>();
        final Map<Long, Long> nextMo = new HashMap<>();
        /** Read Requests this direction sent that still await their responses, oldest first. */
        final Deque<ReadRequest> reads = new ArrayDeque<>();
        int terminateFrame;
        /** The IRD this side advertised (RFC 6581), or -1. */
        int ird = -1;
        /**
         * What this direction sent before the capture saw it is unknown (the capture began after
         * the MPA negotiation, or lost octets of it): MSNs, MOs and Read Requests may be missing.
         */
        boolean joinedLate;
        boolean taggedOpen;
        int taggedStag;
        long taggedNextTo;

        Direction(String name) {
            this.name = name;
        }
    }

    private static final class Connection {
        final int index;
        final Map<String, Direction> directions = new LinkedHashMap<>();
        final Map<String, Gathered> gathered = new LinkedHashMap<>();
        final AdvertisedStags stags;
        /** The connection's RPC-over-RDMA calls, or {@code null} when it is no RPC-over-RDMA connection. */
        RpcRdmaCalls calls;
        /** The ready-to-receive message the Reply chose in peer-to-peer mode (RFC 6581), as rtrBits, or 0. */
        int rtr;
        String initiatorSource;
        int initiatorFirstFpdu;
        int responderFirstFpdu;

        Connection(int index, AdvertisedStags stags) {
            this.index = index;
            this.stags = stags;
        }

        private static final class Gathered {
            final Rule rule;
            final String direction;
            final String sentence;
            final List<Integer> frames = new ArrayList<>();
            String quirk;

            Gathered(Rule rule, String direction, String sentence) {
                this.rule = rule;
                this.direction = direction;
                this.sentence = sentence;
            }
        }

        void report(Rule rule, Direction direction, int frame, String sentence, String quirk) {
            Gathered g = gathered.computeIfAbsent(rule + "|" + direction.name,
                    k -> new Gathered(rule, direction.name, sentence));
            if (!g.frames.contains(frame)) {
                g.frames.add(frame);
            }
            if (quirk != null) {
                g.quirk = quirk;
            }
        }

        void report(Rule rule, Direction direction, int frame, String sentence) {
            report(rule, direction, frame, sentence, null);
        }

        Direction direction(DecodedPdu pdu) {
            return directions.computeIfAbsent(pdu.source(), s -> new Direction(pdu.source() + " -> " + pdu.destination()));
        }

        private DecodedPdu request;
        private DecodedPdu reply;
        private boolean mpaChecked;

        void add(DecodedPdu pdu) {
            switch (pdu.kind()) {
                case MPA_REQUEST -> request = pdu;
                case MPA_REPLY -> reply = pdu;
                default -> afterMpa(pdu);
            }
        }

        /** The MPA exchange, once: before the first FPDU (the Reply, if captured, comes before it). */
        private void mpaBeforeFpdus() {
            if (mpaChecked) {
                return;
            }
            mpaChecked = true;
            if (request != null) {
                mpa(request, reply);
            }
        }

        private void afterMpa(DecodedPdu pdu) {
            mpaBeforeFpdus();
            if (calls == null && stags.rpcOverRdma(index)) {
                calls = new RpcRdmaCalls();
            }
            if (pdu.resynchronised() || (request == null && !directions.containsKey(pdu.source()))) {
                joinedLate(direction(pdu));
            }
            readyToReceive(pdu);
            fpdu(pdu);
        }

        List<Finding> findings() {
            mpaBeforeFpdus();
            List<Finding> findings = new ArrayList<>();
            for (Gathered g : gathered.values()) {
                g.frames.sort(null);
                String sentence = g.frames.size() == 1 ? g.sentence
                        : g.sentence + " (" + g.frames.size() + " times in all)";
                findings.add(new Finding(g.rule, List.copyOf(g.frames), index, g.direction, sentence, g.quirk));
            }
            return findings;
        }

        /**
         * Forgets what {@code direction} was expected to send next: the octets before its next PDU
         * are not in the capture. Read Responses it owed may have been among them, so the peer's
         * outstanding Read Requests are dropped too.
         */
        private void joinedLate(Direction direction) {
            direction.joinedLate = true;
            if (calls != null) {
                calls.lost();
            }
            direction.nextMsn.clear();
            direction.nextMo.clear();
            direction.taggedOpen = false;
            Direction peer = peerOf(direction);
            if (peer != null) {
                peer.reads.clear();
            }
        }

        // ---- MPA connection setup -------------------------------------------------------------

        private void mpa(DecodedPdu request, DecodedPdu reply) {
            Direction initiator = direction(request);
            ByteBuf req = Unpooled.wrappedBuffer(request.octets());
            if (req.readableBytes() < MpaFrames.HEADER_LENGTH) {
                return;
            }
            frame(request, initiator, req, "Request");
            int requestRevision = MpaFrames.revision(req, 0);
            boolean enhanced = (MpaFrames.flags(req, 0) & MpaFrames.ENHANCED_FLAG) != 0 && requestRevision == 2;
            if (enhanced && MpaFrames.privateDataLength(req, 0) >= MpaEnhanced.LENGTH
                    && req.readableBytes() >= MpaFrames.PRIVATE_DATA_OFFSET + MpaEnhanced.LENGTH) {
                initiator.ird = MpaEnhanced.ird(req, MpaFrames.PRIVATE_DATA_OFFSET);
            }
            if (reply == null) {
                return;
            }
            Direction responder = direction(reply);
            ByteBuf rep = Unpooled.wrappedBuffer(reply.octets());
            if (rep.readableBytes() < MpaFrames.HEADER_LENGTH) {
                return;
            }
            frame(reply, responder, rep, "Reply");
            int replyRevision = MpaFrames.revision(rep, 0);
            boolean rejected = MpaFrames.rejectFlag(rep, 0);
            if (replyRevision > requestRevision) {
                report(Rule.MPA_REVISION, responder, reply.frameNumber(), "the MPA Reply has revision "
                        + replyRevision + ", above the Request's " + requestRevision + ".");
            }
            if (!enhanced || rejected) {
                return;
            }
            boolean replyEnhanced = (MpaFrames.flags(rep, 0) & MpaFrames.ENHANCED_FLAG) != 0 && replyRevision == 2;
            if (!replyEnhanced) {
                report(Rule.MPA_ENHANCED, responder, reply.frameNumber(), "the Request asked for the enhanced "
                        + "connection setup but the Reply is not revision 2 with the Enhanced bit.");
                return;
            }
            if (MpaFrames.privateDataLength(rep, 0) < MpaEnhanced.LENGTH
                    || rep.readableBytes() < MpaFrames.PRIVATE_DATA_OFFSET + MpaEnhanced.LENGTH) {
                return; // reported by frame()
            }
            int pd = MpaFrames.PRIVATE_DATA_OFFSET;
            responder.ird = MpaEnhanced.ird(rep, pd);
            int offered = rtrBits(req, pd);
            int chosen = rtrBits(rep, pd);
            if ((chosen & ~offered) != 0) {
                report(Rule.MPA_ENHANCED, responder, reply.frameNumber(), "the Reply chooses " + rtrNames(chosen & ~offered)
                        + " as ready-to-receive message, which the Request did not offer.");
            } else if (Integer.bitCount(chosen) > 1) {
                report(Rule.MPA_ENHANCED, responder, reply.frameNumber(), "the Reply chooses "
                        + Integer.bitCount(chosen) + " ready-to-receive messages (" + rtrNames(chosen) + "); it picks one.");
            } else if (MpaEnhanced.peerToPeer(req, pd)) {
                rtr = chosen;
                initiatorSource = request.source();
            }
        }

        /**
         * RFC 6581 section 3, peer-to-peer mode: the initiator's first FPDU is the ready-to-receive
         * message the Reply chose, and the responder sends none before it.
         */
        private void readyToReceive(DecodedPdu pdu) {
            if (rtr == 0) {
                return;
            }
            Direction direction = direction(pdu);
            if (pdu.source().equals(initiatorSource)) {
                if (initiatorFirstFpdu == 0) {
                    initiatorFirstFpdu = pdu.frameNumber();
                    if (!isRtr(pdu.octets(), rtr)) {
                        report(Rule.MPA_RTR, direction, pdu.frameNumber(), "the initiator's first FPDU is not the "
                                + rtrNames(rtr) + " the Reply chose as ready-to-receive message.");
                    }
                }
            } else if (responderFirstFpdu == 0) {
                responderFirstFpdu = pdu.frameNumber();
                if (initiatorFirstFpdu == 0) {
                    report(Rule.MPA_RTR, direction, pdu.frameNumber(), "the responder sends an FPDU before the "
                            + "initiator's ready-to-receive message.");
                }
            }
        }

        private static boolean isRtr(byte[] octets, int rtr) {
            if (octets.length < DdpHeaders.TAGGED_HEADER_LENGTH) {
                return false;
            }
            ByteBuf buf = Unpooled.wrappedBuffer(octets);
            int opcode = RdmapHeaders.opcodeCode(buf, 0);
            boolean last = DdpHeaders.last(buf, 0);
            return switch (rtr) {
                case 1 -> opcode == RdmapOpcode.SEND.code() && last && octets.length == DdpHeaders.UNTAGGED_HEADER_LENGTH;
                case 2 -> opcode == RdmapOpcode.RDMA_WRITE.code() && last && octets.length == DdpHeaders.TAGGED_HEADER_LENGTH;
                default -> opcode == RdmapOpcode.RDMA_READ_REQUEST.code()
                        && octets.length >= DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH
                        && ReadRequestHeader.readSize(buf, DdpHeaders.UNTAGGED_HEADER_LENGTH) == 0;
            };
        }

        private static int rtrBits(ByteBuf frame, int pd) {
            return (MpaEnhanced.sendRtr(frame, pd) ? 1 : 0) | (MpaEnhanced.writeRtr(frame, pd) ? 2 : 0)
                    | (MpaEnhanced.readRtr(frame, pd) ? 4 : 0);
        }

        private static String rtrNames(int bits) {
            List<String> names = new ArrayList<>();
            if ((bits & 1) != 0) {
                names.add("a zero-length Send");
            }
            if ((bits & 2) != 0) {
                names.add("a zero-length Write");
            }
            if ((bits & 4) != 0) {
                names.add("a zero-length Read");
            }
            return String.join(" and ", names);
        }

        /** Checks that apply to a Request and a Reply alike. */
        private void frame(DecodedPdu pdu, Direction direction, ByteBuf frame, String which) {
            int revision = MpaFrames.revision(frame, 0);
            int flags = MpaFrames.flags(frame, 0);
            int frameNumber = pdu.frameNumber();
            if (revision != MpaFrames.REVISION_1 && revision != MpaFrames.REVISION_2) {
                report(Rule.MPA_REVISION, direction, frameNumber, "the MPA " + which + " has revision " + revision
                        + "; RFC 5044 defines 1 and RFC 6581 defines 2.");
            }
            int reserved = flags & (revision == MpaFrames.REVISION_2 ? MpaFrames.RESERVED_MASK
                    : MpaFrames.RESERVED_MASK_RFC5044);
            if (reserved != 0) {
                report(Rule.MPA_RESERVED, direction, frameNumber, String.format("the MPA %s sets reserved bits 0x%02x, "
                        + "which a sender must leave zero.", which, reserved));
            }
            int pdLength = MpaFrames.privateDataLength(frame, 0);
            if (pdLength > MpaFrames.MAX_PRIVATE_DATA_LENGTH) {
                report(Rule.MPA_PRIVATE_DATA, direction, frameNumber, "the MPA " + which + " announces " + pdLength
                        + " octets of private data, more than the 512 allowed.");
            }
            if ((flags & MpaFrames.ENHANCED_FLAG) != 0 && revision == MpaFrames.REVISION_2
                    && pdLength < MpaEnhanced.LENGTH) {
                report(Rule.MPA_ENHANCED, direction, frameNumber, "the enhanced MPA " + which + " carries "
                        + pdLength + " octets of private data, too few for the IRD and ORD words.");
            }
        }

        // ---- FPDUs ----------------------------------------------------------------------------

        private void fpdu(DecodedPdu pdu) {
            Direction direction = direction(pdu);
            int frame = pdu.frameNumber();
            if (Boolean.FALSE.equals(pdu.crcGood())) {
                report(Rule.MPA_CRC, direction, frame, "an FPDU's CRC-32C does not match its contents.");
            }
            for (String problem : pdu.problems()) {
                if (problem.startsWith("marker placed")) {
                    report(Rule.MPA_MARKERS, direction, frame, "markers are not where RFC 5044 puts them: the sender "
                            + "follows a grid of its own (every marker still points at its FPDU).", DRIFTING_MARKER_QUIRK);
                }
                if (problem.startsWith("marker FPDUPTR")) {
                    report(Rule.MPA_MARKERS, direction, frame, "a marker's FPDUPTR does not point at the start of "
                            + "its FPDU.");
                }
            }
            for (byte b : pdu.pad()) {
                if (b != 0) {
                    report(Rule.MPA_PAD, direction, frame, "an FPDU's pad octets are not zero.");
                    break;
                }
            }
            byte[] octets = pdu.octets();
            if (pdu.mulpdu() > 0 && octets.length > pdu.mulpdu()) {
                // RFC 5044 section 5.2: a ULPDU is at most MULPDU, so that an FPDU fits one TCP segment.
                report(Rule.MPA_MULPDU, direction, frame, "an FPDU carries a ULPDU of " + octets.length + " octets, more "
                        + "than the MULPDU of " + pdu.mulpdu() + " that the receiver's MSS allows.");
            }
            if (octets.length < 2) {
                return;
            }
            ByteBuf buf = Unpooled.wrappedBuffer(octets);
            if (DdpHeaders.version(buf, 0) != DdpHeaders.DDP_VERSION) {
                report(Rule.DDP_VERSION, direction, frame, "a DDP segment has version " + DdpHeaders.version(buf, 0)
                        + " (DDP version 1 is the only one).");
                return;
            }
            if (DdpHeaders.reserved(buf, 0) != 0) {
                report(Rule.DDP_RESERVED, direction, frame, "a DDP segment sets the reserved bits of its control "
                        + "field, which a sender must leave zero.");
            }
            if (RdmapHeaders.version(buf, 0) != RdmapHeaders.RDMAP_VERSION) {
                report(Rule.RDMAP_VERSION, direction, frame, "an RDMAP message has version "
                        + RdmapHeaders.version(buf, 0) + " (RDMAP version 1 is the only one).");
                return;
            }
            boolean tagged = DdpHeaders.tagged(buf, 0);
            if (octets.length < DdpHeaders.headerLength(buf, 0)) {
                return; // the decoder reports the truncated header
            }
            RdmapOpcode opcode = RdmapOpcode.valueOf(RdmapHeaders.opcodeCode(buf, 0));
            String name = opcode == null ? String.format("opcode 0x%x", RdmapHeaders.opcodeCode(buf, 0))
                    : opcode.displayName();
            if (direction.terminateFrame != 0) {
                // RFC 5040 section 5.6: a Terminate is the last message on the stream.
                report(Rule.RDMAP_AFTER_TERMINATE, direction, frame, "a " + name + " follows the Terminate this side "
                        + "sent in frame " + direction.terminateFrame + ".");
            }
            if (opcode == null) {
                report(Rule.RDMAP_OPCODE, direction, frame, "an RDMAP message uses " + name + ", which no RFC defines.");
                return;
            }
            if (opcode.tagged() != tagged) {
                report(Rule.RDMAP_OPCODE, direction, frame, "a " + name + " is sent as " + (tagged ? "a tagged" : "an untagged")
                        + " DDP segment; it is " + (opcode.tagged() ? "tagged." : "untagged."));
                return;
            }
            if (tagged) {
                tagged(pdu, direction, buf, opcode);
            } else {
                untagged(pdu, direction, buf, opcode);
            }
        }

        private void tagged(DecodedPdu pdu, Direction direction, ByteBuf buf, RdmapOpcode opcode) {
            int frame = pdu.frameNumber();
            int stag = DdpHeaders.stag(buf, 0);
            long to = DdpHeaders.taggedOffset(buf, 0);
            long length = buf.readableBytes() - DdpHeaders.TAGGED_HEADER_LENGTH;
            boolean last = DdpHeaders.last(buf, 0);
            if (direction.taggedOpen && (stag != direction.taggedStag || to != direction.taggedNextTo)) {
                report(Rule.DDP_MO, direction, frame, String.format("a tagged segment for STag 0x%08x at TO 0x%x "
                        + "continues a message whose next segment was due at STag 0x%08x TO 0x%x.", stag, to,
                        direction.taggedStag, direction.taggedNextTo));
            }
            direction.taggedOpen = !last;
            direction.taggedStag = stag;
            direction.taggedNextTo = to + length;
            if (opcode == RdmapOpcode.RDMA_WRITE && stags.rpcOverRdma(index)) {
                chunk(pdu, direction, "an RDMA Write of " + length + " octets", stag, to, length);
            } else if (opcode == RdmapOpcode.RDMA_WRITE) {
                AdvertisedStags.Advert advert = stags.find(pdu.destination(), stag, frame);
                if (advert != null && !advert.covers(to, length)) {
                    report(Rule.DDP_TAGGED_BOUNDS, direction, frame, String.format("a Write of %d octets at TO 0x%x "
                            + "falls outside the buffer the receiver advertised: %s.", length, to, advert.describe()));
                }
            }
            if (opcode != RdmapOpcode.RDMA_READ_RESPONSE) {
                return;
            }
            Direction peer = peerOf(direction);
            ReadRequest read = peer == null ? null : peer.reads.peekFirst();
            if (read == null) {
                if (peer != null && peer.joinedLate) {
                    return; // its Read Request may be in what the capture missed
                }
                report(Rule.RDMAP_READ_RESPONSE, direction, frame, "a Read Response arrives with no Read Request "
                        + "outstanding.");
                return;
            }
            long expectedTo = read.sinkTo + read.received;
            if (stag != read.sinkStag || to != expectedTo) {
                report(Rule.RDMAP_READ_RESPONSE, direction, frame, String.format("a Read Response writes STag 0x%08x "
                        + "at TO 0x%x, but the oldest outstanding Read Request (frame %d) asked for STag 0x%08x at TO 0x%x.",
                        stag, to, read.frame, read.sinkStag, expectedTo));
            }
            read.received += length;
            if (read.received > read.size || (last && read.received != read.size)) {
                report(Rule.RDMAP_READ_RESPONSE, direction, frame, "a Read Response " + (last ? "ends after " : "runs to ")
                        + read.received + " octets for the Read Request of frame " + read.frame + ", which asked for "
                        + read.size + ".");
            }
            if (last || read.received >= read.size) {
                peer.reads.pollFirst();
            }
        }

        /** On an RPC-over-RDMA connection: the RDMA operation stays within a chunk the peer advertised. */
        private void chunk(DecodedPdu pdu, Direction direction, String what, int handle, long offset, long length) {
            AdvertisedStags.Advert advert = stags.chunk(pdu.destination(), handle, offset, length, pdu.frameNumber());
            if (advert == null) {
                report(Rule.RPCRDMA_CHUNK, direction, pdu.frameNumber(), String.format("%s targets handle 0x%08x, "
                        + "which no chunk the peer advertised names.", what, handle));
            } else if (!advert.covers(offset, length)) {
                report(Rule.RPCRDMA_CHUNK, direction, pdu.frameNumber(), String.format("%s at offset 0x%x falls "
                        + "outside the chunk the peer advertised: %s.", what, offset, advert.describe()));
            }
        }

        private void untagged(DecodedPdu pdu, Direction direction, ByteBuf buf, RdmapOpcode opcode) {
            int frame = pdu.frameNumber();
            long qn = DdpHeaders.qn(buf, 0);
            long msn = DdpHeaders.msn(buf, 0);
            long mo = DdpHeaders.mo(buf, 0);
            boolean last = DdpHeaders.last(buf, 0);
            if (qn != opcode.queueNumber()) {
                report(Rule.DDP_QUEUE, direction, frame, "a " + opcode.displayName() + " travels on queue " + qn
                        + "; its queue is " + opcode.queueNumber() + ".");
            }
            Long expectedMsn = direction.nextMsn.get(qn);
            Long expectedMo = direction.nextMo.get(qn);
            boolean continuing = expectedMo != null;
            if (continuing && (expectedMsn == null || msn != expectedMsn - 1)) {
                report(Rule.DDP_LAST, direction, frame, "a message with MSN " + msn + " on queue " + qn + " starts "
                        + "before the previous one (MSN " + (expectedMsn == null ? "?" : expectedMsn - 1)
                        + ") ended with a Last segment.");
                continuing = false;
            }
            // The first message seen on a queue of a direction that joined late cannot be judged.
            boolean judged = expectedMsn != null || !direction.joinedLate;
            if (!continuing && judged) {
                long due = expectedMsn == null ? 1 : expectedMsn;
                if (msn != due) {
                    // RFC 5041 section 5.3: MSN starts at 1 and counts every message on the queue.
                    report(Rule.DDP_MSN, direction, frame, "queue " + qn + " carries MSN " + msn + " where MSN " + due
                            + " was due.");
                }
                if (mo != 0) {
                    report(Rule.DDP_MO, direction, frame, "the first segment of message " + msn + " on queue " + qn
                            + " has MO " + mo + ", not 0.");
                }
            } else if (continuing && mo != expectedMo) {
                report(Rule.DDP_MO, direction, frame, "a segment of message " + msn + " on queue " + qn + " has MO "
                        + mo + " where the previous segment ended at " + expectedMo + ".");
            }
            long length = buf.readableBytes() - DdpHeaders.UNTAGGED_HEADER_LENGTH;
            direction.nextMsn.put(qn, (msn + 1) & 0xFFFF_FFFFL);
            if (last) {
                direction.nextMo.remove(qn);
            } else {
                direction.nextMo.put(qn, mo + length);
            }
            int body = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            if (calls != null && pdu.fields().containsKey("rpcordma.xid")) {
                String excess = calls.message(pdu, pdu.destination());
                if (excess != null) {
                    report(Rule.RPCRDMA_CREDITS, direction, frame, excess);
                }
            }
            switch (opcode) {
                case SEND, SEND_WITH_SE -> {
                    if (RdmapHeaders.invalidateStag(buf, 0) != 0) {
                        report(Rule.RDMAP_INVALIDATE_STAG, direction, frame, String.format("a %s carries 0x%08x in "
                                + "the Invalidate STag field, which only Send with Invalidate uses.",
                                opcode.displayName(), RdmapHeaders.invalidateStag(buf, 0)));
                    }
                }
                case SEND_WITH_INVALIDATE, SEND_WITH_SE_AND_INVALIDATE -> {
                    int invalidated = RdmapHeaders.invalidateStag(buf, 0);
                    if (calls != null && mo == 0 && buf.readableBytes() >= body + 4) {
                        // RFC 8797 section 4.1: the responder may invalidate a handle of the call it answers.
                        String wrong = calls.invalidation(opcode.displayName(), pdu.destination(), buf.getInt(body),
                                invalidated);
                        if (wrong != null) {
                            report(Rule.RPCRDMA_INVALIDATE, direction, frame, wrong);
                        }
                    }
                    List<AdvertisedStags.Advert> adverts = stags.before(pdu.destination(), frame);
                    if (!adverts.isEmpty() && stags.find(pdu.destination(), invalidated, frame) == null) {
                        report(Rule.RDMAP_INVALIDATE_STAG, direction, frame, String.format("a %s invalidates STag "
                                + "0x%08x, which the receiver did not advertise (it advertised %s).",
                                opcode.displayName(), invalidated, adverts.get(adverts.size() - 1).describe()));
                    }
                }
                case RDMA_READ_REQUEST -> {
                    if (buf.readableBytes() < body + ReadRequestHeader.LENGTH) {
                        return;
                    }
                    int sourceStag = ReadRequestHeader.sourceStag(buf, body);
                    long sourceTo = ReadRequestHeader.sourceTaggedOffset(buf, body);
                    long size = ReadRequestHeader.readSize(buf, body);
                    AdvertisedStags.Advert advert = stags.find(pdu.destination(), sourceStag, frame);
                    if (stags.rpcOverRdma(index)) {
                        chunk(pdu, direction, "an RDMA Read Request for " + size + " octets", sourceStag, sourceTo, size);
                    } else if (advert != null && !advert.covers(sourceTo, size)) {
                        report(Rule.DDP_TAGGED_BOUNDS, direction, frame, String.format("a Read Request for %d octets "
                                + "at TO 0x%x reaches outside the buffer the responder advertised: %s.", size, sourceTo,
                                advert.describe()));
                    }
                    direction.reads.addLast(new ReadRequest(frame, ReadRequestHeader.sinkStag(buf, body),
                            ReadRequestHeader.sinkTaggedOffset(buf, body), ReadRequestHeader.readSize(buf, body)));
                    Direction peer = peerOf(direction);
                    if (peer != null && peer.ird >= 0 && direction.reads.size() > peer.ird) {
                        report(Rule.RDMAP_IRD, direction, frame, direction.reads.size() + " Read Requests are outstanding, "
                                + "more than the IRD of " + peer.ird + " the peer announced.");
                    }
                }
                case TERMINATE -> {
                    direction.terminateFrame = frame;
                    terminate(direction, frame, buf, body, last);
                }
                default -> { }
            }
        }

        private void terminate(Direction direction, int frame, ByteBuf buf, int at, boolean last) {
            if (!last) {
                report(Rule.RDMAP_TERMINATE, direction, frame, "a Terminate does not fit in one DDP segment "
                        + "(the Last flag is clear).");
            }
            if (buf.readableBytes() < at + TerminateHeader.CONTROL_LENGTH) {
                report(Rule.RDMAP_TERMINATE, direction, frame, "a Terminate is too short for its control word.");
                return;
            }
            TerminateError error = TerminateHeader.error(buf, at);
            if (error == null) {
                boolean siw = TerminateHeader.looksLikeSiwLayout(buf, at);
                report(Rule.RDMAP_TERMINATE, direction, frame, String.format("a Terminate names layer %d, error type %d, "
                        + "code 0x%02x, which is no error of its layer%s", TerminateHeader.layerCode(buf, at),
                        TerminateHeader.errorType(buf, at), TerminateHeader.errorCode(buf, at),
                        siw ? "; read in Linux siw's layout it is a valid error." : "."), siw ? SIW_TERMINATE_QUIRK : null);
                if (siw) {
                    return; // the header-control bits are elsewhere in that layout
                }
            }
            int hdrct = TerminateHeader.hdrct(buf, at);
            int carried = buf.readableBytes() - at;
            int ddpHeader = TerminateHeader.d(buf, at) && carried > TerminateHeader.TERMINATED_DDP_HEADER_OFFSET
                    ? TerminateHeader.terminatedDdpHeaderLength(buf, at) : 0;
            int expected = TerminateHeader.length(hdrct, ddpHeader);
            if (carried < expected) {
                report(Rule.RDMAP_TERMINATE, direction, frame, "a Terminate's HdrCt bits (D=" + (TerminateHeader.d(buf, at) ? 1 : 0)
                        + " R=" + (TerminateHeader.r(buf, at) ? 1 : 0) + ") promise " + expected + " octets of headers "
                        + "but it carries " + carried + ".");
                return;
            }
            int reserved = TerminateHeader.reserved(buf, at);
            if (reserved != 0 || carried > expected) {
                terminateControl(direction, frame, buf, at, hdrct, reserved, carried, expected);
            }
        }

        /**
         * A Terminate whose control word sets reserved bits (RFC 5040 section 4.8: zero on transmit)
         * or whose HdrCt accounts for fewer octets than follow it; named as Linux siw's layout when
         * the octets read consistently as that.
         */
        private void terminateControl(Direction direction, int frame, ByteBuf buf, int at, int hdrct, int reserved,
                int carried, int expected) {
            StringBuilder what = new StringBuilder(String.format("a Terminate's control word reads %02x %02x %02x %02x:",
                    buf.getUnsignedByte(at), buf.getUnsignedByte(at + 1), buf.getUnsignedByte(at + 2),
                    buf.getUnsignedByte(at + 3)));
            if (reserved != 0) {
                what.append(String.format(" reserved bits set (0x%04x)", reserved)).append(carried > expected ? " and" : ",");
            }
            what.append(String.format(" HdrCt M=%d D=%d R=%d", bit(hdrct, TerminateHeader.HDRCT_M),
                    bit(hdrct, TerminateHeader.HDRCT_D), bit(hdrct, TerminateHeader.HDRCT_R)));
            what.append(carried > expected ? String.format(", which accounts for %d octets of the Terminate, yet it has %d",
                    expected, carried) : String.format(", which accounts for all %d octets of the Terminate", carried));
            int siwHdrct = TerminateHeader.siwHdrct(buf, at);
            int siwDdpHeader = (siwHdrct & TerminateHeader.HDRCT_D) != 0
                    && carried > TerminateHeader.TERMINATED_DDP_HEADER_OFFSET
                    ? DdpHeaders.headerLength(buf, at + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET) : 0;
            boolean siw = TerminateHeader.siwReserved(buf, at) == 0
                    && TerminateHeader.length(siwHdrct, siwDdpHeader) == carried
                    && TerminateError.valueOf(buf.getUnsignedByte(at) & 0xF, buf.getUnsignedByte(at) >>> 4,
                            TerminateHeader.errorCode(buf, at)) != null;
            if (siw) {
                what.append(String.format("; read as Linux siw's little-endian bitfields it says M=%d D=%d R=%d with "
                        + "nothing reserved, which what follows agrees with.", bit(siwHdrct, TerminateHeader.HDRCT_M),
                        bit(siwHdrct, TerminateHeader.HDRCT_D), bit(siwHdrct, TerminateHeader.HDRCT_R)));
            } else {
                what.append('.');
            }
            report(Rule.RDMAP_TERMINATE, direction, frame, what.toString(), siw ? SIW_TERMINATE_QUIRK : null);
        }

        private static int bit(int bits, int mask) {
            return (bits & mask) != 0 ? 1 : 0;
        }

        private Direction peerOf(Direction direction) {
            for (Direction other : directions.values()) {
                if (other != direction) {
                    return other;
                }
            }
            return null;
        }
    }
}
