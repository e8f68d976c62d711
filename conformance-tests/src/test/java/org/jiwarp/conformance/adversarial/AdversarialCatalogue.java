package org.jiwarp.conformance.adversarial;

import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_AND_READ_REQUEST;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_HEADER;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.NOTHING;
import static org.jiwarp.conform.peer.Ulpdus.UNTAGGED_LAST;
import static org.jiwarp.conform.peer.Ulpdus.UNTAGGED_MORE;
import static org.jiwarp.conform.peer.Ulpdus.rdmap;
import static org.jiwarp.conformance.adversarial.Outcome.accepted;
import static org.jiwarp.conformance.adversarial.Outcome.closed;
import static org.jiwarp.conformance.adversarial.Outcome.connectFails;
import static org.jiwarp.conformance.adversarial.Outcome.connectFailsWithTerm;
import static org.jiwarp.conformance.adversarial.Outcome.connected;
import static org.jiwarp.conformance.adversarial.Outcome.setupClosed;
import static org.jiwarp.conformance.adversarial.Outcome.terminate;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_LOCAL_CATASTROPHIC;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MO;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_VERSION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_CONNECTION_LOST;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_CRC_ERROR;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_INSUFFICIENT_IRD;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_INVALID_REQUEST_REPLY;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH;
import static org.jiwarp.wire.rdmap.TerminateError.LLP_NO_MATCHING_RTR;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_STAG_NOT_ASSOCIATED;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_TO_WRAP;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_UNEXPECTED_OPCODE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.AtomicOperation;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.AtomicResponseHeader;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * The adversarial catalogue: every case a hostile or broken peer can present to jiwarp, with the
 * RFC section and the exact outcome. One table, read top to bottom by layer: MPA startup as
 * responder and as initiator, MPA framing, DDP, RDMAP, the peer's Terminate, and what happens after
 * an error.
 *
 * <p>It is jiwarp's white-box suite: cases that need jiwarp's verbs or memory (atomics, windows,
 * invalidation, regions of chosen access between guard zones, jiwarp's own Requests and Reads) or
 * its listener's account of a setup failure. A stimulus a black box answers through rping is a case
 * of the conformance library ({@code org.jiwarp.conform.ConformCatalogue}), written once there and
 * run against jiwarp in-process by {@code JiwarpRpingConformTest}; a name is in one catalogue only.
 *
 * <p>Expected outcomes are what the RFCs require where jiwarp does it; where jiwarp does something
 * else, the entry expects jiwarp's behaviour and says why in its {@code deviation} note (see
 * {@link #deviations()}).
 */
public final class AdversarialCatalogue {

    /**
     * How long the raw peer watches for an FPDU that must not come, once jiwarp's event loop has
     * written whatever it would have sent (responder-waits-for-the-first-fpdu).
     */
    private static final long EARLY_FPDU_WINDOW_MILLIS = 1000;

    /** An STag no region has: index 0xFFFF42 is far beyond any table here. */
    static final int UNKNOWN_STAG = 0xFFFF_4201;
    /** What the raw peer names as its own Read sink (jiwarp never checks it). */
    static final int PEER_SINK_STAG = 0x00C0_DE01;
    static final long PEER_SINK_TO = 0x7000_0000L;
    /** The STag and TO the raw peer names as the source of a Read the server issues. */
    static final int PEER_SOURCE_STAG = 0x00BE_EF01;
    static final long PEER_SOURCE_TO = 0x5000_0000L;

    private static final List<AdversarialCase> ALL = Collections.unmodifiableList(build());

    private AdversarialCatalogue() {
    }

    static List<AdversarialCase> all() {
        return ALL;
    }

    /** The cases whose expected outcome is jiwarp's behaviour, not the RFC's. */
    static List<AdversarialCase> deviations() {
        return ALL.stream().filter(c -> c.deviation() != null).toList();
    }

    // ---------------------------------------------------------------------------------------------
    // Building entries

    /** A catalogue entry being built. */
    private static final class Entry {
        private final String name;
        private final String section;
        private final AdversarialCase.Kind kind;
        private final AdversarialCase.Action action;
        private final Outcome outcome;
        private AdversarialCase.Spec spec = AdversarialCase.Spec.DEFAULT;
        private Function<JiwarpTarget.Regions, List<JiwarpTarget.Range>> allowed = r -> List.of();
        private String deviation;

        Entry(String name, String section, AdversarialCase.Kind kind, AdversarialCase.Action action, Outcome outcome) {
            this.name = name;
            this.section = section;
            this.kind = kind;
            this.action = action;
            this.outcome = outcome;
        }

        Entry spec(AdversarialCase.Spec s) {
            this.spec = s;
            return this;
        }

        Entry allow(Function<JiwarpTarget.Regions, List<JiwarpTarget.Range>> ranges) {
            this.allowed = ranges;
            return this;
        }

        Entry deviation(String why) {
            this.deviation = why;
            return this;
        }

        AdversarialCase build() {
            return new AdversarialCase(name, section, kind, spec, action, outcome, allowed, deviation);
        }
    }

    private static Entry op(String name, String section, AdversarialCase.Action action, Outcome outcome) {
        return new Entry(name, section, AdversarialCase.Kind.OPERATION, action, outcome);
    }

    private static Entry setup(String name, String section, AdversarialCase.Action action, Outcome outcome) {
        return new Entry(name, section, AdversarialCase.Kind.SETUP, action, outcome);
    }

    private static Entry initiator(String name, String section, AdversarialCase.Action action, Outcome outcome) {
        return new Entry(name, section, AdversarialCase.Kind.INITIATOR, action, outcome);
    }

    // ---------------------------------------------------------------------------------------------
    // Small pieces of actions

    private static byte[] token(CaseContext ctx) {
        return ctx.token().getBytes(StandardCharsets.US_ASCII);
    }

    /** The Request a well-behaved raw initiator sends (CRC, IRD = ORD = 4, the case's token). */
    private static MpaBytes.Frame goodRequest(CaseContext ctx) {
        return MpaBytes.request(true, false, JiwarpTarget.IRD, token(ctx));
    }

    /** A Reply that accepts jiwarp's Request: C echoed, IRD = ORD = 4, no markers. */
    private static MpaBytes.Frame goodReply(CaseContext ctx) {
        return MpaBytes.reply(ctx.mpaFrame.crc() ? MpaFrames.CRC_FLAG : 0, MpaBytes.Words.of(4, 4), new byte[0]);
    }

    /** A Read Request from the raw peer for {@code size} octets of {@code region} at {@code offset}. */
    private static byte[] readOf(long msn, MemoryRegion region, long offset, long size) {
        return Ulpdus.readRequest(msn, PEER_SINK_STAG, PEER_SINK_TO, size, region.stag(), region.address() + offset);
    }

    private static byte[] readOf(long msn, int stag, long to, long size) {
        return Ulpdus.readRequest(msn, PEER_SINK_STAG, PEER_SINK_TO, size, stag, to);
    }

    /** A ULPDU on queue 0 with an arbitrary RDMAP control byte. */
    private static byte[] untaggedOpcode(int opcode) {
        return Ulpdus.untagged(UNTAGGED_LAST, RdmapHeaders.controlByte(RdmapHeaders.RDMAP_VERSION, 0, opcode), 0,
                DdpHeaders.QN_SEND, 1, 0, 8);
    }

    /** Sends a Send and checks that receive 0 completes with it. */
    private static Outcome.Check receivesSend(int length) {
        return ctx -> {
            WorkCompletion wc = ctx.awaitReceive(0, WcStatus.SUCCESS);
            assertEquals(length, wc.byteLength(), wc.toString());
            assertTrue(ByteBufUtil.equals(ctx.regions.receive.buffer(), 0, Unpooled.wrappedBuffer(Ulpdus.payload(length)),
                    0, length), "the Send's octets in the receive buffer");
        };
    }

    private static List<JiwarpTarget.Range> receive0(JiwarpTarget.Regions r, int length) {
        return List.of(r.inReceive(0, length));
    }

    /**
     * The server Reads 64 octets from the raw peer into its sink region, after the raw peer's first
     * FPDU (a Write of 8 octets to offset 0) opened the way (RFC 5044 section 7.1.2); returns the
     * Read Request jiwarp sent.
     */
    private static ByteBuf serverReads(CaseContext ctx) throws Exception {
        ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 8));
        ctx.served.qp.postSend(SendWorkRequest.read(77, PEER_SOURCE_TO, PEER_SOURCE_STAG,
                new Sge(ctx.regions.sink, 0, 64)));
        byte[] request = ctx.peer.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST,
                DdpHeaders.QN_READ_REQUEST), Outcome.WAIT_MILLIS);
        assertNotNull(request, "no Read Request from jiwarp: " + ctx.peer.describe());
        ByteBuf b = Unpooled.wrappedBuffer(request);
        int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
        assertEquals(64, ReadRequestHeader.readSize(b, at));
        assertEquals(PEER_SOURCE_STAG, ReadRequestHeader.sourceStag(b, at));
        assertEquals(PEER_SOURCE_TO, ReadRequestHeader.sourceTaggedOffset(b, at));
        return b;
    }

    /**
     * RFC 7306: one case per error an Atomic Request, Atomic Response or Immediate Data message can
     * meet at jiwarp, and the well-formed ones served.
     */
    private static void rfc7306(List<Entry> e) {
        e.add(op("atomic-fetch-add-served", "RFC 7306 5.2.1, 5.2.2, 5.4",
                ctx -> {
                    ctx.regions.write.buffer().setLong(0, 40);
                    ctx.sendGood(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 0x1234, ctx.writeStag(),
                            ctx.writeTo(0), 2));
                },
                accepted("an Atomic Response on queue 3 with MSN 1, the request's identifier and the value before",
                        ctx -> {
                            byte[] response = ctx.peer.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.ATOMIC_RESPONSE,
                                    DdpHeaders.QN_ATOMIC_RESPONSE), Outcome.WAIT_MILLIS);
                            assertNotNull(response, "no Atomic Response: " + ctx.peer.describe());
                            ByteBuf b = Unpooled.wrappedBuffer(response);
                            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
                            assertEquals(1, DdpHeaders.msn(b, 0));
                            assertEquals(0x1234, AtomicResponseHeader.originalRequestIdentifier(b, at));
                            assertEquals(40, AtomicResponseHeader.originalRemoteDataValue(b, at));
                            assertEquals(42, ctx.regions.write.buffer().getLong(0));
                        }))
                .allow(AdversarialCatalogue::firstWrite));
        e.add(op("atomic-reserved-operation", "RFC 7306 10.1 (0x1 reserved), 8.2; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, 0x1, 1, ctx.writeStag(), ctx.writeTo(0), 1)),
                terminate(RDMAP_UNEXPECTED_OPCODE, DDP_HEADER)));
        e.add(op("atomic-target-not-8-octet-aligned", "RFC 7306 5.1.1, 8.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 1, ctx.writeStag(),
                        ctx.writeTo(4), 1)),
                terminate(TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM, DDP_HEADER)));
        e.add(op("atomic-on-a-region-without-remote-atomic", "RFC 7306 5.2.1, 8.2; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.COMPARE_SWAP.code(), 1, ctx.regions.readOnly.stag(),
                        ctx.regions.readOnly.address(), 1)),
                terminate(RDMAP_ACCESS_RIGHTS_VIOLATION, DDP_HEADER)));
        e.add(op("atomic-stag-unknown", "RFC 7306 5.2.1, 8.2; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.COMPARE_SWAP.code(), 1, UNKNOWN_STAG, 0, 1)),
                terminate(RDMAP_INVALID_STAG, DDP_HEADER)));
        e.add(op("atomic-stag-of-another-protection-domain", "RFC 7306 5.2.1; RFC 5040 8.1.1 rule 1",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 1,
                        ctx.regions.foreign.stag(), ctx.regions.foreign.address(), 1)),
                terminate(RDMAP_STAG_NOT_ASSOCIATED, DDP_HEADER)));
        e.add(op("atomic-target-past-the-end", "RFC 7306 5.2.1, 8.2; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 1, ctx.writeStag(),
                        ctx.writeTo(JiwarpTarget.WRITE_LENGTH), 1)),
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_HEADER)));
        e.add(op("atomic-target-to-wraps", "RFC 7306 5.2.1, 8.2; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 1, ctx.writeStag(), -4L, 1)),
                terminate(RDMAP_TO_WRAP, DDP_HEADER)));
        e.add(op("atomic-request-of-40-octets", "RFC 7306 5.2.1 (52 octets), RFC 5041 7.1",
                ctx -> ctx.send(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.ATOMIC_REQUEST), 0,
                        DdpHeaders.QN_READ_REQUEST, 1, 0, 40)),
                terminate(DDP_UNTAGGED_MESSAGE_TOO_LONG, DDP_HEADER)));
        e.add(op("atomic-request-on-queue-0", "RFC 7306 4.1, 5.2.1 (queue 1)",
                ctx -> ctx.send(Ulpdus.atomicRequest(UNTAGGED_LAST, DdpHeaders.QN_SEND, 1, 0,
                        AtomicOperation.FETCH_ADD.code(), 1, ctx.writeStag(), ctx.writeTo(0), 1, 0, 0, 0)),
                terminate(RDMAP_UNEXPECTED_OPCODE, DDP_HEADER)));
        e.add(op("atomic-request-msn-after-a-read-request", "RFC 7306 5.2.1 (queue 1 MSNs shared), RFC 5041 5.3",
                ctx -> {
                    ctx.sendGood(readOf(1, ctx.regions.readOnly, 0, 8));
                    ctx.send(Ulpdus.atomicRequest(1, AtomicOperation.FETCH_ADD.code(), 1, ctx.writeStag(),
                            ctx.writeTo(0), 1));
                },
                terminate(DDP_UNTAGGED_INVALID_MSN_RANGE, DDP_HEADER)));
        e.add(op("atomic-response-with-no-atomic-outstanding", "RFC 7306 5.2.2, 5.4; RFC 5040 7.2",
                ctx -> ctx.send(Ulpdus.atomicResponse(1, 7, 42)),
                terminate(RDMAP_UNEXPECTED_OPCODE, DDP_HEADER)));
        e.add(op("atomic-response-to-another-request", "RFC 7306 5.2.2 (Original Request Identifier), 5.4",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 8));
                    ctx.served.qp.postSend(SendWorkRequest.fetchAdd(78, PEER_SOURCE_TO, PEER_SOURCE_STAG,
                            new Sge(ctx.regions.sink, 0, 8), 1));
                    byte[] request = ctx.peer.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.ATOMIC_REQUEST,
                            DdpHeaders.QN_READ_REQUEST), Outcome.WAIT_MILLIS);
                    assertNotNull(request, "no Atomic Request from jiwarp: " + ctx.peer.describe());
                    ByteBuf b = Unpooled.wrappedBuffer(request);
                    int id = AtomicRequestHeader.requestIdentifier(b, DdpHeaders.UNTAGGED_HEADER_LENGTH);
                    assertEquals(PEER_SOURCE_STAG, AtomicRequestHeader.remoteStag(b, DdpHeaders.UNTAGGED_HEADER_LENGTH));
                    ctx.send(Ulpdus.atomicResponse(1, id + 1, 5));
                },
                terminate(RDMAP_UNEXPECTED_OPCODE, DDP_HEADER)).allow(AdversarialCatalogue::firstWrite));
        e.add(op("atomic-response-msn-2-first", "RFC 7306 5.2.2 (queue 3), RFC 5041 5.3",
                ctx -> ctx.send(Ulpdus.atomicResponse(2, 7, 42)),
                terminate(DDP_UNTAGGED_INVALID_MSN_RANGE, DDP_HEADER)));
        e.add(op("immediate-data-served", "RFC 7306 6.2, 6.3",
                ctx -> ctx.sendGood(Ulpdus.immediateData(1, true, 0x0102_0304_0506_0708L)),
                accepted("receive 0 completes with the 8 octets, placed in it, and a Solicited Event", ctx -> {
                    WorkCompletion wc = ctx.served.cq.take(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    assertNotNull(wc, "no completion: " + ctx.peer.describe());
                    assertEquals(JiwarpTarget.FIRST_RECEIVE_ID, wc.workRequestId(), wc.toString());
                    assertEquals(WcOpcode.RECEIVE_IMMEDIATE_DATA, wc.opcode(), wc.toString());
                    assertEquals(0x0102_0304_0506_0708L, wc.immediateData());
                    assertEquals(8, wc.byteLength());
                    assertEquals(0x0102_0304_0506_0708L, ctx.regions.receive.buffer().getLong(0), "placed in receive 0");
                    assertTrue(wc.solicited());
                    ctx.receivesTaken.add(wc.workRequestId());
                })).allow(r -> receive0(r, 8)));
        e.add(op("immediate-data-of-4-octets", "RFC 7306 6.2 (8 octets), RFC 5041 7.1",
                ctx -> ctx.send(Ulpdus.untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.IMMEDIATE_DATA), 0, DdpHeaders.QN_SEND,
                        1, 0, 4)),
                terminate(DDP_UNTAGGED_MESSAGE_TOO_LONG, DDP_HEADER)));
        e.add(op("immediate-data-with-no-receive-posted", "RFC 7306 6.3, RFC 5041 7.1",
                ctx -> {
                    ctx.fence(1, 0);
                    ctx.send(Ulpdus.immediateData(2, false, 1));
                },
                terminate(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, DDP_HEADER))
                .spec(AdversarialCase.Spec.DEFAULT.receives(1)).allow(r -> receive0(r, 4)));
    }

    private static List<JiwarpTarget.Range> firstWrite(JiwarpTarget.Regions r) {
        return List.of(r.inWrite(0, 8));
    }

    // ---------------------------------------------------------------------------------------------
    // The table

    private static List<AdversarialCase> build() {
        List<Entry> e = new ArrayList<>();
        mpaStartupAsResponder(e);
        mpaStartupAsInitiator(e);
        mpaFraming(e);
        ddpTagged(e);
        ddpUntagged(e);
        rdmapCases(e);
        peerTerminate(e);
        afterAnError(e);
        List<AdversarialCase> cases = new ArrayList<>();
        for (Entry entry : e) {
            cases.add(entry.build());
        }
        return cases;
    }

    // MPA startup, jiwarp responding: RFC 5044 section 7.1, RFC 6581 sections 6, 9 and 10.
    private static void mpaStartupAsResponder(List<Entry> e) {
        e.add(setup("request-revision-0", "RFC 5044 7.1.1 (Rev)",
                ctx -> ctx.sendSetup(goodRequest(ctx).withRevision(0).bytes()),
                setupClosed(LLP_INVALID_REQUEST_REPLY, null)));
        e.add(setup("request-never-finishes", "RFC 5044 7.1.2 rules 8 and 10",
                ctx -> ctx.sendSetup(Arrays.copyOf(goodRequest(ctx).bytes(), 12)),
                setupClosed(LLP_CONNECTION_LOST, JiwarpTarget.REQUEST_TIMEOUT.plusMillis(100))));
        e.add(setup("request-nothing-sent", "RFC 5044 7.1.2 rules 8 and 10",
                ctx -> { },
                setupClosed(LLP_CONNECTION_LOST, JiwarpTarget.REQUEST_TIMEOUT.plusMillis(100))));
        e.add(setup("request-private-data-length-lies", "RFC 5044 7.1.1 (PD_Length), 7.1.2 rules 9 and 10",
                ctx -> ctx.sendSetup(Arrays.copyOf(goodRequest(ctx).withClaimedLength(100).bytes(), 30)),
                setupClosed(LLP_CONNECTION_LOST, JiwarpTarget.REQUEST_TIMEOUT.plusMillis(100))));
        e.add(setup("request-then-flood-before-the-reply", "RFC 5044 7.1.2 (initiator waits for the Reply)",
                ctx -> {
                    ctx.sendSetup(goodRequest(ctx).bytes());
                    ctx.served.held.get(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    ctx.sendSetup(new byte[70_000]);
                },
                setupClosed(LLP_INVALID_REQUEST_REPLY, null)).spec(AdversarialCase.Spec.DEFAULT.holding()));
        e.add(op("request-then-fpdu-without-waiting", "RFC 5044 7.1.2 rule 2, 3",
                ctx -> {
                    ctx.handshake(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 16), null);
                    ctx.fence(1, 0);
                    assertTrue(ctx.regions.writeRegionHolds(0, Ulpdus.payload(16)), "the early Write was placed");
                },
                accepted("an FPDU sent before the Reply is handled once setup completes", ctx -> { }))
                .spec(AdversarialCase.Spec.DEFAULT.manualSetup())
                .allow(r -> List.of(r.inWrite(0, 16), r.inReceive(0, 4))));
        e.add(op("p2p-no-common-rtr", "RFC 6581 9.2",
                ctx -> {
                    ctx.handshake(null, MpaBytes.Words.of(4, 4).p2p(true, false, false));
                    // RFC 6581 9.2: none offered in common, yet the Reply sets an RTR jiwarp supports.
                    assertEquals(0x8000, ctx.mpaFrame.irdWord() & 0xC000, "P2P set, no Send RTR in the Reply");
                    assertEquals(0x8000, ctx.mpaFrame.ordWord() & 0xC000, "the Write RTR in the Reply");
                    // The initiator, unable to send it, answers with TERM 2/0/7.
                    ctx.send(Ulpdus.terminate(LLP_NO_MATCHING_RTR));
                },
                closed(LLP_NO_MATCHING_RTR)).spec(AdversarialCase.Spec.DEFAULT.manualSetup()));
        e.add(op("p2p-write-rtr-then-send", "RFC 6581 5, 9.2",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(1, 0, 0)); // RFC 6581: the zero-length Write RTR, STag 1 as siw
                    ctx.sendGood(Ulpdus.send(1, 8));
                },
                accepted("the zero-length Write RTR is consumed, the Send lands in receive 0", receivesSend(8)))
                .spec(AdversarialCase.Spec.DEFAULT.p2p(false, true, false))
                .allow(r -> receive0(r, 8)));
        e.add(op("p2p-first-fpdu-is-not-the-rtr", "RFC 6581 5, 9.2",
                ctx -> ctx.send(Ulpdus.send(1, 8)),
                terminate(LLP_NO_MATCHING_RTR, NOTHING))
                .spec(AdversarialCase.Spec.DEFAULT.p2p(false, true, false)));
        e.add(op("p2p-read-rtr-of-nonzero-size", "RFC 6581 5, 9.2",
                ctx -> ctx.send(readOf(1, 1, 0, 8)),
                terminate(LLP_NO_MATCHING_RTR, NOTHING))
                .spec(AdversarialCase.Spec.DEFAULT.p2p(false, false, true)));
        e.add(op("responder-waits-for-the-first-fpdu", "RFC 5044 7.1.2 rule 4",
                ctx -> {
                    ctx.served.qp.postSend(SendWorkRequest.send(60, new Sge(ctx.regions.readOnly, 0, 8)));
                    // A task queued on the queue pair's event loop behind the post runs once the loop has
                    // taken the post: a Send it did not hold has been written to TCP by then (on an idle
                    // connection the flush writes the 8 octets at once). From there the raw peer's reader
                    // has a second to see it, which octets already in the kernel's loopback need far less
                    // of; it must see nothing, and the Send must not have completed. The positive control
                    // is the accepted check below: the same Send arrives, and completes, once the
                    // initiator's first FPDU is in.
                    java.util.concurrent.CompletableFuture<Void> behindThePost = new java.util.concurrent.CompletableFuture<>();
                    ctx.served.qp.execute(() -> behindThePost.complete(null));
                    behindThePost.get(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    assertNull(ctx.peer.await(u -> true, EARLY_FPDU_WINDOW_MILLIS),
                            "jiwarp sent an FPDU before the initiator's first: " + ctx.peer.describe());
                    assertNull(ctx.served.cq.take(0, TimeUnit.MILLISECONDS),
                            "jiwarp's Send completed before the initiator's first FPDU");
                    ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 8));
                },
                accepted("jiwarp's Send leaves only after the initiator's first FPDU", ctx -> {
                    assertNotNull(ctx.peer.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND),
                            Outcome.WAIT_MILLIS), ctx.peer.describe());
                    WorkCompletion wc = ctx.served.cq.take(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    assertNotNull(wc);
                    assertEquals(60, wc.workRequestId(), wc.toString());
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                })).allow(AdversarialCatalogue::firstWrite));
        e.add(op("request-ord-all-ones", "RFC 6581 9.1 (0x3FFF)",
                ctx -> {
                    ctx.handshake(null, MpaBytes.Words.of(0x3FFF, 0x3FFF));
                    // RFC 6581 9.1: IRD 0x3FFF and ORD 0x3FFF back, the local values unchanged.
                    assertEquals(0x3FFF, ctx.mpaFrame.ird(), "Reply IRD");
                    assertEquals(0x3FFF, ctx.mpaFrame.ord(), "Reply ORD");
                },
                accepted("0x3FFF is answered with 0x3FFF; jiwarp keeps its own IRD and ORD", ctx -> {
                    assertEquals(JiwarpTarget.IRD, ctx.served.qp.parameters().ird(), "local IRD");
                    assertEquals(JiwarpTarget.ORD, ctx.served.qp.parameters().ord(), "local ORD");
                    assertEquals(0x3FFF, ctx.served.qp.parameters().peerOrd(), "the initiator's ORD, for the ULP");
                }))
                .spec(AdversarialCase.Spec.DEFAULT.manualSetup()));
    }

    // MPA startup, jiwarp initiating: RFC 5044 section 7.1.2 rule 3, RFC 6581 sections 9 and 10.
    private static void mpaStartupAsInitiator(List<Entry> e) {
        e.add(initiator("reply-never-arrives", "RFC 5044 7.1.2 rule 10",
                ctx -> { },
                connectFails(LLP_CONNECTION_LOST)));
        e.add(initiator("reply-ord-above-the-initiator-ird", "RFC 6581 9.1",
                ctx -> ctx.peer.write(goodReply(ctx).withWords(MpaBytes.Words.of(4, 8)).bytes()),
                connectFailsWithTerm(LLP_INSUFFICIENT_IRD)));
        e.add(initiator("reply-ord-all-ones", "RFC 6581 9.1 (0x3FFF)",
                ctx -> ctx.peer.write(goodReply(ctx).withWords(MpaBytes.Words.of(4, 0x3FFF)).bytes()),
                connected("no automatic negotiation: the initiator keeps its IRD", ctx -> {
                    assertEquals(JiwarpTarget.IRD, ctx.clientQp.parameters().ird());
                    assertEquals(0x3FFF, ctx.clientQp.parameters().peerOrd(), "the responder's ORD, for the ULP");
                })));
        e.add(initiator("reply-ird-all-ones", "RFC 6581 9.1 (0x3FFF)",
                ctx -> ctx.peer.write(goodReply(ctx).withWords(MpaBytes.Words.of(0x3FFF, 4)).bytes()),
                connected("the initiator keeps its ORD", ctx -> assertEquals(JiwarpTarget.ORD,
                        ctx.clientQp.parameters().ord()))));
        e.add(initiator("reply-rtr-flags-without-p2p-ignored", "RFC 6581 9.2 (B, C, D ignored when A is 0)",
                ctx -> ctx.peer.write(goodReply(ctx).withWords(MpaBytes.Words.of(4, 4).raw(0x4004, 0xC004)).bytes()),
                connected("a client-server connection", ctx -> {
                    assertFalse(ctx.clientQp.parameters().peerToPeer());
                    assertNull(ctx.clientQp.parameters().rtr());
                })));
        e.add(initiator("reply-p2p-rtr-not-offered", "RFC 6581 9.2, 9.3",
                ctx -> ctx.peer.write(goodReply(ctx).withWords(MpaBytes.Words.of(4, 4).p2p(false, false, true))
                        .bytes()),
                connectFailsWithTerm(LLP_NO_MATCHING_RTR))
                .spec(AdversarialCase.Spec.DEFAULT.p2p(false, true, false)));
    }

    // MPA full operation: RFC 5044 sections 4, 6 and 8.
    private static void mpaFraming(List<Entry> e) {
        e.add(op("bad-crc-after-good-fpdus", "RFC 5044 4.4, 6, 8 (code 2)",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 8));
                    byte[] fpdu = ctx.peer.frame(Ulpdus.write(ctx.writeStag(), ctx.writeTo(64), 16));
                    fpdu[fpdu.length - 1] ^= 0x80;
                    ctx.peer.write(fpdu);
                },
                // RFC 5044 section 8: the bad FPDU's Write is not passed on, so only the good one lands.
                terminate(LLP_CRC_ERROR, NOTHING)).allow(r -> List.of(r.inWrite(0, 8))));
        e.add(op("ulpdu-length-over-the-limit", "RFC 5044 3 (MULPDU), 8 (code 3)",
                ctx -> ctx.peer.write(new byte[] {0x40, 0x01}),
                terminate(LLP_MARKER_ULPDU_LENGTH_MISMATCH, NOTHING)));
        e.add(op("fpdu-longer-than-mulpdu-accepted", "RFC 5044 3, 4.5",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 4000));
                    ctx.fence(1, 0);
                    assertTrue(ctx.regions.writeRegionHolds(0, Ulpdus.payload(4000)), "the 4000-octet Write");
                },
                accepted("a 4014-octet ULPDU above the 1454-octet MULPDU is placed", ctx -> { }))
                .allow(r -> List.of(r.inWrite(0, 4000), r.inReceive(0, 4))));
        e.add(op("zero-length-ulpdu", "RFC 5041 4, 7.2 (local catastrophic)",
                ctx -> ctx.send(new byte[0]),
                terminate(DDP_LOCAL_CATASTROPHIC, NOTHING)));
        e.add(op("one-octet-ulpdu", "RFC 5041 4.1, 7.2",
                ctx -> ctx.send(new byte[] {0x41}),
                terminate(DDP_LOCAL_CATASTROPHIC, NOTHING)));
        e.add(op("ulpdu-shorter-than-the-untagged-header", "RFC 5041 4.3, 4.4",
                ctx -> ctx.send(Ulpdus.truncate(Ulpdus.send(1, 0), 10)),
                terminate(DDP_LOCAL_CATASTROPHIC, NOTHING)));
        e.add(op("ulpdu-shorter-than-the-tagged-header", "RFC 5041 4.2, 4.4",
                ctx -> ctx.send(Ulpdus.truncate(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 0), 8)),
                terminate(DDP_LOCAL_CATASTROPHIC, NOTHING)));
        e.add(op("marker-with-a-wrong-fpduptr", "RFC 5044 4.3, 8 (code 3)",
                ctx -> {
                    byte[] fpdu = ctx.peer.frame(Ulpdus.send(1, 8));
                    fpdu[3] = 4; // the leading marker must point at 0
                    ctx.peer.write(RawConnection.recrc(fpdu));
                },
                terminate(LLP_MARKER_ULPDU_LENGTH_MISMATCH, NOTHING))
                .spec(AdversarialCase.Spec.DEFAULT.onTheMarkersTarget()));
        e.add(op("marker-fpduptr-low-bits-set", "RFC 5044 4.2 (FPDUPTR)",
                ctx -> {
                    byte[] fpdu = ctx.peer.frame(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 600));
                    assertEquals(0x01FC, (fpdu[514] & 0xFF) << 8 | fpdu[515] & 0xFF, "the inner marker's FPDUPTR");
                    fpdu[515] |= 0x03;
                    ctx.peer.write(RawConnection.recrc(fpdu));
                },
                accepted("the low bits are taken as zero: the Write lands", ctx -> {
                    ctx.fence(1, 0);
                    assertTrue(ByteBufUtil.equals(ctx.regions.write.buffer(), 0,
                            Unpooled.wrappedBuffer(Ulpdus.payload(600)), 0, 600), "the Write's octets");
                }))
                .spec(AdversarialCase.Spec.DEFAULT.onTheMarkersTarget())
                .allow(r -> List.of(r.inWrite(0, 600), r.inReceive(0, 4))));
        e.add(op("marker-reserved-field-ignored", "RFC 5044 4.2 (RESERVED)",
                ctx -> {
                    byte[] fpdu = ctx.peer.frame(Ulpdus.send(1, 8));
                    fpdu[0] = 0x5A;
                    fpdu[1] = (byte) 0xA5;
                    ctx.peer.write(RawConnection.recrc(fpdu));
                },
                accepted("a marker with non-zero RESERVED", receivesSend(8)))
                .spec(AdversarialCase.Spec.DEFAULT.onTheMarkersTarget()).allow(r -> receive0(r, 8)));
        e.add(op("markers-requested-from-jiwarp", "RFC 5044 4.3, 7.1.1 (M)",
                ctx -> ctx.send(Ulpdus.untagged(DdpHeaders.controlByte(false, true, 0, 2), rdmap(RdmapOpcode.SEND), 0,
                        DdpHeaders.QN_SEND, 1, 0, 8)),
                terminate(DDP_UNTAGGED_INVALID_VERSION, DDP_HEADER))
                .spec(AdversarialCase.Spec.DEFAULT.askingJiwarpForMarkers()));
        e.add(op("half-open-in-the-middle-of-an-fpdu", "RFC 5044 8 (code 1), RFC 5041 6.2.1",
                ctx -> {
                    byte[] fpdu = ctx.peer.frame(Ulpdus.send(1, 32));
                    ctx.peer.write(Arrays.copyOf(fpdu, fpdu.length / 2));
                    ctx.peer.shutdownOutput();
                },
                closed(null)));
        e.add(op("half-open-in-the-middle-of-a-message", "RFC 5041 6.2.1, 6.2.2",
                ctx -> {
                    ctx.sendGood(Ulpdus.sendSegment(false, 1, 0, 16));
                    ctx.peer.shutdownOutput();
                },
                closed(null)).allow(r -> receive0(r, 16)));
        e.add(op("reset-in-the-middle-of-a-message", "RFC 5044 8 (code 1), RFC 5041 6.2.2",
                ctx -> {
                    ctx.sendGood(Ulpdus.sendSegment(false, 1, 0, 16));
                    // The reset must find jiwarp inside the message: it comes once the first segment is placed,
                    // which jiwarp does only after reading it (and, CRC on, checking it).
                    ctx.awaitPlacedInReceive(0, Ulpdus.payload(16));
                    ctx.peer.reset();
                },
                closed(null)).allow(r -> receive0(r, 16)));
        e.add(op("reset-in-the-middle-of-an-fpdu", "RFC 5044 8 (code 1)",
                ctx -> {
                    // A whole Send, then the first 40 octets of a Write's FPDU, in one write and so one TCP
                    // segment. Once the Send completes jiwarp has read up to its end, so the partial FPDU
                    // behind it is in jiwarp's hands or its socket's receive queue, ahead of the reset,
                    // which TCP hands over only after the data before it: jiwarp is inside the FPDU when
                    // it learns of the reset, however the reads fall.
                    byte[] send = ctx.peer.frame(Ulpdus.send(1, 4));
                    byte[] fpdu = Arrays.copyOf(ctx.peer.frame(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 64)), 40);
                    byte[] both = Arrays.copyOf(send, send.length + fpdu.length);
                    System.arraycopy(fpdu, 0, both, send.length, fpdu.length);
                    ctx.peer.write(both);
                    ctx.awaitReceive(0, WcStatus.SUCCESS);
                    ctx.peer.reset();
                },
                closed(null)).allow(r -> receive0(r, 4)));
    }

    // DDP tagged buffers: RFC 5041 sections 4.1, 4.2, 5.2, 7.1, 7.2, 8; RFC 5040 7.2.
    private static void ddpTagged(List<Entry> e) {
        e.add(op("ddp-reserved-bits-ignored", "RFC 5041 4.1 (Rsvd)",
                ctx -> {
                    ctx.sendGood(Ulpdus.tagged(DdpHeaders.controlByte(true, true, 0xF, 1),
                            rdmap(RdmapOpcode.RDMA_WRITE), ctx.writeStag(), ctx.writeTo(0), 16));
                    ctx.fence(1, 0);
                    assertTrue(ctx.regions.writeRegionHolds(0, Ulpdus.payload(16)), "the Write was placed");
                },
                accepted("a Write with all four Rsvd bits set is placed", ctx -> { }))
                .allow(r -> List.of(r.inWrite(0, 16), r.inReceive(0, 4))));
        e.add(op("stag-of-another-protection-domain", "RFC 5041 8.2, 8.3.1 rule 1, 7.2",
                ctx -> ctx.send(Ulpdus.write(ctx.regions.foreign.stag(), ctx.regions.foreign.address(), 16)),
                terminate(DDP_TAGGED_STAG_NOT_ASSOCIATED, DDP_HEADER)));
        e.add(op("stag-invalidated", "RFC 5041 8.3 rule 2, 8.3.1 rule 6",
                ctx -> ctx.send(Ulpdus.write(ctx.regions.invalidated.stag(), ctx.regions.invalidated.address(), 16)),
                terminate(DDP_TAGGED_INVALID_STAG, DDP_HEADER)));
        e.add(op("stag-deregistered", "RFC 5041 8.3 rule 2, 8.3.1 rule 4",
                ctx -> ctx.send(Ulpdus.write(ctx.regions.deregisteredStag, ctx.regions.deregisteredAddress, 16)),
                terminate(DDP_TAGGED_INVALID_STAG, DDP_HEADER)));
        e.add(op("write-to-a-read-only-region", "RFC 5040 7.2, RFC 5041 8.3.1 rule 5",
                ctx -> ctx.send(Ulpdus.write(ctx.regions.readOnly.stag(), ctx.regions.readOnly.address(), 8)),
                terminate(RDMAP_ACCESS_RIGHTS_VIOLATION, DDP_HEADER)));
        e.add(op("write-to-a-local-only-region", "RFC 5040 7.2, RFC 5041 8.3.1 rule 5",
                ctx -> ctx.send(Ulpdus.write(ctx.regions.receive.stag(), ctx.regions.receive.address(), 8)),
                terminate(RDMAP_ACCESS_RIGHTS_VIOLATION, DDP_HEADER)));
        e.add(op("zero-length-write-to-an-unknown-stag", "RFC 5041 5.2, 7.1",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(UNKNOWN_STAG, 0, 0));
                    ctx.fence(1, 0);
                },
                accepted("RFC 5041 5.2: the STag and TO of a zero-length Write are not checked; the stream goes on",
                        ctx -> { }))
                .allow(r -> List.of(r.inReceive(0, 4))));
        e.add(op("read-from-a-write-only-region", "RFC 5040 7.2 (Read Request 4), 4.8",
                ctx -> ctx.send(readOf(1, ctx.regions.writeOnly, 0, 16)),
                terminate(RDMAP_ACCESS_RIGHTS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(op("read-source-stag-invalidated", "RFC 5040 7.2 (Read Request 4a)",
                ctx -> ctx.send(readOf(1, ctx.regions.invalidated, 0, 16)),
                terminate(RDMAP_INVALID_STAG, DDP_AND_READ_REQUEST)));
        e.add(op("read-source-of-another-protection-domain", "RFC 5040 7.2 (Read Request 4b), 8.1.1 rule 1",
                ctx -> ctx.send(readOf(1, ctx.regions.foreign, 0, 16)),
                terminate(RDMAP_STAG_NOT_ASSOCIATED, DDP_AND_READ_REQUEST)));
        e.add(op("read-answered-with-the-data", "RFC 5040 5.2.1, 5.2.2, 4.4",
                ctx -> ctx.sendGood(readOf(1, ctx.regions.readOnly, 8, 32)),
                accepted("the Read Response carries the region's octets to the requested sink", ctx -> {
                    byte[] response = ctx.peer.await(u -> Ulpdus.isTagged(u, RdmapOpcode.RDMA_READ_RESPONSE),
                            Outcome.WAIT_MILLIS);
                    assertNotNull(response, ctx.peer.describe());
                    assertReadResponse(response, 32, ByteBufUtil.getBytes(ctx.regions.readOnly.buffer(), 8, 32));
                })));
    }

    private static void assertReadResponse(byte[] response, int length, byte[] data) {
        ByteBuf b = Unpooled.wrappedBuffer(response);
        try {
            assertTrue(DdpHeaders.last(b, 0), "L set on the one-segment response");
            assertEquals(PEER_SINK_STAG, DdpHeaders.stag(b, 0), "the sink STag is copied from the request");
            assertEquals(PEER_SINK_TO, DdpHeaders.taggedOffset(b, 0), "the sink TO is copied from the request");
            assertEquals(DdpHeaders.TAGGED_HEADER_LENGTH + length, response.length);
            if (data != null) {
                assertArrayEquals(data, Arrays.copyOfRange(response, DdpHeaders.TAGGED_HEADER_LENGTH, response.length));
            }
        } finally {
            b.release();
        }
    }

    // DDP untagged buffers: RFC 5041 sections 4.1, 4.3, 5.2, 5.3, 7.1, 7.2; RFC 5040 5.3, 6.1.
    private static void ddpUntagged(List<Entry> e) {
        e.add(op("send-msn-replay", "RFC 5041 7.1 (untagged 5), 5.3 (at most once)",
                ctx -> {
                    ctx.sendGood(Ulpdus.send(1, 8));
                    ctx.awaitReceive(0, WcStatus.SUCCESS);
                    ctx.send(Ulpdus.send(1, 8));
                },
                terminate(DDP_UNTAGGED_INVALID_MSN_RANGE, DDP_HEADER)).allow(r -> receive0(r, 8)));
        e.add(op("read-request-msn-replay", "RFC 5041 7.1, 5.3 (at most once)",
                ctx -> {
                    ctx.sendGood(readOf(1, ctx.regions.readOnly, 0, 8));
                    assertNotNull(ctx.peer.await(u -> Ulpdus.isTagged(u, RdmapOpcode.RDMA_READ_RESPONSE),
                            Outcome.WAIT_MILLIS));
                    ctx.send(readOf(1, ctx.regions.readOnly, 0, 8));
                },
                terminate(DDP_UNTAGGED_INVALID_MSN_RANGE, DDP_HEADER)));
        e.add(op("send-mo-gap", "RFC 5041 5.2, 7.1 (untagged 3)",
                ctx -> {
                    ctx.sendGood(Ulpdus.sendSegment(false, 1, 0, 16));
                    ctx.send(Ulpdus.sendSegment(true, 1, 17, 16));
                },
                terminate(DDP_UNTAGGED_INVALID_MO, DDP_HEADER)).allow(r -> receive0(r, 16)));
        e.add(op("send-mo-overlap", "RFC 5041 5.2, 7.1 (untagged 3)",
                ctx -> {
                    ctx.sendGood(Ulpdus.sendSegment(false, 1, 0, 16));
                    ctx.send(Ulpdus.sendSegment(true, 1, 8, 16));
                },
                terminate(DDP_UNTAGGED_INVALID_MO, DDP_HEADER)).allow(r -> receive0(r, 16)));
        e.add(op("send-without-a-posted-receive", "RFC 5041 7.1 (untagged 2), RFC 5040 5.3",
                ctx -> ctx.send(Ulpdus.send(1, 8)),
                terminate(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, DDP_HEADER))
                .spec(AdversarialCase.Spec.DEFAULT.receives(0)));
        e.add(op("send-after-the-receives-ran-out", "RFC 5041 7.1 (untagged 2)",
                ctx -> {
                    ctx.sendGood(Ulpdus.send(1, 8));
                    ctx.awaitReceive(0, WcStatus.SUCCESS);
                    ctx.send(Ulpdus.send(2, 8));
                },
                terminate(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, DDP_HEADER))
                .spec(AdversarialCase.Spec.DEFAULT.receives(1)).allow(r -> receive0(r, 8)));
        e.add(op("zero-length-send-consumes-a-receive", "RFC 5040 5.3, RFC 5041 5.2",
                ctx -> ctx.sendGood(Ulpdus.send(1, 0)),
                accepted("receive 0 completes with 0 octets", receivesSend(0))));
        e.add(op("read-request-shorter-than-28", "RFC 5040 4.4, RFC 5041 7.1",
                ctx -> ctx.send(Ulpdus.truncate(readOf(1, ctx.regions.readOnly, 0, 8),
                        DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH - 1)),
                terminate(DDP_UNTAGGED_MESSAGE_TOO_LONG, DDP_HEADER)));
        e.add(op("read-request-without-l", "RFC 5040 5.2.1, RFC 5041 4.1 (L)",
                ctx -> ctx.send(Ulpdus.readRequest(UNTAGGED_MORE, rdmap(RdmapOpcode.RDMA_READ_REQUEST),
                        DdpHeaders.QN_READ_REQUEST, 1, 0, PEER_SINK_STAG, PEER_SINK_TO, 8, ctx.regions.readOnly.stag(),
                        ctx.regions.readOnly.address())),
                terminate(DDP_UNTAGGED_MESSAGE_TOO_LONG, DDP_HEADER)));
        e.add(op("read-requests-beyond-the-ird", "RFC 5040 6.1, 5.2.2; RFC 5041 7.1 (untagged 2)",
                AdversarialCatalogue::readsBeyondTheIrd,
                terminate(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, DDP_HEADER))
                .spec(AdversarialCase.Spec.DEFAULT.receiveBuffer(64 << 10)));
    }

    /**
     * IRD + 1 Read Requests in one burst while the raw peer does not read: the first asks for 8 MiB
     * (more than the socket buffers hold), so its response cannot all go and the next three wait
     * behind it in the IRD; the fifth finds no room. The peer reads again only once jiwarp has
     * refused it.
     */
    private static void readsBeyondTheIrd(CaseContext ctx) throws Exception {
        ctx.peer.pauseReading();
        List<byte[]> burst = new ArrayList<>();
        burst.add(readOf(1, ctx.target.bigSource, 0, JiwarpTarget.BIG_SOURCE_SIZE));
        for (int msn = 2; msn <= JiwarpTarget.IRD + 1; msn++) {
            burst.add(readOf(msn, ctx.regions.readOnly, 0, 1));
        }
        ctx.offending = burst.get(JiwarpTarget.IRD);
        ctx.peer.sendAll(burst.toArray(new byte[0][]));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Outcome.WAIT_MILLIS);
        // TERMINATE as soon as the request is refused; the Terminate itself waits behind the 8 MiB.
        while (ctx.served.qp.state() == QpState.RTS && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        ctx.peer.resumeReading();
        assertTrue(ctx.peer.awaitClosed(Outcome.WAIT_MILLIS));
        // The IRD requests accepted were answered as far as the connection took their responses (the
        // responder issues only while it is writable), then the Terminate ended the stream: never the
        // whole 8 MiB queued for a peer that did not read.
        assertTrue(ctx.peer.readResponseOctets() > 0, "no Read Response before the Terminate");
        assertTrue(ctx.peer.readResponseOctets() < JiwarpTarget.BIG_SOURCE_SIZE, ctx.peer.readResponseOctets()
                + " octets of Read Responses: the whole response was queued for a peer that did not read");
    }

    // RDMAP: RFC 5040 sections 4.1, 4.8, 5.1-5.4, 7.2.
    private static void rdmapCases(List<Entry> e) {
        // RFC 7306 defines 0x8 to 0xB (Immediate Data and atomics, below); 0xA and 0xB on queue 0 are
        // on the wrong queue. 0xC to 0xF, reserved, are the conformance library's opcode-c to opcode-f.
        for (int opcode = 0xA; opcode <= 0xB; opcode++) {
            int code = opcode;
            e.add(op(String.format("opcode-%x", code), "RFC 5040 4.1 (Figure 4), 7.2 (2); RFC 7306 4.1",
                    ctx -> ctx.send(untaggedOpcode(code)),
                    terminate(RDMAP_UNEXPECTED_OPCODE, DDP_HEADER)));
        }
        rfc7306(e);
        e.add(op("read-response-placed", "RFC 5040 5.2.2, 5.5 rule 19",
                ctx -> {
                    ByteBuf request = serverReads(ctx);
                    int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
                    try {
                        ctx.sendGood(Ulpdus.readResponse(ReadRequestHeader.sinkStag(request, at),
                                ReadRequestHeader.sinkTaggedOffset(request, at), 64, true));
                    } finally {
                        request.release();
                    }
                },
                accepted("the Read completes and its octets are in the sink", ctx -> {
                    WorkCompletion wc = ctx.served.cq.take(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    assertNotNull(wc);
                    assertEquals(77, wc.workRequestId(), wc.toString());
                    assertEquals(WcOpcode.RDMA_READ, wc.opcode());
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    assertTrue(ByteBufUtil.equals(ctx.regions.sink.buffer(), 0,
                            Unpooled.wrappedBuffer(Ulpdus.payload(64)), 0, 64), "the Read's octets in the sink");
                }))
                .allow(r -> List.of(r.inWrite(0, 8), r.inSink(0, 64))));
        e.add(op("send-with-invalidate-of-a-foreign-stag", "RFC 5040 5.3, 7.2 (5), 8.1.1 rule 1",
                ctx -> ctx.send(Ulpdus.sendWithInvalidate(1, ctx.regions.foreign.stag(), 8)),
                terminate(RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, DDP_HEADER)).allow(r -> receive0(r, 8)));
        e.add(op("send-with-invalidate-of-an-invalid-stag", "RFC 5040 5.3",
                ctx -> ctx.sendGood(Ulpdus.sendWithInvalidate(1, ctx.regions.invalidated.stag(), 8)),
                accepted("invalidating an STag already invalid is no error", ctx -> {
                    WorkCompletion wc = ctx.awaitReceive(0, WcStatus.SUCCESS);
                    assertEquals(ctx.regions.invalidated.stag(), wc.invalidatedStag());
                })).allow(r -> receive0(r, 8)));
        e.add(op("send-with-invalidate-of-a-shared-stag", "RFC 5040 8.1.1 rule 7, 5.3",
                ctx -> ctx.sendGood(Ulpdus.sendWithInvalidate(1, ctx.regions.shared.stag(), 8)),
                accepted("the STag, shared by every queue pair of the domain, is invalidated", ctx -> {
                    WorkCompletion wc = ctx.awaitReceive(0, WcStatus.SUCCESS);
                    assertEquals(ctx.regions.shared.stag(), wc.invalidatedStag());
                    assertFalse(ctx.regions.shared.valid(), "the shared region was invalidated");
                })).allow(r -> receive0(r, 8))
                .deviation("RFC 5040 8.1.1 rule 7: a Remote Peer MUST NOT be able to invalidate an STag shared on "
                        + "several streams; jiwarp lets any queue pair of the domain invalidate any of its STags "
                        + "(every registration allows remote invalidation, and a domain's STags serve all its "
                        + "queue pairs)"));
    }

    // The peer's Terminate: RFC 5040 sections 4.8, 5.4, 6.2.1.
    private static void peerTerminate(List<Entry> e) {
        e.add(op("terminate-in-the-middle-of-a-message", "RFC 5040 5.4, 6.2.1",
                ctx -> {
                    ctx.sendGood(Ulpdus.sendSegment(false, 1, 0, 16));
                    ctx.sendGood(Ulpdus.terminate(LLP_CRC_ERROR));
                },
                closed(LLP_CRC_ERROR)).allow(r -> receive0(r, 16)));
        e.add(op("terminate-carrying-a-read-request", "RFC 5040 4.8 (R), 5.4",
                ctx -> {
                    ByteBuf refused = Unpooled.wrappedBuffer(readOf(1, ctx.regions.readOnly, 0, 8));
                    ByteBuf body = Unpooled.buffer();
                    try {
                        TerminateHeader.write(body, RDMAP_INVALID_STAG, refused.readableBytes(),
                                refused.slice(0, DdpHeaders.UNTAGGED_HEADER_LENGTH),
                                refused.slice(DdpHeaders.UNTAGGED_HEADER_LENGTH, ReadRequestHeader.LENGTH));
                        byte[] bytes = ByteBufUtil.getBytes(body);
                        int control = (bytes[0] & 0xFF) << 24 | (bytes[1] & 0xFF) << 16 | (bytes[2] & 0xFF) << 8
                                | bytes[3] & 0xFF;
                        ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, control,
                                Arrays.copyOfRange(bytes, 4, bytes.length)));
                    } finally {
                        refused.release();
                        body.release();
                    }
                },
                closed(RDMAP_INVALID_STAG)));
        e.add(op("terminate-with-reserved-bits-set", "RFC 5040 4.8 (Reserved ignored on receive)",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0,
                        TerminateHeader.controlWord(2, 0, 2, 0, 0x1FFF), new byte[0])),
                closed(LLP_CRC_ERROR)));
        e.add(op("terminate-in-siw-layout", "RFC 5040 4.8 (interop with Linux siw)",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, 0x0202_0000,
                        new byte[0])),
                closed(LLP_CRC_ERROR)));
        e.add(op("terminate-with-an-undefined-error", "RFC 5040 4.8, 7.1",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0,
                        TerminateHeader.controlWord(2, 0, 0x42, 0, 0), new byte[0])),
                closed(null)));
        e.add(op("terminate-too-short-for-its-control", "RFC 5040 4.8, 7.2",
                ctx -> ctx.sendGood(Arrays.copyOf(Ulpdus.terminate(LLP_CRC_ERROR),
                        DdpHeaders.UNTAGGED_HEADER_LENGTH + 2)),
                closed(null)));
        e.add(op("terminate-with-msn-2", "RFC 5040 5.4 (one Terminate), RFC 5041 4.3",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 2, 0,
                        TerminateHeader.controlWord(LLP_CRC_ERROR, 0), new byte[0])),
                closed(null)));
        e.add(op("terminate-without-l", "RFC 5040 5.4, 4.8",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_MORE, DdpHeaders.QN_TERMINATE, 1, 0,
                        TerminateHeader.controlWord(LLP_CRC_ERROR, 0), new byte[0])),
                closed(null)));
        e.add(op("terminate-at-mo-4", "RFC 5040 5.4, RFC 5041 4.3 (MO)",
                ctx -> ctx.sendGood(Ulpdus.terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 4,
                        TerminateHeader.controlWord(LLP_CRC_ERROR, 0), new byte[0])),
                closed(null)));
        e.add(op("garbage-after-a-terminate", "RFC 5040 5.4, 6.2.1",
                ctx -> {
                    byte[] fpdu = ctx.peer.frame(Ulpdus.terminate(RDMAP_INVALID_STAG));
                    byte[] garbage = "GARBAGE AFTER THE TERMINATE".getBytes(StandardCharsets.US_ASCII);
                    byte[] both = Arrays.copyOf(fpdu, fpdu.length + garbage.length);
                    System.arraycopy(garbage, 0, both, fpdu.length, garbage.length);
                    ctx.peer.write(both);
                },
                closed(RDMAP_INVALID_STAG)));
    }

    // After an error: RFC 5041 7.1, RFC 5040 5.4 and 7.1, RFC 5044 8.
    private static void afterAnError(List<Entry> e) {
        e.add(op("segments-after-an-error-are-dropped", "RFC 5041 7.1, RFC 5044 8, RFC 5040 5.4",
                ctx -> {
                    byte[] bad = Ulpdus.write(UNKNOWN_STAG, ctx.writeTo(0), 16);
                    ctx.offending = bad;
                    ctx.peer.sendAll(bad, Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 16), Ulpdus.send(1, 8),
                            readOf(1, ctx.regions.readOnly, 0, 8));
                },
                terminate(DDP_TAGGED_INVALID_STAG, DDP_HEADER)));
        e.add(op("first-of-two-errors-is-reported", "RFC 5040 7.1 rule 4",
                ctx -> {
                    byte[] first = Ulpdus.untagged(DdpHeaders.controlByte(false, true, 0, 2), rdmap(RdmapOpcode.SEND), 0,
                            DdpHeaders.QN_SEND, 1, 0, 8);
                    ctx.offending = first;
                    ctx.peer.sendAll(first, Ulpdus.write(UNKNOWN_STAG, 0, 16));
                },
                terminate(DDP_UNTAGGED_INVALID_VERSION, DDP_HEADER)));
        e.add(op("fpdus-after-a-bad-crc-are-dropped", "RFC 5044 8 (no further FPDUs)",
                ctx -> {
                    byte[] bad = ctx.peer.frame(Ulpdus.send(1, 8));
                    bad[12] ^= 0x10;
                    byte[] good = ctx.peer.frame(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 16));
                    byte[] both = Arrays.copyOf(bad, bad.length + good.length);
                    System.arraycopy(good, 0, both, bad.length, good.length);
                    ctx.peer.write(both);
                },
                terminate(LLP_CRC_ERROR, NOTHING)));
        e.add(op("local-protection-error-sends-no-terminate", "RFC 5040 7.1 rule 1",
                ctx -> {
                    ctx.sendGood(Ulpdus.write(ctx.writeStag(), ctx.writeTo(0), 8));
                    MemoryRegion gone = ctx.target.pd.register(ByteBuffer.allocateDirect(64), JiwarpTarget.ALL);
                    gone.deregister();
                    ctx.served.qp.postSend(SendWorkRequest.send(55, new Sge(gone, 0, 8)));
                    ctx.served.qp.postSend(SendWorkRequest.send(56, new Sge(ctx.regions.readOnly, 0, 8)));
                },
                accepted("the bad work request completes in error locally; the next Send goes out", ctx -> {
                    WorkCompletion first = ctx.served.cq.take(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                    assertNotNull(first);
                    assertEquals(55, first.workRequestId(), first.toString());
                    assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, first.status(), first.toString());
                    byte[] send = ctx.peer.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND,
                            DdpHeaders.QN_SEND), Outcome.WAIT_MILLIS);
                    assertNotNull(send, ctx.peer.describe());
                    assertNull(ctx.served.qp.terminateSent());
                    assertEquals(QpState.RTS, ctx.served.qp.state());
                }))
                .allow(AdversarialCatalogue::firstWrite)
                .deviation("RFC 5040 7.1 rule 1: an error detected while creating a Send (here, a gather list in "
                        + "a deregistered region) MUST produce a Terminate sent instead of the request; jiwarp "
                        + "completes the work request with LOCAL_PROTECTION_ERROR, sends nothing and stays RTS "
                        + "(verbs behaviour)"));
    }

    /** The names of every case, for the requirement matrix. */
    public static Set<String> names() {
        Set<String> names = new LinkedHashSet<>();
        for (AdversarialCase c : ALL) {
            if (!names.add(c.name())) {
                throw new IllegalStateException("duplicate case name " + c.name());
            }
        }
        return names;
    }

    /** The names of the cases whose expected outcome is a deviation, for the requirement matrix. */
    public static Set<String> deviationNames() {
        Set<String> names = new LinkedHashSet<>();
        for (AdversarialCase c : deviations()) {
            names.add(c.name());
        }
        return names;
    }
}
