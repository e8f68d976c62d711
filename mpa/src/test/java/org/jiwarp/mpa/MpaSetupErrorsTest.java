package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.junit.jupiter.api.Test;

/**
 * Every setup and framing error with its exact LLP error code (RFC 5044 section 8, RFC 6581
 * section 3), the connection closed, and nothing passed upward.
 */
class MpaSetupErrorsTest {

    private static final MpaSettings REV1 = MpaSettings.builder().revision(1).build();

    /** A responder fed raw bytes; returns its recorder after the channel processed them. */
    private static MpaPair.Recorder responderFed(MpaSettings settings, ByteBuf... inbound) {
        MpaPair.Recorder app = new MpaPair.Recorder();
        EmbeddedChannel channel = new EmbeddedChannel(new MpaResponderHandler(settings, MpaAcceptor.ACCEPT_ALL), app);
        try {
            for (ByteBuf in : inbound) {
                channel.writeInbound(in);
            }
            assertFalse(channel.isActive(), "the connection is closed");
            ByteBuf reply = channel.readOutbound();
            assertNull(reply, "no Reply is sent to a bad Request");
            return app;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private static ByteBuf request(int flags, int revision, byte[] privateData) {
        ByteBuf out = Unpooled.buffer();
        MpaFrames.write(out, false, flags, revision, Unpooled.wrappedBuffer(privateData));
        return out;
    }

    private static void assertError(TerminateError expected, MpaPair.Recorder app) {
        assertEquals(expected, app.mpaError() == null ? null : app.mpaError().error(), app.errors.toString());
        assertTrue(app.established.isEmpty());
        assertTrue(app.ulpdus.isEmpty());
        assertTrue(app.requests.isEmpty());
    }

    @Test
    void wrongKeyFailsAtTheFirstWrongOctet() {
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY,
                responderFed(REV1, Unpooled.copiedBuffer("GET / HTTP/1.1\r\n", java.nio.charset.StandardCharsets.US_ASCII)));
        // A Reply key where a Request belongs is wrong too.
        ByteBuf reply = Unpooled.buffer();
        MpaFrames.write(reply, true, 0, 1, null);
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, responderFed(REV1, reply));
        // Three octets are enough to tell.
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, responderFed(REV1, Unpooled.wrappedBuffer(new byte[] {'M', 'P', 'B'})));
    }

    /**
     * RFC 5044 section 7.1.1 and RFC 6581 section 6: Res is not checked on reception (nor R in a
     * Request): the Request is answered as if the bits were clear. In revision 1 the Enhanced bit
     * is reserved too, so its four octets stay private data.
     */
    @Test
    void reservedBitsAreIgnored() {
        for (int bit : new int[] {0x01, 0x02, 0x04, 0x08, MpaFrames.REJECT_FLAG}) {
            ByteBuf reply = responderAnswers(REV1, request(bit, 1, new byte[0]));
            try {
                assertEquals(0, MpaFrames.flags(reply, 0) & ~MpaFrames.CRC_FLAG, "Reply flags to bit " + bit);
                assertEquals(0, MpaFrames.privateDataLength(reply, 0));
            } finally {
                reply.release();
            }
        }
        MpaPair.Recorder app = new MpaPair.Recorder();
        EmbeddedChannel channel = new EmbeddedChannel(new MpaResponderHandler(REV1, request -> {
            app.requests.add(request);
            MpaAcceptor.ACCEPT_ALL.onRequest(request);
        }), app);
        try {
            channel.writeInbound(request(MpaFrames.ENHANCED_FLAG, 1, new byte[] {1, 2, 3, 4}));
            assertTrue(channel.isActive(), app.errors.toString());
            assertEquals(1, app.requests.size(), app.errors.toString());
            assertEquals(4, app.requests.get(0).privateData().length, "revision 1: no IRD/ORD words taken");
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** The Reply jiwarp's responder sends to {@code request}; the caller releases it. */
    private static ByteBuf responderAnswers(MpaSettings settings, ByteBuf request) {
        MpaPair.Recorder app = new MpaPair.Recorder();
        EmbeddedChannel channel = new EmbeddedChannel(new MpaResponderHandler(settings, MpaAcceptor.ACCEPT_ALL), app);
        try {
            channel.writeInbound(request);
            assertTrue(channel.isActive(), app.errors.toString());
            ByteBuf reply = channel.readOutbound();
            assertNotNull(reply, "no Reply: " + app.errors);
            return reply;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void unknownRevisionsAreRefused() {
        for (int revision : new int[] {0, 3, 255}) {
            assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, responderFed(REV1, request(0, revision, new byte[0])));
        }
    }

    @Test
    void privateDataOverTheLimitIsRefusedBeforeItArrives() {
        MpaSettings linuxLimit = REV1.toBuilder().privateDataLimit(256).build();
        ByteBuf header = request(0, 1, new byte[300]);
        header.writerIndex(MpaFrames.HEADER_LENGTH); // only the header has arrived
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, responderFed(linuxLimit, header));
        // The RFC ceiling holds whatever the configuration: 513 octets.
        ByteBuf big = request(0, 1, new byte[513]);
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, responderFed(REV1, big));
    }

    @Test
    void enhancedRequestWithoutIrdOrdWordsIsRefused() {
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY,
                responderFed(MpaSettings.defaults(), request(MpaFrames.ENHANCED_FLAG, 2, new byte[3])));
    }

    /**
     * A channel whose clock stands still until the test moves it ({@link MockTicker}): a timer fires
     * exactly when its time has come on that clock, however long the test itself takes in real time.
     */
    private static EmbeddedChannel frozenClock(MockTicker clock, ChannelHandler... handlers) {
        return EmbeddedChannel.builder().ticker(clock).handlers(handlers).build();
    }

    /** Moves {@code clock} by {@code nanos} and runs what became due on {@code channel}. */
    private static void advance(MockTicker clock, EmbeddedChannel channel, long nanos) {
        clock.advance(nanos, TimeUnit.NANOSECONDS);
        channel.runScheduledPendingTasks();
    }

    @Test
    void requestTimeoutIsFiveSecondsByDefault() {
        MpaPair.Recorder app = new MpaPair.Recorder();
        MockTicker clock = Ticker.newMockTicker();
        EmbeddedChannel channel = frozenClock(clock, new MpaResponderHandler(REV1, MpaAcceptor.ACCEPT_ALL), app);
        try {
            advance(clock, channel, TimeUnit.SECONDS.toNanos(5) - 1);
            assertTrue(channel.isActive(), "closed before the five seconds were up");
            advance(clock, channel, 1);
            assertFalse(channel.isActive(), "still open when the five seconds were up");
            assertError(TerminateError.LLP_CONNECTION_LOST, app);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void replyTimeoutIsTenSecondsByDefaultAndConfigurable() {
        for (MpaSettings settings : new MpaSettings[] {REV1, REV1.toBuilder().replyTimeout(Duration.ofMillis(250)).build()}) {
            long timeout = settings == REV1 ? TimeUnit.SECONDS.toNanos(10) : TimeUnit.MILLISECONDS.toNanos(250);
            MpaPair.Recorder app = new MpaPair.Recorder();
            MockTicker clock = Ticker.newMockTicker();
            EmbeddedChannel channel = frozenClock(clock, new MpaInitiatorHandler(settings, new byte[0]), app);
            try {
                ByteBuf sent = channel.readOutbound();
                assertTrue(MpaFrames.isRequest(sent, 0));
                sent.release();
                advance(clock, channel, timeout - 1);
                assertTrue(channel.isActive(), "closed before " + timeout + " ns");
                advance(clock, channel, 1);
                assertFalse(channel.isActive(), "still open after " + timeout + " ns");
                assertError(TerminateError.LLP_CONNECTION_LOST, app);
            } finally {
                channel.finishAndReleaseAll();
            }
        }
    }

    /** An initiator that sent its Request and then receives {@code reply}; returns its recorder. */
    private static MpaPair.Recorder initiatorGets(MpaSettings settings, ByteBuf reply) {
        MpaPair.Recorder app = new MpaPair.Recorder();
        EmbeddedChannel channel = new EmbeddedChannel(new MpaInitiatorHandler(settings, new byte[0]), app);
        try {
            ByteBuf request = channel.readOutbound();
            assertTrue(MpaFrames.isRequest(request, 0));
            request.release();
            channel.writeInbound(reply);
            assertFalse(channel.isActive(), "the connection is closed");
            return app;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private static byte[] enhancedWords(int ird, int ord, boolean p2p, boolean writeRtr, boolean readRtr) {
        ByteBuf words = Unpooled.buffer();
        try {
            MpaEnhanced.write(words, ird, ord, p2p, false, writeRtr, readRtr);
            return io.netty.buffer.ByteBufUtil.getBytes(words);
        } finally {
            words.release();
        }
    }

    @Test
    void initiatorRefusesABadReply() {
        // Each of these Replies is wrong for a plain revision 1 Request.
        ByteBuf[] replies = {
            reply(MpaFrames.ENHANCED_FLAG, 2, new byte[4]), // enhanced answer to a rev 1 Request
            reply(0, 7, new byte[0]),                      // unknown revision (a reserved bit is ignored: see
                                                           // the conformance library's reply-reserved-flag-bit)
            request(0, 1, new byte[0]),                    // a Request key instead of a Reply
        };
        for (ByteBuf reply : replies) {
            assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, initiatorGets(REV1, reply));
        }
    }

    @Test
    void enhancedRequestMustGetAnEnhancedReply() {
        assertError(TerminateError.LLP_INVALID_REQUEST_REPLY, initiatorGets(MpaSettings.defaults(),
                reply(0, 1, new byte[0])));
    }

    /** RFC 6581 section 9.1: TERM 2/0/6, then the connection ends. */
    @Test
    void responderOrdAboveOurIrdIsInsufficientIrd() {
        MpaSettings settings = MpaSettings.builder().ird(2).build();
        ByteBuf reply = reply(MpaFrames.ENHANCED_FLAG, 2, enhancedWords(8, 8, false, false, false));
        assertTerm(TerminateError.LLP_INSUFFICIENT_IRD, false, initiatorSends(settings, reply.copy()));
        assertError(TerminateError.LLP_INSUFFICIENT_IRD, initiatorGets(settings, reply));
    }

    /** RFC 6581 section 9.2: TERM 2/0/7, framed with the CRC the Reply asked for. */
    @Test
    void responderChoosingAnRtrNotOfferedIsNoMatchingRtr() {
        MpaSettings settings = MpaSettings.builder().peerToPeer(true).rtrOffers(EnumSet.of(RtrType.WRITE)).build();
        ByteBuf reply = reply(MpaFrames.ENHANCED_FLAG | MpaFrames.CRC_FLAG, 2, enhancedWords(4, 4, true, false, true));
        assertTerm(TerminateError.LLP_NO_MATCHING_RTR, true, initiatorSends(settings, reply.copy()));
        assertError(TerminateError.LLP_NO_MATCHING_RTR, initiatorGets(settings, reply));
    }

    /** RFC 6581 section 9.1: 0x3FFF in the Reply's ORD asks for no negotiation; the initiator's IRD stays. */
    @Test
    void responderOrdAllOnesLeavesTheInitiatorIrd() {
        MpaPair.Recorder app = new MpaPair.Recorder();
        EmbeddedChannel channel = new EmbeddedChannel(new MpaInitiatorHandler(MpaSettings.builder().ird(2).ord(3)
                .build(), new byte[0]), app);
        try {
            ((ByteBuf) channel.readOutbound()).release();
            channel.writeInbound(reply(MpaFrames.ENHANCED_FLAG, 2, enhancedWords(0x3FFF, 0x3FFF, false, false, false)));
            assertTrue(channel.isActive(), app.errors.toString());
            MpaParameters p = app.established.get(0).parameters();
            assertEquals(2, p.ird());
            assertEquals(3, p.ord());
            assertEquals(0x3FFF, p.peerIrd());
            assertEquals(0x3FFF, p.peerOrd());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** Everything the initiator writes after its Request on this Reply, the channel closed after it. */
    private static ByteBuf initiatorSends(MpaSettings settings, ByteBuf reply) {
        EmbeddedChannel channel = new EmbeddedChannel(new MpaInitiatorHandler(settings, new byte[0]),
                new MpaPair.Recorder());
        try {
            ((ByteBuf) channel.readOutbound()).release();
            channel.writeInbound(reply);
            assertFalse(channel.isActive(), "the connection is closed after the TERM");
            ByteBuf all = Unpooled.buffer();
            for (ByteBuf b; (b = channel.readOutbound()) != null; b.release()) {
                all.writeBytes(b);
            }
            return all;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** {@code wire} is exactly one FPDU holding the TERM of {@code error}: LLP layer, nothing carried. */
    static void assertTerm(TerminateError error, boolean crc, ByteBuf wire) {
        try {
            FpduReader.Frame frame = new FpduReader(false).read(wire);
            assertNotNull(frame, "no FPDU after the Reply");
            assertEquals(0, wire.readableBytes(), "nothing but the TERM");
            if (crc) {
                assertEquals(frame.crcComputed, frame.crcField, "the TERM's CRC");
            }
            ByteBuf u = Unpooled.wrappedBuffer(frame.ulpdu);
            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            assertEquals(at + 4, u.readableBytes(), "DDP header and the Terminate control word alone");
            assertFalse(DdpHeaders.tagged(u, 0));
            assertTrue(DdpHeaders.last(u, 0));
            assertEquals(RdmapOpcode.TERMINATE, RdmapHeaders.opcode(u, 0));
            assertEquals(DdpHeaders.QN_TERMINATE, DdpHeaders.qn(u, 0));
            assertEquals(1, DdpHeaders.msn(u, 0));
            assertEquals(0, DdpHeaders.mo(u, 0));
            assertEquals(error, TerminateHeader.error(u, at));
            assertEquals(0, TerminateHeader.hdrct(u, at), "M, D and R clear");
        } finally {
            wire.release();
        }
    }

    @Test
    void firstFpduThatIsNotTheNegotiatedRtrIsNoMatchingRtr() {
        MpaSettings initiator = MpaSettings.builder().peerToPeer(true).rtrOffers(EnumSet.of(RtrType.WRITE)).build();
        try (MpaPair pair = new MpaPair(initiator, new byte[0], MpaSettings.defaults(), MpaAcceptor.ACCEPT_ALL)) {
            // Take the Request to the responder, its Reply back, but replace the initiator's RTR with a Send.
            pair.responder.writeInbound((ByteBuf) pair.initiator.readOutbound());
            pair.initiator.writeInbound((ByteBuf) pair.responder.readOutbound());
            ((ByteBuf) pair.initiator.readOutbound()).release(); // the real RTR frame
            ByteBuf send = Unpooled.buffer();
            DdpHeaders.writeUntagged(send, true, RdmapHeaders.controlByte(
                    RdmapOpcode.SEND), 0, 0, 1, 0);
            ByteBuf fpdu = Unpooled.buffer();
            new FpduWriter(false, false).write(send, fpdu);
            send.release();
            pair.responder.writeInbound(fpdu);
            assertEquals(TerminateError.LLP_NO_MATCHING_RTR, pair.responderApp.mpaError().error());
            assertTrue(pair.responderApp.ulpdus.isEmpty());
            // As for a CRC or marker error, the codec raises it and the ULP (RDMAP) sends its
            // Terminate, then closes.
            assertTrue(pair.responder.isActive(), "the codec closed the connection before the ULP's Terminate");
        }
    }

    @Test
    void crcMarkerAndLengthErrorsAfterSetupCarryTheirCodes() {
        MpaSettings crcAndMarkers = MpaSettings.builder().crc(CrcPolicy.REQUIRE).markers(MarkerPolicy.REQUEST)
                .maxInboundUlpdu(1000).build();
        // A corrupted CRC.
        checkAfterSetup(crcAndMarkers, fpdu -> fpdu[fpdu.length - 1] ^= 0x10, 100, TerminateError.LLP_CRC_ERROR);
        // A marker whose FPDUPTR is off (the leading marker of the first FPDU: octets 2..3).
        MpaSettings markersOnly = crcAndMarkers.toBuilder().crc(CrcPolicy.ACCEPT).build();
        checkAfterSetup(markersOnly, fpdu -> fpdu[3] = 8, 100, TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH);
        // A ULPDU longer than accepted.
        checkAfterSetup(crcAndMarkers, fpdu -> { }, 1001, TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH);
    }

    private static void checkAfterSetup(MpaSettings settings, java.util.function.Consumer<byte[]> damage,
            int ulpduLength, TerminateError expected) {
        try (MpaPair pair = new MpaPair(settings, new byte[0], settings, MpaAcceptor.ACCEPT_ALL)) {
            pair.pump();
            MpaParameters initiator = pair.initiatorApp.parameters();
            assertTrue(initiator.crc() == (settings.crcPolicy() == CrcPolicy.REQUIRE));
            ByteBuf ulpdu = Unpooled.wrappedBuffer(new byte[ulpduLength]);
            ByteBuf out = Unpooled.buffer();
            new FpduWriter(initiator.crc(), initiator.markersToPeer()).write(ulpdu, out);
            ulpdu.release();
            byte[] fpdu = io.netty.buffer.ByteBufUtil.getBytes(out);
            out.release();
            damage.accept(fpdu);
            pair.responder.writeInbound(Unpooled.wrappedBuffer(fpdu));
            assertEquals(expected, pair.responderApp.mpaError() == null ? null : pair.responderApp.mpaError().error(),
                    pair.responderApp.errors.toString());
            assertTrue(pair.responderApp.ulpdus.isEmpty(), "nothing of a bad FPDU is delivered");
            // RFC 5044 section 8: MPA reports errors 2 and 3 and leaves closing to DDP's ULP.
            assertTrue(pair.responder.isActive(), "MPA closed the connection itself");
        }
    }

    private static ByteBuf reply(int flags, int revision, byte[] privateData) {
        ByteBuf out = Unpooled.buffer();
        MpaFrames.write(out, true, flags, revision, Unpooled.wrappedBuffer(privateData));
        return out;
    }
}
