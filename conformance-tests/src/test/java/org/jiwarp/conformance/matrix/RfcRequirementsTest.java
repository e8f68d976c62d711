package org.jiwarp.conformance.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.conform.peer.TerminateCheck;
import org.jiwarp.ddp.Access;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.FpduDeframer;
import org.jiwarp.mpa.FpduFramer;
import org.jiwarp.mpa.MpaConnectRequest;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.mpa.MpaRejectedException;
import org.jiwarp.mpa.MpaResponderHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.MemoryWindow;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * Requirements of RFC 5044, 5040, 5041 and 6581 that no other test checks directly: the RFC's own
 * worked examples, limits and defaults, and the places where jiwarp deliberately or knowingly
 * departs from the text. A test whose name says what jiwarp does where the RFC asks for something
 * else documents a deviation (the requirement matrix marks it); it asserts current behaviour so that
 * a change is noticed.
 */
class RfcRequirementsTest {

    private static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    // ---------------------------------------------------------------------------------------------
    // RFC 5044 section 4.4, Figures 5 and 6: the annotated FPDUs, octet for octet

    /** Figure 5: a 42-octet Send (queue 0, MSN 1, 24 zero octets) as the first FPDU, after its marker. */
    private static final String FIGURE_5 = "00000000" + "002a" + "4143" + "00000000" + "00000000" + "00000001"
            + "00000000" + "000000000000000000000000000000000000000000000000" + "52239983";
    /** Figure 6 from stream octet 0x1ec: the same Send with MSN 2, a marker at 0x200 pointing 0x14 back. */
    private static final String FIGURE_6 = "002a" + "4143" + "00000000" + "00000000" + "00000002" + "00000000"
            + "00000014" + "000000000000000000000000000000000000000000000000" + "84925898";

