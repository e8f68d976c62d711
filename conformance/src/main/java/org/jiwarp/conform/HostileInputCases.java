package org.jiwarp.conform;

import static org.jiwarp.conform.Expect.closesAndServesOn;
import static org.jiwarp.conform.Expect.terminate;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_AND_READ_REQUEST;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_HEADER;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.NOTHING;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_CRC_ERROR;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_VERSION;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

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
 *   <li>{@link Group#CRASH} too: Terminates whose attached headers lie about their length (RFC 5040
 *       section 4.8: HdrCt says headers follow that the ULPDU does not hold, a DDP Segment Length
 *       longer than what is carried, a Terminate shorter than its own control field), which a
 *       receiver that trusts the lengths reads past the message; the answer is the close (section
 *       5.4), and the target serves the next connection. And broken MPA Requests (target listens) or
 *       Replies (target connects) one after another on fresh connections, each answered as RFC 5044
 *       section 7.1 says, then a good setup: the MPA group's own broken setups, run in sequence,
 *       and frames cut short before a close.</li>
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
        lyingTerminates(e);
        setupsInSequence(e);
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

    /** Terminates whose attached headers lie about their length: RFC 5040 4.8, 5.4. */
    private static void lyingTerminates(List<ConformCase> e) {
        String section = "RFC 5040 4.8 (HdrCt, DDP Segment Length), 5.4";
        byte[] readRequest = Ulpdus.readRequest(1, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, READ_SIZE,
                Session.UNKNOWN_STAG, 0);
        byte[] write = Ulpdus.write(Session.UNKNOWN_STAG, 0, WRITE_PAYLOAD);
        int mdr = TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_R;
        int md = TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D;
        e.add(c("terminate-says-headers-follow-but-ends", Group.CRASH, section,
                s -> s.sendGood(lyingTerminate(RDMAP_INVALID_STAG, mdr, new byte[0])),
                closesAndServesOn()));
        e.add(c("terminate-without-its-read-request-header", Group.CRASH, section,
                s -> s.sendGood(lyingTerminate(RDMAP_INVALID_STAG, mdr,
                        carried(readRequest.length, readRequest, DdpHeaders.UNTAGGED_HEADER_LENGTH))),
                closesAndServesOn()));
        e.add(c("terminate-ddp-header-cut-short", Group.CRASH, section,
                s -> s.sendGood(lyingTerminate(DDP_TAGGED_INVALID_STAG, md, carried(write.length, write, 6))),
                closesAndServesOn()));
        e.add(c("terminate-ddp-segment-length-past-what-is-carried", Group.CRASH, section,
                s -> s.sendGood(lyingTerminate(DDP_TAGGED_INVALID_STAG, md,
                        carried(0xFFFF, write, DdpHeaders.TAGGED_HEADER_LENGTH))),
                closesAndServesOn()));
        e.add(c("terminate-shorter-than-its-control-field", Group.CRASH, section,
                s -> s.sendGood(Ulpdus.truncate(Ulpdus.terminate(TerminateError.LLP_CRC_ERROR),
                        DdpHeaders.UNTAGGED_HEADER_LENGTH + TerminateHeader.CONTROL_LENGTH / 2)),
                closesAndServesOn()));
    }

    /** A Terminate (queue 2, MSN 1) whose control word names {@code error} and {@code hdrct}, then {@code body}. */
    private static byte[] lyingTerminate(TerminateError error, int hdrct, byte[] body) {
        return Ulpdus.terminate(Ulpdus.UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0,
                TerminateHeader.controlWord(error, hdrct), body);
    }

    /** A Terminate's body after its control word: the DDP Segment Length, then {@code octets} of {@code ulpdu}. */
    private static byte[] carried(int segmentLength, byte[] ulpdu, int octets) {
        byte[] body = new byte[TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH + octets];
        body[0] = (byte) (segmentLength >>> 8);
        body[1] = (byte) segmentLength;
        System.arraycopy(ulpdu, 0, body, TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH, octets);
        return body;
    }

    /** One broken MPA setup of a sequence: what the raw peer does and what the target must answer. */
    private record BrokenSetup(String name, ConformCase.Action action, Expect expect) {

        /** The MPA group's case {@code name}, as a step. */
        static BrokenSetup of(String name) {
            for (ConformCase c : ConformCatalogue.all()) {
                if (c.name().equals(name)) {
                    return new BrokenSetup(name, c.action(), c.expect());
                }
            }
            throw new IllegalStateException("no case " + name);
        }
    }

    /** Broken MPA Requests and Replies one after another on fresh connections: RFC 5044 7.1. */
    private static void setupsInSequence(List<ConformCase> e) {
        e.add(new ConformCase("mpa-requests-broken-in-sequence", Group.CRASH, Role.TARGET_LISTENS,
                EnumSet.of(Program.RPING), "RFC 5044 7.1.1, 7.1.2; RFC 6581 6, 9", ConformCase.Setup.MANUAL, s -> { },
                Expect.holds("seven broken MPA Requests one after another, each on a fresh connection (five of the "
                        + "mpa group's, a Request cut short in its key and one cut short in its private data, each "
                        + "then closed): each is refused (a close without a Reply, or a Reply with R and a close), "
                        + "and a good setup then carries rping's exchange", s -> inSequence(s, List.of(
                                BrokenSetup.of("request-bad-key"),
                                BrokenSetup.of("request-with-the-reply-key"),
                                BrokenSetup.of("request-revision-3"),
                                BrokenSetup.of("request-private-data-513"),
                                BrokenSetup.of("request-enhanced-without-ird-ord"),
                                new BrokenSetup("request-cut-short-in-its-key", t -> cutShort(t,
                                        Session.request(true, false).bytes(), 8), Expect.refused()),
                                new BrokenSetup("request-cut-short-in-its-private-data", t -> cutShort(t,
                                        Session.request(true, false).withClaimedLength(40).bytes(), 24),
                                        Expect.refused()))))));
        e.add(new ConformCase("mpa-replies-broken-in-sequence", Group.CRASH, Role.TARGET_CONNECTS,
                EnumSet.of(Program.RPING), "RFC 5044 7.1.1, 7.1.2 rules 3 and 9; RFC 6581 10",
                ConformCase.Setup.MANUAL, s -> { },
                Expect.holds("seven broken MPA Replies one after another, each to the target's Request on a fresh "
                        + "connection (six of the mpa group's and a Reply cut short in its key, then closed): the "
                        + "target closes each connection sending no FPDU, connects again, and a good Reply then "
                        + "carries rping's exchange", s -> inSequence(s, List.of(
                                BrokenSetup.of("reply-bad-key"),
                                BrokenSetup.of("reply-revision-3"),
                                BrokenSetup.of("reply-private-data-513"),
                                BrokenSetup.of("reply-unenhanced-to-an-enhanced-request"),
                                BrokenSetup.of("reply-rejects"),
                                BrokenSetup.of("reply-cut-short-then-close"),
                                new BrokenSetup("reply-cut-short-in-its-key", t -> {
                                    if (t.readRequest() != null) {
                                        cutShort(t, t.reply(true).bytes(), 8);
                                    }
                                }, Expect.closesWithoutFpdus()))))));
    }

    /** Writes the first {@code octets} of {@code frame}, then closes this end's half of the connection. */
    private static void cutShort(Session s, byte[] frame, int octets) throws IOException {
        s.peer.write(Arrays.copyOf(frame, octets));
        s.peer.shutdownOutput();
    }

    /**
     * Runs each broken setup on a connection of its own (the case's own first), judges the target's
     * answer to each, then asks rping's exchange of a fresh connection.
     */
    private static Judgement inSequence(Session s, List<BrokenSetup> setups) throws Exception {
        List<String> answers = new ArrayList<>();
        // A setup answered with the right Terminate in Linux siw 6.1's encoding of its control word goes on
        // as answered; the case is then judged as that encoding (KNOWN under a profile that lists it).
        boolean encodingOnly = false;
        for (int i = 0; i < setups.size(); i++) {
            BrokenSetup setup = setups.get(i);
            Session t = i == 0 ? s : s.another();
            try {
                try {
                    setup.action().run(t);
                } catch (IOException ignored) {
                    // the target may have closed already; its answer says whether rightly
                }
                Judgement j = setup.expect().judge(t);
                encodingOnly |= !j.pass() && j.encodingOnly();
                if (!j.pass() && !j.encodingOnly()) {
                    return Judgement.fail("setup " + (i + 1) + " of " + setups.size() + " (" + setup.name() + "): "
                            + j.observed() + (answers.isEmpty() ? "" : "; before it, " + String.join("; ", answers)));
                }
                answers.add(setup.name() + ": " + j.observed());
            } finally {
                if (t != s) {
                    t.close();
                }
            }
        }
        String after = s.exchangeOnAnotherConnection();
        String seen = String.join("; ", answers);
        if (after != null) {
            return Judgement.fail(seen + "; then a good setup failed: " + after);
        }
        seen += "; then a good setup carried rping's exchange";
        return encodingOnly ? new Judgement(false, seen, true, false) : Judgement.pass(seen);
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
