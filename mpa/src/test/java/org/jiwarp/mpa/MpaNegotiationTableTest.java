package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jiwarp.testing.Deadlines;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * Every negotiation outcome, as a table: revision x CRC policy of each side x marker policy of
 * each side x peer-to-peer RTR offers x the RTR frames the responder accepts x accept or reject.
 * Each row is set up on two EmbeddedChannels and checked against the rules of RFC 5044 section 7.1
 * and RFC 6581 section 3, stated again here independently of the handlers; established rows then
 * carry one ULPDU each way through the installed FPDU codec.
 */
class MpaNegotiationTableTest {

    private static final List<Set<RtrType>> OFFERS = List.of(EnumSet.noneOf(RtrType.class),
            EnumSet.of(RtrType.WRITE), EnumSet.of(RtrType.READ), EnumSet.of(RtrType.SEND),
            EnumSet.allOf(RtrType.class));
    private static final List<Set<RtrType>> ACCEPTED = List.of(EnumSet.allOf(RtrType.class),
            EnumSet.of(RtrType.SEND));

    @Test
    void everyCombination() {
        int rows = 0;
        List<String> failures = new ArrayList<>();
        for (int revision : new int[] {1, 2}) {
            for (CrcPolicy initiatorCrc : CrcPolicy.values()) {
                for (CrcPolicy responderCrc : CrcPolicy.values()) {
                    for (MarkerPolicy initiatorMarkers : MarkerPolicy.values()) {
                        for (MarkerPolicy responderMarkers : MarkerPolicy.values()) {
                            for (Set<RtrType> offers : revision == 2 ? OFFERS : OFFERS.subList(0, 1)) {
                                for (Set<RtrType> accepted : ACCEPTED) {
                                    for (boolean accept : new boolean[] {true, false}) {
                                        Row row = new Row(revision, initiatorCrc, responderCrc, initiatorMarkers,
                                                responderMarkers, offers, accepted, accept);
                                        rows++;
                                        try {
                                            row.check();
                                        } catch (AssertionError | RuntimeException e) {
                                            failures.add(row + ": " + e.getMessage());
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), failures.subList(0, Math.min(20, failures.size())),
                failures.size() + " of " + rows + " rows failed");
        // Revision 1: 81 policy rows x 2 accepted sets x 2 decisions; revision 2 also x 5 offer sets.
        assertEquals(81 * 2 * 2 + 81 * 5 * 2 * 2, rows);
    }

    @Test
    void irdAndOrdAreNegotiatedDownward() {
        MpaSettings initiator = MpaSettings.builder().ird(4).ord(8).build();
        MpaSettings responder = MpaSettings.builder().ird(2).ord(16).build();
        try (MpaPair pair = new MpaPair(initiator, new byte[0], responder, MpaAcceptor.ACCEPT_ALL).pump()) {
            MpaParameters i = pair.initiatorApp.parameters();
            MpaParameters r = pair.responderApp.parameters();
            // RFC 6581 section 3: each side's ORD fits the other's IRD.
            assertEquals(2, r.ird());
            assertEquals(4, r.ord());
            assertEquals(4, i.ird());
            assertEquals(2, i.ord());
            assertTrue(i.ord() <= r.ird() && r.ord() <= i.ird());
        }
    }

    @Test
    void enhancedInitiatorFailsAgainstARevisionOneResponder() {
        MpaSettings oldResponder = MpaSettings.builder().revision(1).build();
        try (MpaPair pair = new MpaPair(MpaSettings.defaults(), new byte[0], oldResponder, MpaAcceptor.ACCEPT_ALL)
                .pump()) {
            assertEquals(TerminateError.LLP_INVALID_REQUEST_REPLY, pair.initiatorApp.mpaError().error());
            assertEquals(1, pair.responderApp.parameters().revision());
        }
    }

    @Test
    void mulpduFollowsTheMssAndTheMarkers() {
        MpaSettings settings = MpaSettings.defaults();
        // RFC 5044 section 5.2 with EMSS 1460.
        assertEquals(1454, settings.mulpdu(false));
        assertEquals(1442, settings.mulpdu(true));
        MpaSettings large = settings.toBuilder().largeFpdus(true).build();
        assertEquals(65530, large.mulpdu(false));
        MpaSettings markers = MpaSettings.builder().markers(MarkerPolicy.REQUEST).build();
        try (MpaPair pair = new MpaPair(MpaSettings.defaults(), new byte[0], markers, MpaAcceptor.ACCEPT_ALL).pump()) {
            assertEquals(1442, pair.initiatorApp.parameters().mulpdu());
            assertEquals(1454, pair.responderApp.parameters().mulpdu());
        }
    }

    @Test
    void applicationMayDecideLaterFromAnotherThread() throws Exception {
        java.util.concurrent.atomic.AtomicReference<MpaConnectRequest> pending =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (MpaPair pair = new MpaPair(MpaSettings.defaults(), new byte[] {9}, MpaSettings.defaults(), pending::set)
                .pump()) {
            assertTrue(pair.initiatorApp.established.isEmpty());
            Thread decider = new Thread(() -> pending.get().accept(new byte[] {7}));
            decider.start();
            Deadlines.join(decider, Duration.ofSeconds(10));
            assertFalse(pending.get().reject(new byte[0]), "the first decision stands");
            pair.pump();
            assertArrayEquals(new byte[] {7}, pair.initiatorApp.parameters().peerPrivateData());
        }
    }

    /** One row of the table with its expected outcome. */
    private record Row(int revision, CrcPolicy initiatorCrc, CrcPolicy responderCrc, MarkerPolicy initiatorMarkers,
            MarkerPolicy responderMarkers, Set<RtrType> offers, Set<RtrType> accepted, boolean accept) {

        void check() {
            MpaSettings.Builder initiatorSettings = MpaSettings.builder().revision(revision)
                    .crc(initiatorCrc).markers(initiatorMarkers);
            if (!offers.isEmpty()) {
                initiatorSettings.peerToPeer(true).rtrOffers(offers);
            }
            MpaSettings responderSettings = MpaSettings.builder().revision(2).crc(responderCrc)
                    .markers(responderMarkers).rtrOffers(accepted).build();
            byte[] hello = "initiator".getBytes(StandardCharsets.US_ASCII);
            byte[] answer = "responder".getBytes(StandardCharsets.US_ASCII);
            try (MpaPair pair = new MpaPair(initiatorSettings.build(), hello, responderSettings,
                    request -> {
                        if (accept) {
                            request.accept(answer);
                        } else {
                            request.reject(answer);
                        }
                    })) {
                pair.pump();
                // The rules, from the initiator's Request onwards.
                boolean requestCrc = initiatorCrc == CrcPolicy.REQUIRE;
                boolean requestMarkers = initiatorMarkers == MarkerPolicy.REQUEST;
                RtrType chosen = null;
                for (RtrType choice : new RtrType[] {RtrType.WRITE, RtrType.READ, RtrType.SEND}) {
                    if (chosen == null && offers.contains(choice) && accepted.contains(choice)) {
                        chosen = choice;
                    }
                }
                TerminateError responderRefusal = null;
                if (requestCrc && responderCrc == CrcPolicy.REFUSE
                        || requestMarkers && responderMarkers == MarkerPolicy.REFUSE) {
                    responderRefusal = TerminateError.LLP_INVALID_REQUEST_REPLY;
                } else if (!offers.isEmpty() && accepted.isEmpty()) {
                    responderRefusal = TerminateError.LLP_NO_MATCHING_RTR;
                }
                // RFC 6581 section 9.2: with none in common the Reply still sets one the responder accepts.
                RtrType replied = chosen;
                for (RtrType choice : new RtrType[] {RtrType.WRITE, RtrType.READ, RtrType.SEND}) {
                    if (replied == null && !offers.isEmpty() && accepted.contains(choice)) {
                        replied = choice;
                    }
                }
                if (responderRefusal != null) {
                    assertTrue(pair.responderApp.requests.isEmpty(), "refused before asking the application");
                    assertEquals(responderRefusal, pair.responderApp.mpaError().error());
                    assertInstanceOf(MpaRejectedException.class, pair.initiatorApp.errors.get(0));
                    assertClosed(pair);
                    return;
                }
                assertEquals(1, pair.responderApp.requests.size());
                assertArrayEquals(hello, pair.responderApp.requests.get(0).privateData());
                if (!accept) {
                    MpaRejectedException rejected = assertInstanceOf(MpaRejectedException.class,
                            pair.initiatorApp.errors.get(0));
                    assertArrayEquals(answer, rejected.privateData());
                    assertNull(rejected.error());
                    assertTrue(pair.responderApp.established.isEmpty());
                    assertClosed(pair);
                    return;
                }
                boolean replyCrc = requestCrc || responderCrc == CrcPolicy.REQUIRE;
                boolean replyMarkers = responderMarkers == MarkerPolicy.REQUEST;
                if (replyCrc && initiatorCrc == CrcPolicy.REFUSE
                        || replyMarkers && initiatorMarkers == MarkerPolicy.REFUSE) {
                    assertEquals(TerminateError.LLP_INVALID_REQUEST_REPLY, pair.initiatorApp.mpaError().error());
                    assertFalse(pair.initiator.isActive());
                    return;
                }
                if (replied != chosen) {
                    // The initiator cannot send that RTR: TERM 2/0/7, which reaches the responder's ULP.
                    assertEquals(TerminateError.LLP_NO_MATCHING_RTR, pair.initiatorApp.mpaError().error());
                    assertFalse(pair.initiator.isActive());
                    assertEquals(replied, pair.responderApp.parameters().rtr());
                    assertEquals(1, pair.responderApp.ulpdus.size(), "the TERM at the responder");
                    io.netty.buffer.ByteBuf term = Unpooled.wrappedBuffer(pair.responderApp.ulpdus.get(0));
                    assertEquals(TerminateError.LLP_NO_MATCHING_RTR, org.jiwarp.wire.rdmap.TerminateHeader.error(term,
                            org.jiwarp.wire.ddp.DdpHeaders.UNTAGGED_HEADER_LENGTH));
                    return;
                }
                MpaParameters i = pair.initiatorApp.parameters();
                MpaParameters r = pair.responderApp.parameters();
                assertNotNull(i, "initiator established");
                assertNotNull(r, "responder established");
                assertEquals(revision, i.revision());
                assertEquals(revision, r.revision());
                assertEquals(revision == 2, i.enhanced());
                // RFC 5044 section 7.1: CRC both ways if either side set C.
                assertEquals(requestCrc || replyCrc, i.crc());
                assertEquals(i.crc(), r.crc());
                // Markers per direction.
                assertEquals(replyMarkers, i.markersToPeer());
                assertEquals(requestMarkers, i.markersFromPeer());
                assertEquals(i.markersToPeer(), r.markersFromPeer());
                assertEquals(i.markersFromPeer(), r.markersToPeer());
                assertEquals(chosen, i.rtr());
                assertEquals(chosen, r.rtr());
                assertArrayEquals(answer, i.peerPrivateData());
                assertArrayEquals(hello, r.peerPrivateData());
                // Full operation: one ULPDU each way through the installed codec (and any RTR exchange).
                pair.responder.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {4, 5, 6}));
                pair.initiator.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
                pair.pump();
                assertEquals(1, pair.responderApp.ulpdus.size(), "ULPDUs at the responder");
                assertArrayEquals(new byte[] {1, 2, 3}, pair.responderApp.ulpdus.get(0));
                assertEquals(1, pair.initiatorApp.ulpdus.size(), "ULPDUs at the initiator");
                assertArrayEquals(new byte[] {4, 5, 6}, pair.initiatorApp.ulpdus.get(0));
                assertTrue(pair.initiatorApp.errors.isEmpty(), pair.initiatorApp.errors.toString());
                assertTrue(pair.responderApp.errors.isEmpty(), pair.responderApp.errors.toString());
            }
        }

        private static void assertClosed(MpaPair pair) {
            assertFalse(pair.responder.isActive(), "responder closed");
            assertTrue(pair.initiatorApp.established.isEmpty());
        }
    }
}
