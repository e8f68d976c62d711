package org.jiwarp.conform;

import static org.jiwarp.conform.Expect.terminate;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_AND_READ_REQUEST;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_HEADER;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.NOTHING;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_CRC_ERROR;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_VERSION;

import java.util.EnumSet;
import java.util.List;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Inputs that break real implementations rather than the letter of one field:
 *
 * <ul>
 *   <li>{@link Group#CORRUPTION}: with CRC negotiated, one bit flipped in one header field of an
 *       FPDU. RFC 5044 section 6 (and 8, code 2): a receiver that finds a CRC error answers with
 *       the LLP's CRC error and MUST NOT pass the FPDU up; so the answer names the CRC, not the DDP
 *       or RDMAP field that the flip damaged, which a receiver acting on the header before its CRC
 *       would report.</li>
 *   <li>{@link Group#CRASH}: an invalid DDP or RDMAP header as the very first FPDU a connection
 *       carries from this end, in each opcode's position. Linux siw's CVE-2026-23242: a header that
 *       {@code siw_get_hdr()} rejects before the FPDU's receive context is set up sent the error path
 *       to a NULL context, and the kernel crashed. The verdict is the RFC's Terminate; a target that
 *       stops answering fails this case or those after it.</li>
 * </ul>
 */
final class HostileInputCases {

    /** Where the flipped bit sits: the FPDU's octet (MPA length field first, no markers) and its mask. */
    private record Flip(String field, int octet, int mask) {
    }

    /** A Write of {@link #WRITE_PAYLOAD} octets: MPA length, then the tagged header at octet 2. */
    private static final List<Flip> WRITE_FLIPS = List.of(
            new Flip("mpa-length", 1, 0x02),
            new Flip("ddp-tagged-flag", 2, 0x80),
            new Flip("ddp-last-flag", 2, 0x40),
            new Flip("ddp-version", 2, 0x01),
            new Flip("rdmap-version", 3, 0x40),
            new Flip("rdmap-opcode", 3, 0x01),
            new Flip("stag", 4, 0x80),
            new Flip("tagged-offset", 8, 0x80));
    /** rping's Send: the untagged header at octet 2 (QN at 7, MSN at 11, MO at 15). */
    private static final List<Flip> SEND_FLIPS = List.of(
            new Flip("queue-number", 2 + 9, 0x01),
            new Flip("msn", 2 + 13, 0x04),
            new Flip("message-offset", 2 + 14, 0x80));
    /** A Read Request: its body after the untagged header (sink STag 18, sink TO 22, size 30, source 34, 38). */
    private static final List<Flip> READ_REQUEST_FLIPS = List.of(
            new Flip("read-size", 2 + 30, 0x80),
            new Flip("source-stag", 2 + 34, 0x80),
            new Flip("source-to", 2 + 38, 0x80));
    private static final int WRITE_PAYLOAD = 16;
    private static final int READ_SIZE = 8;

    private static final String CORRUPTION_SECTION = "RFC 5044 6, 8 (code 2): the CRC error, nothing placed";
    private static final String CVE = "CVE-2026-23242 (Linux siw: a header rejected before the receive context)";

    private HostileInputCases() {
    }

    static void add(List<ConformCase> e) {
        corruption(e);
        crash(e);
    }

    private static ConformCase c(String name, Group group, String section, ConformCase.Action action, Expect expect) {
        return new ConformCase(name, group, null, EnumSet.of(Program.RPING), section, ConformCase.Setup.CRC, action,
                expect);
    }

    private static void corruption(List<ConformCase> e) {
        for (Flip flip : WRITE_FLIPS) {
            e.add(c("corrupted-write-" + flip.field(), Group.CORRUPTION, CORRUPTION_SECTION,
                    s -> {
                        s.learnRegion();
                        flipAndSend(s, Ulpdus.write(s.stag, s.to, WRITE_PAYLOAD), flip);
                    },
                    terminate(LLP_CRC_ERROR, NOTHING)));
        }
        for (Flip flip : SEND_FLIPS) {
            e.add(c("corrupted-send-" + flip.field(), Group.CORRUPTION, CORRUPTION_SECTION,
                    s -> flipAndSend(s, s.applicationSend(s.nextSendMsn), flip),
                    terminate(LLP_CRC_ERROR, NOTHING)));
        }
        for (Flip flip : READ_REQUEST_FLIPS) {
            e.add(c("corrupted-read-request-" + flip.field(), Group.CORRUPTION, CORRUPTION_SECTION,
                    s -> {
                        s.learnRegion();
                        flipAndSend(s, Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO,
                                READ_SIZE, s.stag, s.to), flip);
                    },
                    terminate(LLP_CRC_ERROR, NOTHING)));
        }
    }

    private static void flipAndSend(Session s, byte[] ulpdu, Flip flip) throws Exception {
        byte[] fpdu = s.peer.frame(ulpdu);
        fpdu[flip.octet()] ^= (byte) flip.mask();
        s.peer.write(fpdu);
    }

    private static void crash(List<ConformCase> e) {
        // A DDP version the RFC does not know (0), each opcode in its own model and queue.
        for (RdmapOpcode opcode : List.of(RdmapOpcode.SEND, RdmapOpcode.SEND_WITH_INVALIDATE, RdmapOpcode.SEND_WITH_SE,
                RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE, RdmapOpcode.RDMA_READ_REQUEST, RdmapOpcode.TERMINATE)) {
            e.add(c("first-fpdu-ddp-version-0-" + name(opcode), Group.CRASH, "RFC 5041 4.1 (DV), 7.2; " + CVE,
                    s -> s.sendOffending(untagged(opcode, DdpHeaders.controlByte(false, true, 0, 0),
                            RdmapHeaders.controlByte(opcode))),
                    terminate(DDP_UNTAGGED_INVALID_VERSION, DDP_HEADER)));
        }
        for (RdmapOpcode opcode : List.of(RdmapOpcode.RDMA_WRITE, RdmapOpcode.RDMA_READ_RESPONSE)) {
            // The STag is one the target never issued: RFC 5041 7.2 orders no version check before it.
            e.add(c("first-fpdu-ddp-version-0-" + name(opcode), Group.CRASH, "RFC 5041 4.1 (DV), 7.2; " + CVE,
                    s -> s.sendOffending(Ulpdus.tagged(DdpHeaders.controlByte(true, true, 0, 0),
                            RdmapHeaders.controlByte(opcode), Session.UNKNOWN_STAG, 0, 8)),
                    terminate(List.of(DDP_TAGGED_INVALID_VERSION, DDP_TAGGED_INVALID_STAG), List.of(DDP_HEADER))));
        }
        // An RDMAP version the RFC does not know (0) under a valid DDP header.
        for (RdmapOpcode opcode : List.of(RdmapOpcode.SEND, RdmapOpcode.SEND_WITH_INVALIDATE, RdmapOpcode.SEND_WITH_SE,
                RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE)) {
            e.add(c("first-fpdu-rdmap-version-0-" + name(opcode), Group.CRASH, "RFC 5040 4.1 (RV), 7.2; " + CVE,
                    s -> s.sendOffending(untagged(opcode, Ulpdus.UNTAGGED_LAST,
                            RdmapHeaders.controlByte(0, 0, opcode.code()))),
                    terminate(RDMAP_INVALID_VERSION, DDP_HEADER)));
        }
        e.add(c("first-fpdu-rdmap-version-0-read-request", Group.CRASH, "RFC 5040 4.1 (RV), 4.8, 7.2; " + CVE,
                s -> s.sendOffending(Ulpdus.readRequest(Ulpdus.UNTAGGED_LAST,
                        RdmapHeaders.controlByte(0, 0, RdmapOpcode.RDMA_READ_REQUEST.code()),
                        DdpHeaders.QN_READ_REQUEST, 1, 0, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, READ_SIZE,
                        Session.UNKNOWN_STAG, 0)),
                terminate(List.of(RDMAP_INVALID_VERSION), List.of(DDP_HEADER, DDP_AND_READ_REQUEST))));
        for (RdmapOpcode opcode : List.of(RdmapOpcode.RDMA_WRITE, RdmapOpcode.RDMA_READ_RESPONSE)) {
            e.add(c("first-fpdu-rdmap-version-0-" + name(opcode), Group.CRASH, "RFC 5040 4.1 (RV), 7.2; " + CVE,
                    s -> s.sendOffending(Ulpdus.tagged(Ulpdus.TAGGED_LAST, RdmapHeaders.controlByte(0, 0, opcode.code()),
                            Session.UNKNOWN_STAG, 0, 8)),
                    terminate(List.of(RDMAP_INVALID_VERSION, DDP_TAGGED_INVALID_STAG), List.of(DDP_HEADER))));
        }
    }

    /** An untagged ULPDU of 8 octets on {@code opcode}'s queue, MSN 1, as the first of its queue. */
    private static byte[] untagged(RdmapOpcode opcode, int ddpControl, int rdmapControl) {
        int invalidate = opcode == RdmapOpcode.SEND_WITH_INVALIDATE || opcode == RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE
                ? Session.UNKNOWN_STAG : 0;
        return Ulpdus.untagged(ddpControl, rdmapControl, invalidate, opcode.queueNumber(), 1, 0,
                opcode == RdmapOpcode.TERMINATE ? 4 : 8);
    }

    private static String name(RdmapOpcode opcode) {
        return opcode.name().toLowerCase().replace("rdma_", "").replace('_', '-');
    }
}
