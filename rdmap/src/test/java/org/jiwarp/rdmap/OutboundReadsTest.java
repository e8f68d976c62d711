package org.jiwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link OutboundReads}: the ORD bound (RFC 5040 section 5.2, RFC 6581 section 3) and the matching
 * of Read Response segments to the oldest outstanding Read Request (RFC 5040 section 4.5).
 */
class OutboundReadsTest {

    private static final int STAG_A = 0x0000_0101;
    private static final int STAG_B = 0x0000_0202;
    private static final long TO_A = 0x7F00_0000_1000L;
    private static final long TO_B = 0x7F00_0000_9000L;

    private static void assertUnexpectedOpcode(Executable body) {
        TerminateException e = assertThrows(TerminateException.class, body);
        assertEquals(TerminateError.RDMAP_UNEXPECTED_OPCODE, e.error(), e.getMessage());
    }

    @Test
    void ordCreditsAreTakenBySentAndGivenBackByTheLastSegment() {
        OutboundReads reads = new OutboundReads(2);
        assertEquals(2, reads.ord());
        assertTrue(reads.hasCredit());
        assertEquals(0, reads.outstanding());
        reads.sent("a", STAG_A, TO_A, 10);
        assertTrue(reads.hasCredit());
        reads.sent("b", STAG_B, TO_B, 20);
        assertFalse(reads.hasCredit());
        assertEquals(2, reads.outstanding());
        assertThrows(IllegalStateException.class, () -> reads.sent("c", STAG_A, TO_A, 1));
        assertEquals(2, reads.outstanding(), "a refused send records nothing");
        // A segment that is not the last keeps the credit taken.
        assertNull(reads.response(STAG_A, TO_A, 4, false));
        assertFalse(reads.hasCredit());
        assertNotNull(reads.response(STAG_A, TO_A + 4, 6, true));
        assertTrue(reads.hasCredit());
        assertEquals(1, reads.outstanding());
        reads.sent("c", STAG_A, TO_A, 1);
        assertFalse(reads.hasCredit());
    }

    @Test
    void anOrdOfZeroNeverHasCredit() {
        OutboundReads reads = new OutboundReads(0);
        assertFalse(reads.hasCredit());
        assertThrows(IllegalStateException.class, () -> reads.sent("a", STAG_A, TO_A, 1));
    }

    @Test
    void responsesMatchTheOldestRequestInOrderAcrossSegments() {
        OutboundReads reads = new OutboundReads(4);
        Object a = new Object();
        Object b = new Object();
        Object c = new Object();
        reads.sent(a, STAG_A, TO_A, 3000);
        reads.sent(b, STAG_B, TO_B, 10);
        reads.sent(c, STAG_A, TO_A + 5000, 0);
        assertNull(reads.response(STAG_A, TO_A, 1436, false));
        assertNull(reads.response(STAG_A, TO_A + 1436, 1436, false));
        OutboundReads.Outstanding first = reads.response(STAG_A, TO_A + 2872, 128, true);
        assertNotNull(first);
        assertSame(a, first.context());
        assertEquals(3000, first.length());
        OutboundReads.Outstanding second = reads.response(STAG_B, TO_B, 10, true);
        assertSame(b, second.context());
        // A zero-length Read is answered by one empty segment with L.
        OutboundReads.Outstanding third = reads.response(STAG_A, TO_A + 5000, 0, true);
        assertSame(c, third.context());
        assertEquals(0, third.length());
        assertEquals(0, reads.outstanding());
    }

    @Test
    void theSinkOffsetMayRunUpTo2To64() {
        OutboundReads reads = new OutboundReads(1);
        long to = -100L; // 0xFFFF_FFFF_FFFF_FF9C
        reads.sent("a", STAG_A, to, 100);
        assertNull(reads.response(STAG_A, to, 60, false));
        assertNotNull(reads.response(STAG_A, to + 60, 40, true));
    }