    private static ByteBuf send42(long msn) {
        ByteBuf ulpdu = Unpooled.buffer(42);
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, msn,
                0);
        ulpdu.writeZero(24);
        return ulpdu;
    }

    @Test
    void rfcExampleFpdusMatchFigures5And6() {
        FpduWriter writer = new FpduWriter(true, true);
        ByteBuf out = Unpooled.buffer();
        ByteBuf first = send42(1);
        ByteBuf filler = Unpooled.buffer(482);
        ByteBuf second = send42(2);
        try {
            writer.write(first, out);
            assertEquals(FIGURE_5, ByteBufUtil.hexDump(out), "Figure 5: marker, FPDU and CRC-32C octets");

            // Figure 6: the first FPDU of that stream was 492 octets long (a 482-octet ULPDU after the marker).
            FpduWriter stream = new FpduWriter(true, true);
            ByteBuf wire = Unpooled.buffer();
            try {
                DdpHeaders.writeUntagged(filler, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0,
                        DdpHeaders.QN_SEND, 1, 0);
                filler.writeZero(482 - DdpHeaders.UNTAGGED_HEADER_LENGTH);
                assertEquals(492, stream.write(filler, wire));
                stream.write(second, wire);
                assertEquals(FIGURE_6, ByteBufUtil.hexDump(wire, 0x1ec, wire.readableBytes() - 0x1ec),
                        "Figure 6: the second FPDU with the marker at octet 0x200");
                // The live deframer accepts both FPDUs and hands up the ULPDUs without the marker.
                EmbeddedChannel deframing = new EmbeddedChannel(new FpduDeframer(true, true));
                try {
                    deframing.writeInbound(wire.retain());
                    ByteBuf a = deframing.readInbound();
                    ByteBuf b = deframing.readInbound();
                    assertEquals(482, a.readableBytes());
                    assertEquals(ByteBufUtil.hexDump(second, 0, 42), ByteBufUtil.hexDump(b));
                    a.release();
                    b.release();
                } finally {
                    deframing.finishAndReleaseAll();
                }
                // The zero-copy framer writes the same octets as the RFC.
                EmbeddedChannel framing = new EmbeddedChannel(new FpduFramer(true, true));
                try {
                    framing.writeOutbound(send42(1));
                    ByteBuf framed = Unpooled.buffer();
                    for (Object o = framing.readOutbound(); o != null; o = framing.readOutbound()) {
                        framed.writeBytes((ByteBuf) o);
                        ReferenceCountUtil.release(o);
                    }
                    assertEquals(FIGURE_5, ByteBufUtil.hexDump(framed));
                    framed.release();
                } finally {
                    framing.finishAndReleaseAll();
                }
            } finally {
                wire.release();
            }
        } finally {
            out.release();
            first.release();
            filler.release();
            second.release();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 5044 sections 3 and 4.5: MULPDU

    @Test
    void mulpduStaysWithinTheRfcRangeByDefault() {
        // Every EMSS up to a 9000-octet jumbo frame's.
        for (int emss = 128; emss <= 9000 - 40; emss++) {
            MpaSettings settings = MpaSettings.builder().emss(emss).build();
            for (boolean markers : new boolean[] {false, true}) {
                int mulpdu = settings.mulpdu(markers);
                assertTrue(mulpdu <= 64768, "EMSS " + emss + ": MULPDU " + mulpdu + " above 64768");
                assertEquals(Fpdu.mulpdu(emss, markers), mulpdu);
            }
        }
        // RFC 5044 section 4.5: MULPDU never below 128; jiwarp refuses an EMSS that would take it there.
        assertThrowsIllegalArgument(() -> MpaSettings.builder().emss(127));
        assertTrue(MpaSettings.builder().emss(1460).build().mulpdu(true) >= 128);
    }

    /**
     * Deviation for Linux siw, RFC 5044 section 3: MULPDU MUST lie in [128, 64768] and DDP MUST NOT
     * post a larger ULPDU. Only {@code largeFpdus(true)}, the siw compatibility option (siw takes
     * 64 KiB FPDUs), exceeds it: 65530. Any configured EMSS, however large, stays at 64768.
     */
    @Test
    void largeFpdusExceedTheRfcMulpduCeiling() {
        MpaSettings large = MpaSettings.builder().largeFpdus(true).build();
        assertEquals(65530, large.mulpdu(false));
        assertTrue(large.mulpdu(false) > 64768);
        for (int emss : new int[] {64780, 65535}) {
            assertEquals(64768, MpaSettings.builder().emss(emss).build().mulpdu(false), "EMSS " + emss);
            assertTrue(MpaSettings.builder().emss(emss).build().mulpdu(true) <= 64768, "EMSS " + emss + ", markers");
        }
    }

    /**
     * Strict mode (RFC 5044 sections 3 and 4.4): MULPDU stays within [128, 64768] even with the siw
     * option, and CRCs are used by default: the Request sets C, and a responder sets C in the Reply
     * to a Request without it. An explicit CrcPolicy.REFUSE still suppresses them.
     */
    @Test
    void strictModeCapsMulpduAndUsesCrcs() {
        MpaSettings strict = MpaSettings.builder().strictRfc(true).largeFpdus(true).build();
        assertTrue(strict.mulpdu(false) <= 64768 && strict.mulpdu(true) <= 64768, String.valueOf(strict.mulpdu(false)));
        assertTrue(strict.mulpdu(false) >= 128, String.valueOf(strict.mulpdu(false)));
        assertEquals(CrcPolicy.REQUIRE, MpaSettings.builder().strictRfc(true).build().crcPolicy());
        assertEquals(CrcPolicy.REFUSE, MpaSettings.builder().strictRfc(true).crc(CrcPolicy.REFUSE).build()
                .crcPolicy(), "an explicit request suppresses CRCs");
        assertEquals(CrcPolicy.REQUIRE, RnicOptions.defaults().strictRfc(true).mpa().crcPolicy(), "one switch");
        EmbeddedChannel initiator = new EmbeddedChannel(new org.jiwarp.mpa.MpaInitiatorHandler(
                MpaSettings.builder().strictRfc(true).build(), new byte[0]), new Recorder());
        try {
            ByteBuf request = initiator.readOutbound();
            assertTrue(MpaFrames.crcFlag(request, 0), "the strict Request sets C");
            request.release();
        } finally {
            initiator.finishAndReleaseAll();
        }
        EmbeddedChannel responder = new EmbeddedChannel(new MpaResponderHandler(MpaSettings.builder().strictRfc(true)
                .build(), request -> request.accept(new byte[0])), new Recorder());
        try {
            responder.writeInbound(enhancedRequest(4, 4, 0));
            ByteBuf reply = responder.readOutbound();
            assertTrue(MpaFrames.crcFlag(reply, 0), "the strict Reply sets C to a Request without it");
            reply.release();
        } finally {
            responder.finishAndReleaseAll();
        }
    }

    private static void assertThrowsIllegalArgument(Runnable r) {
        try {
            r.run();
        } catch (IllegalArgumentException expected) {
            return;
        }
        throw new AssertionError("no IllegalArgumentException");
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 5044 section 4.4: the default is to use CRCs

    /**
     * Deviation, RFC 5044 section 4.4: "The default configuration for a connection MUST be to use
     * CRCs"; jiwarp by default neither sets C nor refuses it ({@link CrcPolicy#ACCEPT}), as Linux siw.
     */
    @Test
    void crcIsNotRequestedByDefault() {
        assertEquals(CrcPolicy.ACCEPT, MpaSettings.defaults().crcPolicy());
        EmbeddedChannel initiator = new EmbeddedChannel(new org.jiwarp.mpa.MpaInitiatorHandler(
                MpaSettings.defaults(), new byte[0]), new Recorder());
        try {
            ByteBuf request = initiator.readOutbound();
            assertNotNull(request);
            assertFalse(MpaFrames.crcFlag(request, 0), "the default Request does not set C");
            request.release();
        } finally {
            initiator.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 6581 sections 9.1, 9.3 and 10

    private static ByteBuf enhancedRequest(int ird, int ord, int privateData) {
        ByteBuf data = Unpooled.buffer();
        MpaEnhanced.write(data, ird, ord, false, false, false, false);
        data.writeZero(privateData);
        ByteBuf out = Unpooled.buffer();
        MpaFrames.write(out, false, MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, data);
        data.release();
        return out;
    }

    /** Records what the responder hands the application and what goes wrong. */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<Throwable> errors = new ArrayList<>();
        final List<MpaEstablishedEvent> established = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                established.add((MpaEstablishedEvent) evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            errors.add(cause);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    /**
     * RFC 6581 section 9.1: the peer's IRD and ORD reach the ULP besides the negotiated values, on
     * the responder (the Request's words) and on the initiator (the Reply's, accepting or rejecting).
     */
    @Test
    void peerIrdOrdValuesArePassedToTheUlp() {
        AtomicReference<MpaConnectRequest> seen = new AtomicReference<>();
        MpaSettings settings = MpaSettings.builder().ird(4).ord(4).build();
        EmbeddedChannel responder = new EmbeddedChannel(new MpaResponderHandler(settings, seen::set), new Recorder());
        try {
            responder.writeInbound(enhancedRequest(10, 12, 0));
            MpaParameters offered = seen.get().parameters();
            assertEquals(4, offered.ird(), "min(own IRD 4, initiator ORD 12)");
            assertEquals(4, offered.ord(), "min(own ORD 4, initiator IRD 10)");
            assertEquals(10, offered.peerIrd(), "the initiator's IRD");
            assertEquals(12, offered.peerOrd(), "the initiator's ORD");
        } finally {
            responder.finishAndReleaseAll();
        }
        for (boolean reject : new boolean[] {false, true}) {
            Recorder recorder = new Recorder();
            EmbeddedChannel initiator = new EmbeddedChannel(new org.jiwarp.mpa.MpaInitiatorHandler(settings,
                    new byte[0]), recorder);
            try {
                ((ByteBuf) initiator.readOutbound()).release();
                ByteBuf data = Unpooled.buffer();
                MpaEnhanced.write(data, 3, 2, false, false, false, false);
                ByteBuf reply = Unpooled.buffer();
                MpaFrames.write(reply, true, MpaFrames.ENHANCED_FLAG | (reject ? MpaFrames.REJECT_FLAG : 0),
                        MpaFrames.REVISION_2, data);
                data.release();
                initiator.writeInbound(reply);
                if (reject) {
                    MpaRejectedException rejected = (MpaRejectedException) recorder.errors.get(0);
                    assertEquals(3, rejected.peerIrd(), "the rejecting responder's IRD");
                    assertEquals(2, rejected.peerOrd(), "the rejecting responder's ORD");
                } else {
                    MpaParameters p = recorder.established.get(0).parameters();
                    assertEquals(3, p.peerIrd(), "the responder's IRD");
                    assertEquals(2, p.peerOrd(), "the responder's ORD");
                    assertEquals(3, p.ord(), "min(own ORD 4, responder IRD 3)");
                }
            } finally {
                initiator.finishAndReleaseAll();
            }
        }
    }


    /**
     * RFC 6581 section 9.3: a local error with no specific code is reported with TERM 2/0/5 before
     * the connection is reset. Reply private data over the limit is such an error on the responder:
     * it sends a Reply (without that data, so the initiator can read what follows), then the TERM as
     * the first FPDU, and closes.
     */
    @Test
    void replyPrivateDataOverTheLimitSendsTerm() {
        Recorder recorder = new Recorder();
        EmbeddedChannel responder = new EmbeddedChannel(new MpaResponderHandler(MpaSettings.defaults(),
                request -> request.accept(new byte[600])), recorder);
        try {
            responder.writeInbound(enhancedRequest(4, 4, 0));
            responder.runPendingTasks();
            assertEquals(TerminateError.LLP_LOCAL_CATASTROPHIC, ((MpaException) recorder.errors.get(0)).error());
            assertFalse(responder.isActive());
            ByteBuf wire = Unpooled.buffer();
            for (ByteBuf b; (b = responder.readOutbound()) != null; b.release()) {
                wire.writeBytes(b);
            }
            try {
                assertTrue(MpaFrames.isReply(wire, 0), "a Reply first");
                assertFalse(MpaFrames.rejectFlag(wire, 0));
                assertEquals(MpaEnhanced.LENGTH, MpaFrames.privateDataLength(wire, 0), "the IRD/ORD words alone");
                wire.skipBytes(MpaFrames.HEADER_LENGTH + MpaEnhanced.LENGTH);
                FpduReader.Frame term = new FpduReader(false).read(wire);
                assertNotNull(term, "then an FPDU");
                assertEquals(0, wire.readableBytes(), "nothing after the TERM");
                assertEquals(List.of(), TerminateCheck.problems(term.ulpdu, TerminateError.LLP_LOCAL_CATASTROPHIC,
                        TerminateCheck.Carried.NOTHING, null), TerminateCheck.describe(term.ulpdu));
            } finally {
                wire.release();
            }
        } finally {
            responder.finishAndReleaseAll();
        }
    }

    /**
     * Deviation (configuration only), RFC 6581 section 10: a responder that does not support the
     * enhanced setup MUST close on an enhanced Request; jiwarp configured for revision 1 answers it
     * with an unenhanced revision 1 Reply (the enhanced initiator then fails, see
     * {@code MpaNegotiationTableTest#enhancedInitiatorFailsAgainstARevisionOneResponder}).
     */
    @Test
    void revisionOneResponderAnswersAnEnhancedRequestUnenhanced() {
        MpaSettings revisionOne = MpaSettings.builder().revision(1).build();
        EmbeddedChannel responder = new EmbeddedChannel(new MpaResponderHandler(revisionOne,
                request -> request.accept(new byte[0])), new Recorder());
        try {
            responder.writeInbound(enhancedRequest(4, 4, 0));
            ByteBuf reply = responder.readOutbound();
            assertNotNull(reply, "a Reply");
            assertTrue(MpaFrames.isReply(reply, 0));
            assertEquals(1, MpaFrames.revision(reply, 0));
            assertFalse(MpaFrames.enhancedFlag(reply, 0));
            assertFalse(MpaFrames.rejectFlag(reply, 0));
            assertTrue(responder.isActive(), "the connection stays up");
            reply.release();
        } finally {
            responder.finishAndReleaseAll();
        }
    }

    /** Strict mode, RFC 6581 section 10: a responder without the enhanced setup closes on an enhanced Request. */
    @Test
    void strictRevisionOneResponderClosesOnAnEnhancedRequest() {
        Recorder recorder = new Recorder();
        EmbeddedChannel responder = new EmbeddedChannel(new MpaResponderHandler(MpaSettings.builder().revision(1)
                .strictRfc(true).build(), request -> request.accept(new byte[0])), recorder);
        try {
            responder.writeInbound(enhancedRequest(4, 4, 0));
            assertNull(responder.readOutbound(), "no Reply");
            assertFalse(responder.isActive(), "closed");
            assertEquals(TerminateError.LLP_INVALID_REQUEST_REPLY, ((MpaException) recorder.errors.get(0)).error());
        } finally {
            responder.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // STags: RFC 5041 section 8.2, RFC 5040 section 8.1.1

    /**
     * RFC 5041 sections 8.2 and 8.3: STags associated with a protection domain (a memory region
     * serves every queue pair of its domain) and with one DDP stream (a type 2 memory window bound
     * to a queue pair). A Write through the window on another stream is not placed: that stream
     * ends with DDP "STag not associated with DDP Stream" (1/1/2); a Read of it there with RDMAP's
     * 0/1/3.
     */
    @Test
    void windowsServeOnlyTheirQueuePair() throws Exception {
        try (Servers s = new Servers(RnicOptions.defaults().threads(1))) {
            QueuePair servedA = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64)));
            QueuePair clientA = s.connect();
            QueuePair servedB = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64)));
            QueuePair clientB = s.connect();
            MemoryRegion target = s.serverPd.register(ByteBuffer.allocateDirect(64), ALL);
            MemoryWindow window = s.serverPd.allocateWindow();
            int rkey = servedA.bindWindow(window, target, 16, 32, Access.REMOTE_WRITE | Access.REMOTE_READ);
            assertEquals(servedA.number(), window.queuePair());
            assertEquals(target.address() + 16, window.address());
            // The region's own STag serves both queue pairs of the domain.
            writeLong(clientB, target.address(), target.rkey(), 0x5555L, WcStatus.SUCCESS);
            assertTimely(() -> target.buffer().getLong(0) == 0x5555L);
            // The window's serves its queue pair.
            writeLong(clientA, window.address(), rkey, 0x1111L, WcStatus.SUCCESS);
            assertTimely(() -> target.buffer().getLong(16) == 0x1111L);
            // And no other: not placed, the stream is terminated.
            writeLong(clientB, window.address() + 8, rkey, 0x2222L, null);
            servedB.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, servedB.terminateSent());
            assertEquals(0L, target.buffer().getLong(24), "nothing placed through another stream");
            assertEquals(QpState.RTS, servedA.state(), "the window's own stream goes on");
            // A Read through the window on a third stream: RDMAP's Remote Protection error 0x03.
            QueuePair servedC = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64)));
            QueuePair clientC = s.connect();
            MemoryRegion sink = clientC.pd().register(ByteBuffer.allocateDirect(8), ALL);
            clientC.postSend(SendWorkRequest.read(3, window.address(), rkey, new Sge(sink, 0, 8)));
            servedC.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.RDMAP_STAG_NOT_ASSOCIATED, servedC.terminateSent());
            // Rebinding gives a fresh rkey; the old one stops working.
            int again = servedA.bindWindow(window, target, 0, 8, Access.REMOTE_WRITE);
            assertNotEquals(rkey, again);
            writeLong(clientA, target.address(), again, 0x3333L, WcStatus.SUCCESS);
            assertTimely(() -> target.buffer().getLong(0) == 0x3333L);
            window.deallocate();
            assertFalse(window.valid());
        }
    }

    /**
     * RFC 5040 section 8.1.1 rule 7: a peer cannot invalidate an STag shared by several streams. A
     * window's own peer may invalidate it (type 2); a peer on another stream may not (0/1/9). In
     * strict mode a region serving every queue pair of its domain cannot be invalidated remotely
     * either; by default it can, as Linux siw lets a peer invalidate any region (see the row's note).
     */
    @Test
    void onlyAWindowsOwnPeerInvalidatesItAndStrictModeProtectsSharedRegions() throws Exception {
        for (boolean strict : new boolean[] {false, true}) {
            try (Servers s = new Servers(RnicOptions.defaults().threads(1).strictRfc(strict))) {
                QueuePair servedA = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64)));
                QueuePair clientA = s.connect();
                QueuePair servedB = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64)));
                QueuePair clientB = s.connect();
                MemoryRegion receives = s.serverPd.register(ByteBuffer.allocateDirect(64), ALL);
                servedA.postReceive(new ReceiveWorkRequest(1, new Sge(receives, 0, 32)));
                servedB.postReceive(new ReceiveWorkRequest(2, new Sge(receives, 32, 32)));
                MemoryRegion shared = s.serverPd.register(ByteBuffer.allocateDirect(64), ALL);
                MemoryWindow window = s.serverPd.allocateWindow();
                int rkey = servedA.bindWindow(window, shared, 0, 64, Access.REMOTE_WRITE);
                MemoryRegion source = clientB.pd().register(ByteBuffer.allocateDirect(8), ALL);
                // Another stream's peer: refused, the window stays valid.
                clientB.postSend(SendWorkRequest.sendWithInvalidate(1, rkey, new Sge(source, 0, 8)));
                servedB.closeFuture().get(10, TimeUnit.SECONDS);
                assertEquals(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, servedB.terminateSent());
                assertTrue(window.valid(), "a peer on another stream cannot invalidate the window");
                // The region every queue pair shares: strict mode refuses, by default (siw) it goes.
                MemoryRegion sourceA = clientA.pd().register(ByteBuffer.allocateDirect(8), ALL);
                clientA.postSend(SendWorkRequest.sendWithInvalidate(2, shared.rkey(), new Sge(sourceA, 0, 8)));
                if (strict) {
                    servedA.closeFuture().get(10, TimeUnit.SECONDS);
                    assertEquals(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, servedA.terminateSent());
                    assertTrue(shared.valid(), "strict mode: a shared region cannot be invalidated remotely");
                    continue;
                }
                WorkCompletion wc = servedA.receiveCq().take(10, TimeUnit.SECONDS);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(shared.rkey(), wc.invalidatedStag());
                assertFalse(shared.valid());
                // The window's own peer invalidates it.
                servedA.postReceive(new ReceiveWorkRequest(3, new Sge(receives, 0, 32)));
                clientA.postSend(SendWorkRequest.sendWithInvalidate(3, rkey, new Sge(sourceA, 0, 8)));
                wc = servedA.receiveCq().take(10, TimeUnit.SECONDS);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(rkey, wc.invalidatedStag());
                assertFalse(window.valid(), "its own peer invalidated the window");
            }
        }
    }

    /**
     * RFC 5040 section 7.1 rule 1 and RFC 7306 section 8.1, in strict mode: a local error building an
     * outgoing Send (a gather list in a deregistered region) or Atomic Request (a result entry that
     * is not locally writable) completes the work request in LOCAL_PROTECTION_ERROR and is reported
     * to the peer with a Terminate sent instead of the request, carrying no header; nothing follows.
     * Without strict mode the verbs behaviour stays (AdversarialPeerTest's
     * local-protection-error-sends-no-terminate).
     */
    @Test
    void strictModeSendsATerminateInsteadOfARequestThatFailsLocally() throws Exception {
        for (boolean atomic : new boolean[] {false, true}) {
            try (Servers s = new Servers(RnicOptions.defaults().threads(1).strictRfc(true))) {
                QueuePair served = s.accept(new QpConfig(s.serverPd, s.server.createCq(64), s.server.createCq(64))
                        .rfc7306(true));
                QueuePair client = s.connect();
                MemoryRegion receives = client.pd().register(ByteBuffer.allocateDirect(64), ALL);
                client.postReceive(new ReceiveWorkRequest(1, new Sge(receives, 0, 64)));
                assertTimely(() -> served.state() == QpState.RTS);
                // The responder sends nothing before the initiator's first FPDU (RFC 5044 7.1.2): one Send.
                MemoryRegion landing = s.serverPd.register(ByteBuffer.allocateDirect(64), ALL);
                served.postReceive(new ReceiveWorkRequest(2, new Sge(landing, 0, 64)));
                client.postSend(SendWorkRequest.send(3, new Sge(receives, 0, 8)));
                assertEquals(WcStatus.SUCCESS, served.receiveCq().take(10, TimeUnit.SECONDS).status());
                MemoryRegion gone = s.serverPd.register(ByteBuffer.allocateDirect(64), ALL);
                gone.deregister();
                MemoryRegion readOnly = s.serverPd.register(ByteBuffer.allocateDirect(64), Access.REMOTE_READ);
                served.postSend(atomic
                        ? SendWorkRequest.fetchAdd(7, receives.address(), receives.rkey(), new Sge(readOnly, 0, 8), 1)
                        : SendWorkRequest.send(7, new Sge(gone, 0, 8)));
                WorkCompletion wc = served.sendCq().take(10, TimeUnit.SECONDS);
                assertEquals(7, wc.workRequestId(), wc.toString());
                assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, wc.status(), wc.toString());
                client.closeFuture().get(10, TimeUnit.SECONDS);
                // Recorded once its write completed, which may come after the peer has read it.
                assertTimely(() -> served.terminateSent() != null);
                assertEquals(TerminateError.RDMAP_LOCAL_CATASTROPHIC, served.terminateSent());
                assertEquals(TerminateError.RDMAP_LOCAL_CATASTROPHIC, client.terminateReceived().error(),
                        client.terminateReceived().describe());
                assertEquals(0, client.terminateReceived().hdrct(), "the Terminated headers are zero");
                WorkCompletion flushed = client.receiveCq().take(10, TimeUnit.SECONDS);
                if (flushed.workRequestId() == 3) {
                    flushed = client.receiveCq().take(10, TimeUnit.SECONDS); // the client's own Send, before
                }
                assertEquals(1, flushed.workRequestId(), flushed.toString());
                assertEquals(WcStatus.WORK_REQUEST_FLUSH_ERROR, flushed.status(), "nothing arrived instead: "
                        + flushed);
            }
        }
    }

    private static void writeLong(QueuePair client, long address, int rkey, long value, WcStatus expected)
            throws Exception {
        MemoryRegion source = client.pd().register(ByteBuffer.allocateDirect(8), ALL);
        source.buffer().setLong(0, value);
        client.postSend(SendWorkRequest.write(value, address, rkey, new Sge(source, 0, 8)));
        if (expected != null) {
            WorkCompletion wc = client.sendCq().take(10, TimeUnit.SECONDS);
            assertEquals(expected, wc.status(), wc.toString());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 5040 section 8.1.1 rule 10: a CQ overflow touches only the streams that use the CQ

    @Test
    void completionQueueOverrunLeavesOtherQueuePairsAlone() throws Exception {
        try (Servers s = new Servers()) {
            CompletionQueue tiny = s.server.createCq(1);
            QueuePair overflowing = s.accept(new QpConfig(s.serverPd, tiny, tiny));
            MemoryRegion receives = s.serverPd.register(ByteBuffer.allocateDirect(256), ALL);
            for (int i = 0; i < 3; i++) {
                overflowing.postReceive(new ReceiveWorkRequest(i, new Sge(receives, 64L * i, 64)));
            }
            QueuePair client = s.connect();
            MemoryRegion source = client.pd().register(ByteBuffer.allocateDirect(8), ALL);
            for (int i = 0; i < 3; i++) {
                client.postSend(SendWorkRequest.send(10 + i, new Sge(source, 0, 8)));
            }
            // The overrun is an error the user sees: the CQ is in error and its queue pair goes down.
            assertTimely(tiny::inError);
            overflowing.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, overflowing.state());
            assertTrue(tiny.overruns() >= 1, "overruns " + tiny.overruns());
            // Another queue pair with its own completion queue carries on.
            CompletionQueue other = s.server.createCq(16);
            QueuePair healthy = s.accept(new QpConfig(s.serverPd, other, other));
            healthy.postReceive(new ReceiveWorkRequest(99, new Sge(receives, 192, 64)));
            QueuePair client2 = s.connect();
            MemoryRegion source2 = client2.pd().register(ByteBuffer.allocateDirect(8), ALL);
            client2.postSend(SendWorkRequest.send(20, new Sge(source2, 0, 8)));
            WorkCompletion wc = other.take(10, TimeUnit.SECONDS);
            assertNotNull(wc);
            assertEquals(99, wc.workRequestId());
            assertEquals(WcStatus.SUCCESS, wc.status());
        }
    }

    private static void assertTimely(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not met within 10 s");
            Thread.sleep(2);
        }
    }

    /** A server RNIC whose listener accepts each connection onto the next prepared queue pair. */
    private static final class Servers implements AutoCloseable {
        final Rnic server;
        final Rnic client = Rnic.open(RnicOptions.defaults().threads(1));
        final ProtectionDomain serverPd;
        final ProtectionDomain clientPd = client.allocatePd();
        private final java.util.concurrent.LinkedBlockingQueue<QueuePair> prepared =
                new java.util.concurrent.LinkedBlockingQueue<>();
        private final RnicListener listener;

        Servers() {
            this(RnicOptions.defaults().threads(1));
        }

        /** With the server's options (strict mode, say). */
        Servers(RnicOptions serverOptions) {
            server = Rnic.open(serverOptions);
            serverPd = server.allocatePd();
            listener = server.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
                QueuePair qp = prepared.poll();
                if (qp == null) {
                    qp = server.createQp(new QpConfig(serverPd, server.createCq(64), server.createCq(64)));
                }
                request.accept(qp, new byte[0]);
            });
        }

        /** The queue pair that accepts the next connection. */
        QueuePair accept(QpConfig config) {
            QueuePair qp = server.createQp(config);
            prepared.add(qp);
            return qp;
        }

        /** A client queue pair connected to the server. */
        QueuePair connect() throws Exception {
            CompletionQueue cq = client.createCq(64);
            QueuePair qp = client.createQp(new QpConfig(clientPd, cq, cq));
            CompletableFuture<QueuePair> f = client.connect(qp, listener.localAddress(), new byte[0]);
            return f.get(10, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            listener.close();
            client.close();
            server.close();
        }
    }
}
