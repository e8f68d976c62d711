package org.jiwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link InboundReads}: at most IRD Read Requests at once (RFC 5040 section 5.2), refused beyond
 * it as siw refuses them, and answered in arrival order.
 */
class InboundReadsTest {

    @Test
    void aRequestBeyondTheIrdHasNoBuffer() {
        InboundReads<String> reads = new InboundReads<>(2);
        assertEquals(2, reads.ird());
        reads.accept("a");
        reads.accept("b");
        assertFalse(reads.hasRoom());
        assertThrows(IllegalStateException.class, () -> reads.accept("c"));
        assertEquals(2, reads.size(), "a refused request is not queued");
        // Finishing one frees its place.
        assertEquals("a", reads.finishCurrent());
        reads.accept("c");
        assertEquals(2, reads.size());
    }

    @Test
    void anIrdOfZeroRefusesEveryRequest() {
        InboundReads<String> reads = new InboundReads<>(0);
        assertFalse(reads.hasRoom());
        assertThrows(IllegalStateException.class, () -> reads.accept("a"));
        assertTrue(reads.isEmpty());
    }

    @Test
    void requestsAreAnsweredInArrivalOrder() {
        InboundReads<Integer> reads = new InboundReads<>(8);
        assertNull(reads.current());
        assertNull(reads.finishCurrent());
        for (int i = 0; i < 8; i++) {
            reads.accept(i);
        }
        for (int i = 0; i < 8; i++) {
            assertEquals(i, reads.current(), "current is the oldest");
            assertEquals(i, reads.current(), "current does not remove");
            assertEquals(i, reads.finishCurrent());
            if (i < 4) {
                reads.accept(100 + i);
            }
        }
        for (int i = 0; i < 4; i++) {
            assertEquals(100 + i, reads.finishCurrent());
        }
        assertTrue(reads.isEmpty());
        assertNull(reads.current());
    }

    @Test
    void clearDropsEverything() {
        InboundReads<String> reads = new InboundReads<>(2);
        reads.accept("a");
        reads.accept("b");
        reads.clear();
        assertTrue(reads.isEmpty());
        assertEquals(0, reads.size());
        reads.accept("c");
        reads.accept("d");
        assertFalse(reads.isEmpty());
        assertEquals("c", reads.current());
    }
}