    @Test
    void aResponseWithNoReadOutstandingIsAnUnexpectedOpcode() {
        OutboundReads reads = new OutboundReads(2);
        assertUnexpectedOpcode(() -> reads.response(STAG_A, TO_A, 1, true));
        reads.sent("a", STAG_A, TO_A, 1);
        reads.response(STAG_A, TO_A, 1, true);
        assertUnexpectedOpcode(() -> reads.response(STAG_A, TO_A, 1, true));
    }

    @Test
    void aResponseToAnotherStagIsAnUnexpectedOpcode() {
        OutboundReads reads = new OutboundReads(2);
        reads.sent("a", STAG_A, TO_A, 100);
        reads.sent("b", STAG_B, TO_B, 100);
        // The second request's STag is not good enough: responses come in request order.
        assertUnexpectedOpcode(() -> reads.response(STAG_B, TO_B, 100, true));
    }

    @Test
    void aResponseToAnotherStagMidMessageIsAnUnexpectedOpcode() {
        OutboundReads reads = new OutboundReads(2);
        reads.sent("a", STAG_A, TO_A, 100);
        reads.response(STAG_A, TO_A, 50, false);
        assertUnexpectedOpcode(() -> reads.response(STAG_B, TO_A + 50, 50, true));
    }

    @Test
    void aResponseAtTheWrongOffsetIsAnUnexpectedOpcode() {
        OutboundReads first = new OutboundReads(1);
        first.sent("a", STAG_A, TO_A, 100);
        assertUnexpectedOpcode(() -> first.response(STAG_A, TO_A + 1, 99, true));
        // Later segments must continue where the previous one ended.
        OutboundReads later = new OutboundReads(1);
        later.sent("a", STAG_A, TO_A, 100);
        later.response(STAG_A, TO_A, 40, false);
        assertUnexpectedOpcode(() -> later.response(STAG_A, TO_A, 60, true));
        OutboundReads skipping = new OutboundReads(1);
        skipping.sent("a", STAG_A, TO_A, 100);
        skipping.response(STAG_A, TO_A, 40, false);
        assertUnexpectedOpcode(() -> skipping.response(STAG_A, TO_A + 41, 59, true));
    }

    @Test
    void aResponseLongerThanTheReadIsAnUnexpectedOpcode() {
        OutboundReads single = new OutboundReads(1);
        single.sent("a", STAG_A, TO_A, 100);
        assertUnexpectedOpcode(() -> single.response(STAG_A, TO_A, 101, true));
        OutboundReads segmented = new OutboundReads(1);
        segmented.sent("a", STAG_A, TO_A, 100);
        segmented.response(STAG_A, TO_A, 100, false);
        assertUnexpectedOpcode(() -> segmented.response(STAG_A, TO_A + 100, 1, false));
    }

    @Test
    void aResponseThatEndsShortIsAnUnexpectedOpcode() {
        OutboundReads reads = new OutboundReads(1);
        reads.sent("a", STAG_A, TO_A, 100);
        reads.response(STAG_A, TO_A, 50, false);
        assertUnexpectedOpcode(() -> reads.response(STAG_A, TO_A + 50, 49, true));
        OutboundReads empty = new OutboundReads(1);
        empty.sent("a", STAG_A, TO_A, 1);
        assertUnexpectedOpcode(() -> empty.response(STAG_A, TO_A, 0, true));
    }

    @Test
    void flushReturnsTheContextsOldestFirstAndFreesEveryCredit() {
        OutboundReads reads = new OutboundReads(3);
        reads.sent("a", STAG_A, TO_A, 10);
        reads.sent("b", STAG_B, TO_B, 10);
        reads.sent("c", STAG_A, TO_A + 10, 10);
        reads.response(STAG_A, TO_A, 5, false);
        assertEquals(List.of("a", "b", "c"), reads.flush());
        assertEquals(0, reads.outstanding());
        assertTrue(reads.hasCredit());
        assertEquals(List.of(), reads.flush());
        assertUnexpectedOpcode(() -> reads.response(STAG_A, TO_A + 5, 5, true));
    }
}
