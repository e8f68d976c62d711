package org.jiwarp.conform;

import static org.jiwarp.conform.Expect.carriesOn;
import static org.jiwarp.conform.Expect.carriesOnAfter;
import static org.jiwarp.conform.Expect.closesWithoutFpdus;
import static org.jiwarp.conform.Expect.refused;
import static org.jiwarp.conform.Expect.replyIs;
import static org.jiwarp.conform.Expect.terminate;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_AND_READ_REQUEST;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_HEADER;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.NOTHING;
import static org.jiwarp.conform.peer.Ulpdus.TAGGED_LAST;
import static org.jiwarp.conform.peer.Ulpdus.UNTAGGED_LAST;
import static org.jiwarp.conform.peer.Ulpdus.UNTAGGED_MORE;
import static org.jiwarp.conform.peer.Ulpdus.rdmap;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_TO_WRAP;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MO;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_QN;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_CRC_ERROR;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_TO_WRAP;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_UNEXPECTED_OPCODE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.TerminateCheck.Carried;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * The cases {@code jiwarp conform} applies to a black box through rping's protocol, by group. They
 * are the adversarial catalogue's cases (conformance-tests) that need nothing but the wire: what
 * each needs to know of the target (a registered buffer, an outstanding Read) comes from rping's
 * exchange ({@link Session}).
 *
 * <p>Where the RFCs name more than one error for what a case does (RFC 5041 section 7.1 lists "no
 * buffer" and "MSN range" for an MSN without a buffer; a TO that wraps also ends past the bounds),
 * the case accepts each, and its requirement lists them.
 */
public final class ConformCatalogue {

    /** The FPDU a segmentation case cuts: the probe's first FPDU is at least this long. */
    static final int SPLIT_OFFSETS = 39;

    /** An MSN that has no buffer: RFC 5041 7.1 names both codes for it. */
    private static final List<TerminateError> MSN_ERRORS = List.of(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
            DDP_UNTAGGED_INVALID_MSN_RANGE);

    private static final List<ConformCase> ALL = Collections.unmodifiableList(build());

    private ConformCatalogue() {
    }

    public static List<ConformCase> all() {
        return ALL;
    }

    /** Every case name, checked unique. */
    public static Set<String> names() {
        Set<String> names = new LinkedHashSet<>();
        for (ConformCase c : ALL) {
            if (!names.add(c.name())) {
                throw new IllegalStateException("duplicate case name " + c.name());
            }
        }
        return names;
    }

    private static List<ConformCase> build() {
        List<ConformCase> e = new ArrayList<>();
        mpaAsResponder(e);
        mpaAsInitiator(e);
        crc(e);
        ddpUntagged(e);
        ddpTagged(e);
        rdmapCases(e);
        readResponses(e);
        segmentation(e);
        HostileInputCases.add(e);
        ExhaustionCases.add(e);
        PerftestCases.add(e);
        return e;
    }

    private static ConformCase c(String name, Group group, Role role, String section, ConformCase.Setup setup,
            ConformCase.Action action, Expect expect) {
        return new ConformCase(name, group, role, java.util.EnumSet.of(Program.RPING), section, setup, action, expect);
    }

    private static ConformCase op(String name, Group group, String section, ConformCase.Action action, Expect expect) {
        return c(name, group, null, section, ConformCase.Setup.CRC, action, expect);
    }

    private static Expect term(TerminateError error) {
        return terminate(error, DDP_HEADER);
    }

    private static Expect termAny(List<TerminateError> errors, Carried... carried) {
        return terminate(errors, List.of(carried));
    }

    // ---------------------------------------------------------------------------------------------
    // MPA setup, the target responding: RFC 5044 7.1, RFC 6581 6 and 9.

    private static void mpaAsResponder(List<ConformCase> e) {
        Role r = Role.TARGET_LISTENS;
        ConformCase.Setup m = ConformCase.Setup.MANUAL;
        e.add(c("request-bad-key", Group.MPA, r, "RFC 5044 7.1.1 (Key), 7.1.2", m,
                s -> s.peer.write(Session.request(true, false)
                        .withKey("MPA ID Req Frane".getBytes(StandardCharsets.US_ASCII)).bytes()),
                refused()));
        e.add(c("request-with-the-reply-key", Group.MPA, r, "RFC 5044 7.1.1 (Key)", m,
                s -> s.peer.write(Session.request(true, false).withKey(MpaFrames.replyKey()).bytes()),
                refused()));
        e.add(c("request-revision-3", Group.MPA, r, "RFC 5044 7.1.1 (Rev), RFC 6581 6", m,
                s -> s.peer.write(Session.request(true, false).withRevision(3).bytes()),
                refused()));
        e.add(c("request-private-data-513", Group.MPA, r, "RFC 5044 7.1.1 (PD_Length: at most 512)", m,
                s -> s.peer.write(Session.request(true, false).withPrivateData(new byte[509]).bytes()),
                refused()));
        e.add(c("request-enhanced-without-ird-ord", Group.MPA, r, "RFC 6581 6, 9 (IRD/ORD words)", m,
                s -> s.peer.write(Session.request(true, false).withWords(null).withPrivateData(new byte[3]).bytes()),
                refused()));
        e.add(c("request-reserved-flag-bit", Group.MPA, r, "RFC 5044 7.1.1 (Res: not checked on reception)", m,
                s -> s.initiate(Session.request(true, false).withFlags(Session.request(true, false).flags() | 0x08)),
                carriesOn("the Request is accepted (Res MUST NOT be checked on reception) and rping goes on")));
        e.add(c("request-reject-bit", Group.MPA, r, "RFC 5044 7.1.1 (R: Reply only)", m,
                s -> s.initiate(Session.request(true, false)
                        .withFlags(Session.request(true, false).flags() | MpaFrames.REJECT_FLAG)),
                carriesOn("the Request is accepted (R has a meaning only in a Reply) and rping goes on")));
        e.add(c("request-revision-1", Group.MPA, r, "RFC 6581 6, 10 (revision 1 peers)", m,
                s -> s.initiate(new MpaBytes.Frame(false, MpaFrames.requestKey(), MpaFrames.CRC_FLAG, 1, null, null,
                        new byte[0])),
                replyIs("a Reply of revision 1 without R (a revision 2 responder serves revision 1 initiators)",
                        reply -> reply.revision() == 1 && !reply.reject())));
        e.add(c("request-ird-ord-all-ones", Group.MPA, r, "RFC 6581 9.1 (0x3FFF)", m,
                s -> s.initiate(Session.request(true, false).withWords(MpaBytes.Words.of(0x3FFF, 0x3FFF))),
                replyIs("a Reply with IRD and ORD 0x3FFF (RFC 6581 9.1: a responder answers an initiator's 0x3FFF "
                        + "with 0x3FFF)", reply -> reply.ird() == 0x3FFF && reply.ord() == 0x3FFF)));
        e.add(c("request-rtr-flags-without-p2p-ignored", Group.MPA, r, "RFC 6581 9.2 (B, C, D ignored when A is 0)",
                m, s -> s.initiate(Session.request(true, false).withWords(MpaBytes.Words.of(1, 1).raw(0x4001, 0xC001))),
                carriesOn("a client-server connection: the RTR bits are ignored and rping goes on")));
        e.add(c("request-asks-for-markers", Group.MPA, r, "RFC 5044 7.1.1 (M), 4.3", m,
                s -> s.initiate(Session.request(true, true)),
                carriesOn("the Request with M is accepted and the responder's FPDUs carry markers where section 4.3 "
                        + "puts them (checked on every FPDU) while rping goes on")));
        e.add(c("request-without-crc", Group.MPA, r, "RFC 5044 7.1.1 (C), 4.4", ConformCase.Setup.NO_CRC,
                s -> { },
                carriesOn("a connection without CRCs (or with them, if the responder asks) carries rping")));
    }

    // MPA setup, the target initiating: RFC 5044 7.1.2 rule 3, RFC 6581 9 and 10.
    private static void mpaAsInitiator(List<ConformCase> e) {
        Role r = Role.TARGET_CONNECTS;
        ConformCase.Setup m = ConformCase.Setup.MANUAL;
        e.add(c("reply-bad-key", Group.MPA, r, "RFC 5044 7.1.1 (Key), 7.1.2", m,
                s -> badReply(s, () -> s.reply(true).withKey(MpaFrames.requestKey())),
                closesWithoutFpdus()));
        e.add(c("reply-revision-3", Group.MPA, r, "RFC 5044 7.1.1 (Rev)", m,
                s -> badReply(s, () -> s.reply(true).withRevision(3)),
                closesWithoutFpdus()));
        e.add(c("reply-private-data-513", Group.MPA, r, "RFC 5044 7.1.1 (PD_Length: at most 512)", m,
                s -> badReply(s, () -> s.reply(true).withPrivateData(new byte[509])),
                closesWithoutFpdus()));
        e.add(c("reply-unenhanced-to-an-enhanced-request", Group.MPA, r, "RFC 6581 10", m,
                s -> badReply(s, () -> s.reply(true).withFlags(MpaFrames.CRC_FLAG).withRevision(1).withWords(null)),
                closesWithoutFpdus()));
        e.add(c("reply-rejects", Group.MPA, r, "RFC 5044 7.1.2 rule 3, 7.1.4.2", m,
                s -> badReply(s, () -> s.reply(true).withFlags(s.reply(true).flags() | MpaFrames.REJECT_FLAG)),
                closesWithoutFpdus()));
        e.add(c("reply-cut-short-then-close", Group.MPA, r, "RFC 5044 7.1.2 rule 9", m,
                s -> {
                    if (s.readRequest() != null) {
                        s.peer.write(Arrays.copyOf(s.reply(true).withClaimedLength(40).bytes(), 26));
                        s.peer.shutdownOutput();
                    }
                },
                closesWithoutFpdus()));
        e.add(c("reply-reserved-flag-bit", Group.MPA, r, "RFC 5044 7.1.1 (Res: not checked on reception)", m,
                s -> {
                    s.readRequest();
                    s.respond(s.reply(true).withFlags(s.reply(true).flags() | 0x04));
                },
                carriesOn("the Reply is accepted (Res MUST NOT be checked on reception) and rping goes on")));
        e.add(c("reply-asks-for-markers", Group.MPA, r, "RFC 5044 7.1.1 (M), 4.3", m,
                s -> {
                    if (s.readRequest() == null) {
                        throw new Session.SetupRefused("the target closed the connection before its MPA Request");
                    }
                    s.respond(MpaBytes.reply(MpaFrames.CRC_FLAG | MpaFrames.MARKER_FLAG,
                            MpaBytes.Words.of(Session.IRD_ORD, Math.min(Session.IRD_ORD, s.targetFrame.ird())),
                            new byte[0]));
                },
                carriesOn("the Reply with M is accepted and the initiator's FPDUs carry markers where section 4.3 "
                        + "puts them (checked on every FPDU) while rping goes on")));
        e.add(c("reply-sets-c-alone", Group.MPA, r, "RFC 5044 7.1.1 (C), 4.4", ConformCase.Setup.CRC,
                s -> { },
                carriesOn("CRCs in both directions once the Reply sets C (checked on every FPDU the target sends)")));
    }

    /** Reads the target's Request, then answers it with the Reply {@code reply} makes from it. */
    private static void badReply(Session s, java.util.function.Supplier<MpaBytes.Frame> reply) throws Exception {
        if (s.readRequest() != null) {
            s.peer.write(reply.get().bytes());
        }
    }

    // MPA framing and CRCs: RFC 5044 4, 6, 8.

    private static void crc(List<ConformCase> e) {
        e.add(op("bad-crc-in-the-first-fpdu", Group.CRC, "RFC 5044 4.4, 6, 8 (code 2)",
                s -> {
                    byte[] fpdu = s.peer.frame(s.applicationSend(s.nextSendMsn));
                    fpdu[10] ^= 0x01;
                    s.peer.write(fpdu);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("bad-crc-field", Group.CRC, "RFC 5044 4.4, 6, 8 (code 2)",
                s -> {
                    byte[] fpdu = s.peer.frame(s.applicationSend(s.nextSendMsn));
                    fpdu[fpdu.length - 1] ^= 0x80;
                    s.peer.write(fpdu);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("bad-crc-on-a-write", Group.CRC, "RFC 5044 4.4, 6, 8 (code 2)",
                s -> {
                    s.learnRegion();
                    byte[] fpdu = s.peer.frame(Ulpdus.write(s.stag, s.to, 16));
                    fpdu[20] ^= 0x04;
                    s.peer.write(fpdu);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("bad-crc-on-a-read-request", Group.CRC, "RFC 5044 4.4, 6, 8 (code 2)",
                s -> {
                    s.learnRegion();
                    byte[] fpdu = s.peer.frame(readOf(s, s.to, 8));
                    fpdu[30] ^= 0x40;
                    s.peer.write(fpdu);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("bad-crc-after-a-good-fpdu", Group.CRC, "RFC 5044 4.4, 6, 8 (code 2)",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.write(s.stag, s.to, 8));
                    byte[] fpdu = s.peer.frame(Ulpdus.write(s.stag, s.to + 8, 8));
                    fpdu[fpdu.length - 2] ^= 0x01;
                    s.peer.write(fpdu);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("garbage-instead-of-an-fpdu", Group.CRC, "RFC 5044 4.1, 6, 8 (code 2)",
                s -> {
                    byte[] garbage = new byte[24];
                    Arrays.fill(garbage, (byte) 0x5A);
                    garbage[0] = 0;
                    garbage[1] = 18;
                    s.peer.write(garbage);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(c("crc-off-crc-field-ignored", Group.CRC, null, "RFC 5044 4.1 (CRC), 7.1.1 (C)",
                ConformCase.Setup.NO_CRC,
                s -> {
                    if (s.peer.crc()) {
                        throw new Session.CaseFailure("the target asked for CRCs; the case needs them off");
                    }
                },
                carriesOnAfter("an FPDU whose CRC field is garbage is accepted when CRCs are off", s -> {
                    byte[] fpdu = s.peer.frame(s.applicationSend(s.nextSendMsn++));
                    System.arraycopy(new byte[] {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE, (byte) 0xEF}, 0, fpdu,
                            fpdu.length - 4, 4);
                    s.peer.write(fpdu);
                    s.awaitApplicationReaction();
                })));
        e.add(op("pad-octets-ignored", Group.CRC, "RFC 5044 4.1 (PAD: not checked on reception)",
                s -> {
                    s.learnRegion();
                    byte[] fpdu = s.peer.frame(Ulpdus.write(s.stag, s.to, 5));
                    for (int i = 2 + 19; i < 2 + 19 + 3; i++) {
                        fpdu[i] = (byte) 0xEE;
                    }
                    s.peer.write(RawConnection.recrc(fpdu));
                },
                carriesOn("a Write with non-zero pad octets under a good CRC is placed and rping goes on")));
    }

    // DDP untagged buffers: RFC 5041 4.1, 4.3, 5.3, 7.1, 7.2; RFC 5040 5.3.

    private static void ddpUntagged(List<ConformCase> e) {
        for (int version : new int[] {0, 2, 3}) {
            e.add(op("ddp-version-" + version + "-untagged", Group.DDP, "RFC 5041 4.1 (DV), 7.2",
                    s -> s.sendOffending(Ulpdus.untagged(DdpHeaders.controlByte(false, true, 0, version),
                            rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, s.nextSendMsn, 0, 16)),
                    term(DDP_UNTAGGED_INVALID_VERSION)));
        }
        e.add(op("ddp-reserved-bits-ignored-untagged", Group.DDP, "RFC 5041 4.1 (Rsvd: not checked on reception)",
                s -> { },
                carriesOnAfter("a Send with all four Rsvd bits set is delivered and rping goes on", s -> {
                    byte[] send = s.applicationSend(s.nextSendMsn++);
                    send[0] |= 0x3C;
                    s.sendGood(send);
                    s.awaitApplicationReaction();
                })));
        for (long qn : new long[] {3, 4, 5, 0xFFFF_FFFFL}) {
            // RFC 7306 section 4 makes queue 3 (Atomic Responses) valid: an implementation of it
            // refuses a Send there as the wrong opcode for the queue, one without it as an invalid QN.
            e.add(op("queue-number-" + (qn == 0xFFFF_FFFFL ? "ffffffff" : Long.toString(qn)), Group.DDP,
                    "RFC 5041 7.1 (untagged 1), 7.2; RFC 5040 4.1" + (qn == 3 ? "; RFC 7306 (queue 3)" : ""),
                    s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0, qn, 1, 0, 8)),
                    qn == 3 ? termAny(List.of(DDP_UNTAGGED_INVALID_QN, RDMAP_UNEXPECTED_OPCODE), DDP_HEADER)
                            : term(DDP_UNTAGGED_INVALID_QN)));
        }
        e.add(op("send-msn-zero", Group.DDP, "RFC 5041 4.3 (MSN starts at 1), 7.1",
                s -> s.sendOffending(Ulpdus.send(0, 16)),
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("send-msn-gap", Group.DDP, "RFC 5041 7.1 (untagged 2 and 5), 4.3 (MSN)",
                s -> s.sendOffending(Ulpdus.send(s.nextSendMsn + 1, 16)),
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("send-msn-far-ahead", Group.DDP, "RFC 5041 7.1 (untagged 2 and 5)",
                s -> s.sendOffending(Ulpdus.send(s.nextSendMsn + 1000, 16)),
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("send-msn-2-to-the-31", Group.DDP, "RFC 5041 4.3 (MSN modulo 2^32), 7.1",
                s -> s.sendOffending(Ulpdus.send(0x8000_0000L, 16)),
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("send-mo-beyond-the-buffer", Group.DDP, "RFC 5041 7.1 (untagged 3), 4.3 (MO)",
                s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND,
                        s.nextSendMsn, 4096, 8)),
                term(DDP_UNTAGGED_INVALID_MO)));
        e.add(op("send-too-long-for-the-receive", Group.DDP, "RFC 5041 7.1 (untagged 4), RFC 5040 5.3",
                s -> s.sendOffending(Ulpdus.send(s.nextSendMsn, Session.INFO_LENGTH + 1)),
                term(DDP_UNTAGGED_MESSAGE_TOO_LONG)));
        e.add(op("send-much-too-long-for-the-receive", Group.DDP, "RFC 5041 7.1 (untagged 4), RFC 5040 5.3",
                s -> s.sendOffending(Ulpdus.send(s.nextSendMsn, 1024)),
                term(DDP_UNTAGGED_MESSAGE_TOO_LONG)));
        e.add(op("send-too-long-across-segments", Group.DDP, "RFC 5041 7.1 (untagged 4), 5.3",
                s -> {
                    s.sendGood(Ulpdus.sendSegment(false, s.nextSendMsn, 0, 12));
                    s.sendOffending(Ulpdus.sendSegment(true, s.nextSendMsn, 12, 12));
                },
                term(DDP_UNTAGGED_MESSAGE_TOO_LONG)));
        e.add(op("read-request-msn-zero", Group.DDP, "RFC 5041 4.3 (MSN starts at 1), RFC 5040 5.2.1",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(0, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 8, s.stag,
                            s.to));
                },
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("read-request-msn-gap", Group.DDP, "RFC 5041 7.1 (untagged 2 and 5), RFC 5040 5.2.1, 6.1 (IRD)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(s.nextReadMsn + 2, Session.PEER_SINK_STAG, Session.PEER_SINK_TO,
                            8, s.stag, s.to));
                },
                termAny(MSN_ERRORS, DDP_HEADER)));
        e.add(op("send-first-segment-mo-not-zero", Group.DDP, "RFC 5041 4.3 (MO), 7.1 (untagged 3)",
                s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND,
                        s.nextSendMsn, 8, 8)),
                term(DDP_UNTAGGED_INVALID_MO)));
        e.add(op("ddp-version-0-read-request", Group.DDP, "RFC 5041 4.1 (DV), 7.2",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(DdpHeaders.controlByte(false, true, 0, 0),
                            rdmap(RdmapOpcode.RDMA_READ_REQUEST), DdpHeaders.QN_READ_REQUEST, s.nextReadMsn, 0,
                            Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 8, s.stag, s.to));
                },
                term(DDP_UNTAGGED_INVALID_VERSION)));
        e.add(op("read-request-mo-not-zero", Group.DDP, "RFC 5041 4.3 (MO), 7.1 (untagged 3)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(UNTAGGED_LAST, rdmap(RdmapOpcode.RDMA_READ_REQUEST),
                            DdpHeaders.QN_READ_REQUEST, s.nextReadMsn, 4096, Session.PEER_SINK_STAG,
                            Session.PEER_SINK_TO, 8, s.stag, s.to));
                },
                term(DDP_UNTAGGED_INVALID_MO)));
        e.add(op("read-request-longer-than-28", Group.DDP, "RFC 5040 4.4, 5.2.1; RFC 5041 7.1 (untagged 4)",
                s -> {
                    s.learnRegion();
                    byte[] request = readOf(s, s.to, 8);
                    s.sendOffending(Arrays.copyOf(request, request.length + 4));
                },
                term(DDP_UNTAGGED_MESSAGE_TOO_LONG)));
    }

    private static byte[] readOf(Session s, long sourceTo, long size) {
        return Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, size, s.stag, sourceTo);
    }

    // DDP tagged buffers: RFC 5041 4.2, 7.1, 7.2, 8.3.1.

    private static void ddpTagged(List<ConformCase> e) {
        for (int version : new int[] {0, 2, 3}) {
            e.add(op("ddp-version-" + version + "-tagged", Group.DDP, "RFC 5041 4.1 (DV), 7.2",
                    s -> {
                        s.learnRegion();
                        s.sendOffending(Ulpdus.tagged(DdpHeaders.controlByte(true, true, 0, version),
                                rdmap(RdmapOpcode.RDMA_WRITE), s.stag, s.to, 16));
                    },
                    term(DDP_TAGGED_INVALID_VERSION)));
        }
        e.add(op("ddp-reserved-bits-ignored-tagged", Group.DDP, "RFC 5041 4.1 (Rsvd: not checked on reception)",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.tagged(DdpHeaders.controlByte(true, true, 0xF, 1), rdmap(RdmapOpcode.RDMA_WRITE),
                            s.stag, s.to, 16));
                },
                carriesOn("a Write with all four Rsvd bits set is placed and rping goes on")));
        e.add(op("write-placed", Group.DDP, "RFC 5041 5.1, RFC 5040 4.3",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.write(s.stag, s.to, 32));
                },
                carriesOn("a Write inside the advertised buffer is placed silently and rping goes on")));
        e.add(op("zero-length-write", Group.DDP, "RFC 5041 5.2 (zero-length tagged message)",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.write(s.stag, s.to, 0));
                },
                carriesOn("a zero-length Write is no error and rping goes on")));
        e.add(op("write-to-an-unknown-stag", Group.DDP, "RFC 5041 7.1 (tagged 1), 8.3.1",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(Session.UNKNOWN_STAG, s.to, 16));
                },
                term(DDP_TAGGED_INVALID_STAG)));
        e.add(op("write-with-a-wrong-stag-key", Group.DDP, "RFC 5041 7.1 (tagged 1), 8.3.1",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(s.stag ^ 0x01, s.to, 16));
                },
                term(DDP_TAGGED_INVALID_STAG)));
        e.add(op("write-to-stag-zero", Group.DDP, "RFC 5041 7.1 (tagged 1), 8.3.1",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(0, s.to, 16));
                },
                term(DDP_TAGGED_INVALID_STAG)));
        e.add(op("write-before-the-base", Group.DDP, "RFC 5041 7.1 (tagged 3), 8.3.1 rule 3",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(s.stag, s.to - 1, 8));
                },
                term(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION)));
        e.add(op("write-far-past-the-end", Group.DDP, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(s.stag, s.to + (1L << 32), 8));
                },
                term(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION)));
        e.add(c("write-past-the-end", Group.DDP, Role.TARGET_CONNECTS, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3",
                ConformCase.Setup.CRC,
                s -> s.sendOffending(Ulpdus.write(s.stag, s.to + s.length - 4, 8)),
                term(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION)));
        e.add(c("write-ending-at-the-end", Group.DDP, Role.TARGET_CONNECTS, "RFC 5041 8.3.1 rule 3 (inclusive bounds)",
                ConformCase.Setup.CRC,
                s -> s.sendGood(Ulpdus.write(s.stag, s.to + s.length - 8, 8)),
                carriesOn("a Write of the buffer's last 8 octets is placed and rping goes on")));
        e.add(op("write-to-wraps-2-to-the-64", Group.DDP, "RFC 5041 7.1 (tagged 5: TO wrap; 4: bounds)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.write(s.stag, -4L, 8));
                },
                termAny(List.of(DDP_TAGGED_TO_WRAP, DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION), DDP_HEADER)));
        e.add(op("write-in-two-segments-second-past-the-end", Group.DDP, "RFC 5041 7.1 (tagged 4), 5.2",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.tagged(Ulpdus.TAGGED_MORE, rdmap(RdmapOpcode.RDMA_WRITE), s.stag, s.to, 8));
                    s.sendOffending(Ulpdus.write(s.stag, s.to + (1L << 32), 8));
                },
                term(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION)));
    }

    // RDMAP: RFC 5040 4.1, 4.4, 5.1-5.4, 7.2.

    private static void rdmapCases(List<ConformCase> e) {
        for (int version : new int[] {0, 2, 3}) {
            e.add(op("rdmap-version-" + version + "-send", Group.RDMAP, "RFC 5040 4.1 (RV), 7.2",
                    s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST,
                            RdmapHeaders.controlByte(version, 0, RdmapOpcode.SEND.code()), 0, DdpHeaders.QN_SEND,
                            s.nextSendMsn, 0, 16)),
                    term(RDMAP_INVALID_VERSION)));
            e.add(op("rdmap-version-" + version + "-write", Group.RDMAP, "RFC 5040 4.1 (RV), 7.2",
                    s -> {
                        s.learnRegion();
                        s.sendOffending(Ulpdus.tagged(TAGGED_LAST,
                                RdmapHeaders.controlByte(version, 0, RdmapOpcode.RDMA_WRITE.code()), s.stag, s.to, 8));
                    },
                    term(RDMAP_INVALID_VERSION)));
            e.add(op("rdmap-version-" + version + "-read-request", Group.RDMAP,
                    "RFC 5040 4.1 (RV), 4.8 (Figure 10), 7.1 rule 3",
                    s -> {
                        s.learnRegion();
                        s.sendOffending(Ulpdus.readRequest(UNTAGGED_LAST,
                                RdmapHeaders.controlByte(version, 0, RdmapOpcode.RDMA_READ_REQUEST.code()),
                                DdpHeaders.QN_READ_REQUEST, s.nextReadMsn, 0, Session.PEER_SINK_STAG,
                                Session.PEER_SINK_TO, 8, s.stag, s.to));
                    },
                    termAny(List.of(RDMAP_INVALID_VERSION), DDP_HEADER, DDP_AND_READ_REQUEST)));
        }
        e.add(op("rdmap-reserved-bits-ignored", Group.RDMAP, "RFC 5040 4.1 (Rsv: not checked on reception)",
                s -> { },
                carriesOnAfter("a Send with both Rsv bits set is delivered and rping goes on", s -> {
                    byte[] send = s.applicationSend(s.nextSendMsn++);
                    send[1] |= 0x30;
                    s.sendGood(send);
                    s.awaitApplicationReaction();
                })));
        e.add(op("invalidate-stag-field-ignored-on-a-send", Group.RDMAP, "RFC 5040 4.1 (Invalidate STag: Send "
                + "with Invalidate only)",
                s -> { },
                carriesOnAfter("a plain Send with a non-zero Invalidate STag field is delivered and rping goes on", s -> {
                    byte[] send = s.applicationSend(s.nextSendMsn++);
                    send[2] = 0x12;
                    send[5] = 0x78;
                    s.sendGood(send);
                    s.awaitApplicationReaction();
                })));
        for (int opcode = 0xC; opcode <= 0xF; opcode++) {
            int code = opcode;
            e.add(op(String.format("opcode-%x", code), Group.RDMAP, "RFC 5040 4.1 (Figure 4: reserved), 7.2",
                    s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, RdmapHeaders.controlByte(1, 0, code), 0,
                            DdpHeaders.QN_SEND, s.nextSendMsn, 0, 8)),
                    term(RDMAP_UNEXPECTED_OPCODE)));
        }
        e.add(op("send-on-the-tagged-model", Group.RDMAP, "RFC 5040 4.1 (Figure 4), 5.3",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.tagged(TAGGED_LAST, rdmap(RdmapOpcode.SEND), s.stag, s.to, 8));
                },
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("write-on-the-untagged-model", Group.RDMAP, "RFC 5040 4.1 (Figure 4), 5.1",
                s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.RDMA_WRITE), 0, DdpHeaders.QN_SEND,
                        s.nextSendMsn, 0, 8)),
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("read-request-on-queue-0", Group.RDMAP, "RFC 5040 5.2.1 (queue 1), 4.8",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(UNTAGGED_LAST, rdmap(RdmapOpcode.RDMA_READ_REQUEST),
                            DdpHeaders.QN_SEND, s.nextSendMsn, 0, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 8,
                            s.stag, s.to));
                },
                termAny(List.of(RDMAP_UNEXPECTED_OPCODE), DDP_HEADER, DDP_AND_READ_REQUEST)));
        e.add(op("send-on-queue-1", Group.RDMAP, "RFC 5040 5.3 (queue 0)",
                s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0,
                        DdpHeaders.QN_READ_REQUEST, 1, 0, 8)),
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("send-on-queue-2", Group.RDMAP, "RFC 5040 5.3 (queue 0)",
                s -> s.sendOffending(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0,
                        DdpHeaders.QN_TERMINATE, 1, 0, 8)),
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("terminate-on-the-tagged-model", Group.RDMAP, "RFC 5040 5.4 (untagged, queue 2)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.tagged(TAGGED_LAST, rdmap(RdmapOpcode.TERMINATE), s.stag, s.to, 4));
                },
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("terminate-on-queue-0", Group.RDMAP, "RFC 5040 5.4 (queue 2)",
                s -> s.sendOffending(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_SEND, s.nextSendMsn, 0,
                        TerminateHeader.controlWord(LLP_CRC_ERROR, 0), new byte[0])),
                term(RDMAP_UNEXPECTED_OPCODE)));
        e.add(op("send-with-invalidate-of-an-unknown-stag", Group.RDMAP, "RFC 5040 5.3, 7.2",
                s -> s.sendOffending(Ulpdus.sendWithInvalidate(s.nextSendMsn, Session.UNKNOWN_STAG, 8)),
                term(RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED)));
        e.add(op("read-answered", Group.RDMAP, "RFC 5040 4.4, 5.2.1, 5.2.2",
                s -> {
                    s.learnRegion();
                    s.sendGood(readOf(s, s.to, 8));
                },
                Expect.answersRead("a Read Response of 8 octets to the requested sink STag and TO, L set", 8)));
        e.add(op("zero-length-read-answered", Group.RDMAP, "RFC 5040 5.2.1, 5.2.2",
                s -> {
                    s.learnRegion();
                    s.sendGood(readOf(s, s.to, 0));
                },
                Expect.answersRead("a zero-length Read Response to the requested sink", 0)));
        e.add(op("zero-length-read-of-an-unknown-stag", Group.RDMAP, "RFC 5040 5.2.1 (zero length: no validation)",
                s -> {
                    s.learnRegion();
                    s.sendGood(Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 0,
                            Session.UNKNOWN_STAG, 0));
                },
                Expect.answersRead("a zero-length Read Response: the source STag and TO of a zero-length Read MUST "
                        + "NOT be validated", 0)));
        e.add(op("read-of-an-unknown-stag", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x00), 4.8 (R)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 8,
                            Session.UNKNOWN_STAG, s.to));
                },
                terminate(RDMAP_INVALID_STAG, DDP_AND_READ_REQUEST)));
        e.add(op("read-with-a-wrong-stag-key", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x00), 4.8 (R)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, 8,
                            s.stag ^ 0x01, s.to));
                },
                terminate(RDMAP_INVALID_STAG, DDP_AND_READ_REQUEST)));
        e.add(op("read-before-the-base", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x01), 4.8 (R)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(readOf(s, s.to - 1, 8));
                },
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(op("read-far-past-the-end", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x01), 4.8 (R)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(readOf(s, s.to + (1L << 32), 8));
                },
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(c("read-past-the-end", Group.RDMAP, Role.TARGET_CONNECTS, "RFC 5040 7.2 (Remote Protection 0x01)",
                ConformCase.Setup.CRC,
                s -> s.sendOffending(readOf(s, s.to + s.length - 4, 8)),
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(op("read-to-wraps-2-to-the-64", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x04 TO wrap; 0x01)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(readOf(s, -4L, 8));
                },
                termAny(List.of(RDMAP_TO_WRAP, RDMAP_BASE_OR_BOUNDS_VIOLATION), DDP_AND_READ_REQUEST)));
        e.add(op("read-size-2-to-the-32-minus-1", Group.RDMAP, "RFC 5040 7.2 (Remote Protection 0x01)",
                s -> {
                    s.learnRegion();
                    s.sendOffending(readOf(s, s.to, 0xFFFF_FFFFL));
                },
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
    }

    // Read Responses that match no outstanding Read: RFC 5040 4.4, 5.2.2; RFC 5041 7.1.

    private static void readResponses(List<ConformCase> e) {
        e.add(op("read-response-with-no-read-outstanding", Group.RDMAP, "RFC 5040 5.2.2, 7.2 (Unexpected OpCode)",
                s -> {
                    s.learnRegion();
                    if (s.role == Role.TARGET_LISTENS) {
                        s.probe(Session.Splitter.WHOLE); // the target's one Read answered: none outstanding
                    }
                    s.sendOffending(Ulpdus.readResponse(s.stag, s.to, 16, true));
                },
                term(RDMAP_UNEXPECTED_OPCODE)));
        List<TerminateError> mismatch = List.of(RDMAP_UNEXPECTED_OPCODE, DDP_TAGGED_INVALID_STAG,
                DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION);
        e.add(c("read-response-to-the-wrong-stag", Group.RDMAP, Role.TARGET_LISTENS,
                "RFC 5040 4.4 (sink STag copied), 5.2.2", ConformCase.Setup.CRC,
                s -> answerTheTargetsRead(s, (stag, to, size) -> Ulpdus.readResponse(stag ^ 0x100, to, size, true)),
                termAny(mismatch, DDP_HEADER)));
        e.add(c("read-response-at-the-wrong-to", Group.RDMAP, Role.TARGET_LISTENS,
                "RFC 5040 4.4 (sink TO copied), 5.2.2", ConformCase.Setup.CRC,
                s -> answerTheTargetsRead(s, (stag, to, size) -> Ulpdus.readResponse(stag, to + 8, size, true)),
                termAny(mismatch, DDP_HEADER)));
        e.add(c("read-response-longer-than-the-read", Group.RDMAP, Role.TARGET_LISTENS,
                "RFC 5040 4.4 (Read size), 5.2.2", ConformCase.Setup.CRC,
                s -> answerTheTargetsRead(s, (stag, to, size) -> Ulpdus.readResponse(stag, to, size + 1, true)),
                termAny(mismatch, DDP_HEADER)));
        e.add(c("read-response-ending-short", Group.RDMAP, Role.TARGET_LISTENS,
                "RFC 5040 4.4 (Read size), 5.2.2", ConformCase.Setup.CRC,
                s -> answerTheTargetsRead(s, (stag, to, size) -> Ulpdus.readResponse(stag, to, size - 1, true)),
                termAny(mismatch, DDP_HEADER)));
        e.add(c("read-response-in-two-segments", Group.RDMAP, Role.TARGET_LISTENS,
                "RFC 5040 5.2.2, RFC 5041 5.2 (segments of one message)", ConformCase.Setup.CRC,
                s -> {
                    s.learnRegion();
                    answerTheTargetsRead(s, (stag, to, size) -> {
                        byte[] first = Ulpdus.readResponse(stag, to, size / 2, false);
                        s.sendGood(first);
                        return Ulpdus.readResponse(stag, to + size / 2, size / 2, true);
                    });
                },
                carriesOnAfter("the Read completes from two segments and rping sends its go-ahead", s ->
                        s.awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND), "rping's go-ahead "
                                + "Send after its Read completed"))));
    }

    @FunctionalInterface
    private interface ResponseBuilder {
        byte[] build(int sinkStag, long sinkTo, int size) throws Exception;
    }

    /** Target listens: answers the target's Read Request of this end's buffer with what {@code builder} makes. */
    private static void answerTheTargetsRead(Session s, ResponseBuilder builder) throws Exception {
        s.learnRegion();
        byte[] request = s.peer.received().stream().filter(u -> Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST,
                DdpHeaders.QN_READ_REQUEST)).findFirst().orElseThrow();
        ByteBuf b = Unpooled.wrappedBuffer(request);
        int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
        byte[] response = builder.build(ReadRequestHeader.sinkStag(b, at), ReadRequestHeader.sinkTaggedOffset(b, at),
                (int) ReadRequestHeader.readSize(b, at));
        s.sendOffending(response);
    }

    // Segmentation: RFC 5044 4 (an FPDU may arrive in any number of TCP segments), RFC 5041 5.2, 5.3.

    private static void segmentation(List<ConformCase> e) {
        for (int at = 1; at <= SPLIT_OFFSETS; at++) {
            int cut = at;
            e.add(op(String.format("fpdu-split-at-%02d", cut), Group.SEGMENTATION, "RFC 5044 4.1, 5 (TCP stream)",
                    s -> { },
                    carriesOn("the FPDU, cut in two TCP segments " + cut + " octets in, is received whole and rping "
                            + "goes on", Session.Splitter.at(cut))));
        }
        e.add(op("fpdu-one-octet-per-segment", Group.SEGMENTATION, "RFC 5044 4.1, 5 (TCP stream)",
                s -> { },
                carriesOn("the FPDU, one octet per TCP segment, is received whole and rping goes on",
                        Session.Splitter.everyOctet())));
        e.add(op("two-fpdus-in-one-segment", Group.SEGMENTATION, "RFC 5044 4.1, 5 (TCP stream)",
                s -> {
                    s.learnRegion();
                    byte[] write = s.peer.frame(Ulpdus.write(s.stag, s.to, 8));
                    byte[] next = s.peer.frame(Ulpdus.write(s.stag, s.to + 8, 8));
                    byte[] both = Arrays.copyOf(write, write.length + next.length);
                    System.arraycopy(next, 0, both, write.length, next.length);
                    s.peer.write(both);
                },
                carriesOn("two FPDUs in one TCP segment are both received and rping goes on")));
        e.add(op("send-in-two-ddp-segments", Group.SEGMENTATION, "RFC 5041 5.3 (untagged reassembly)",
                s -> { },
                carriesOnAfter("a Send in two DDP segments (MO 0 and 8) is delivered whole and rping goes on", s -> {
                    sendInSegments(s, 8);
                    s.awaitApplicationReaction();
                })));
        e.add(op("send-in-sixteen-ddp-segments", Group.SEGMENTATION, "RFC 5041 5.3 (untagged reassembly)",
                s -> { },
                carriesOnAfter("a Send in 16 one-octet DDP segments is delivered whole and rping goes on", s -> {
                    sendInSegments(s, 1);
                    s.awaitApplicationReaction();
                })));
        e.add(op("write-in-four-ddp-segments", Group.SEGMENTATION, "RFC 5041 5.2 (tagged placement)",
                s -> {
                    s.learnRegion();
                    for (int i = 0; i < 4; i++) {
                        s.sendGood(Ulpdus.tagged(i == 3 ? TAGGED_LAST : Ulpdus.TAGGED_MORE,
                                rdmap(RdmapOpcode.RDMA_WRITE), s.stag, s.to + 4L * i, 4));
                    }
                },
                carriesOn("a Write in four DDP segments is placed and rping goes on")));
    }

    /** rping's next Send, cut into DDP segments of {@code each} octets (one FPDU each, one TCP write). */
    private static void sendInSegments(Session s, int each) throws Exception {
        byte[] whole = s.applicationSend(s.nextSendMsn++);
        long msn = s.nextSendMsn - 1;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int mo = 0; mo < Session.INFO_LENGTH; mo += each) {
            byte[] segment = Ulpdus.untagged(mo + each >= Session.INFO_LENGTH ? UNTAGGED_LAST : UNTAGGED_MORE,
                    rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, msn, mo, 0);
            byte[] payload = Arrays.copyOfRange(whole, DdpHeaders.UNTAGGED_HEADER_LENGTH + mo,
                    DdpHeaders.UNTAGGED_HEADER_LENGTH + mo + each);
            byte[] ulpdu = Arrays.copyOf(segment, segment.length + each);
            System.arraycopy(payload, 0, ulpdu, segment.length, each);
            out.writeBytes(s.peer.frame(ulpdu));
        }
        s.peer.write(out.toByteArray());
    }
}
