package org.jiwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link InboundReads}: at most IRD Read Requests at once (RFC 5040 section 5.2), refused beyond
 * it as siw refuses them, and freed in arrival order once the output has sent past each one's
 * response.
 */
class InboundReadsTest {

    @Test
    void aRequestBeyondTheIrdHasNoBuffer() {
        InboundReads reads = new InboundReads(2);
        assertEquals(2, reads.ird());
        answered(reads, 100);
        answered(reads, 200);
        assertFalse(reads.hasRoom());
        assertThrows(IllegalStateException.class, () -> reads.acceptAtomic(0, 0));
        assertEquals(2, reads.size(), "a refused request is not queued");
        // Sending the first response frees its place.
        assertEquals(1, reads.retire(100));
        answered(reads, 300);
        assertEquals(2, reads.size());
    }

    @Test
    void anIrdOfZeroRefusesEveryRequest() {
        InboundReads reads = new InboundReads(0);
        assertFalse(reads.hasRoom());
        assertThrows(IllegalStateException.class, () -> reads.acceptAtomic(0, 0));
        assertTrue(reads.isEmpty());
    }

    @Test
    void anEntryIsFreedExactlyWhenItsResponseHasBeenSent() {
        InboundReads reads = new InboundReads(4);
        answered(reads, 100);
        answered(reads, 250);
        answered(reads, 250);
        assertEquals(0, reads.retire(99), "one octet of the first response still unsent");
        assertEquals(1, reads.retire(100));
        assertEquals(0, reads.retire(249));
        assertEquals(2, reads.retire(250), "two responses ending at the same position");
        assertTrue(reads.isEmpty());
        assertEquals(0, reads.retire(1_000));
    }

    /** Entries are freed oldest first (responses go out in request order): a later one never before an earlier one. */
    @Test
    void requestsAreAnsweredInArrivalOrder() {
        InboundReads reads = new InboundReads(8);
        for (int i = 1; i <= 8; i++) {
            answered(reads, i * 100L);
        }
        for (int i = 1; i <= 8; i++) {
            assertEquals(0, reads.retire(i * 100L - 1), "entry " + i + " is held until its own position");
            assertEquals(1, reads.retire(i * 100L), "entry " + i + " alone");
            assertEquals(8 - i + Math.min(i - 1, 4), reads.size(), "the later ones still held");
            if (i <= 4) {
                answered(reads, 1_000 + i * 100L);
            }
        }
        assertEquals(4, reads.size());
        assertEquals(4, reads.retire(1_400));
        assertTrue(reads.isEmpty());
    }

    @Test
    void theRingGrowsToALargeIrdAndWrapsInOrder() {
        InboundReads reads = new InboundReads(100);
        long position = 0;
        long retired = 0;
        for (int round = 0; round < 5; round++) {
            while (reads.hasRoom()) {
                answered(reads, position += 10);
            }
            assertEquals(100, reads.size());
            // Free about a third, in order: exactly the entries at or below the position sent.
            long sent = retired + 330;
            assertEquals(33, reads.retire(sent));
            retired += 330;
        }
        assertEquals(67, reads.size());
        assertEquals(67, reads.retire(Long.MAX_VALUE));
    }

    @Test
    void clearDropsEverything() {
        InboundReads reads = new InboundReads(2);
        answered(reads, 1);
        answered(reads, 2);
        reads.clear();
        assertTrue(reads.isEmpty());
        assertEquals(0, reads.size());
        answered(reads, 3);
        answered(reads, 4);
        assertFalse(reads.isEmpty());
        assertEquals(0, reads.retire(2), "the cleared entries are gone");
        assertEquals(2, reads.retire(4));
    }

    /** Waiting entries are issued oldest first, a Read in parts; only issued entries are ever retired. */
    @Test
    void entriesAreIssuedInOrderAndOnlyIssuedOnesRetire() {
        InboundReads reads = new InboundReads(4);
        reads.acceptRead(7, 0x1000, null, 0, 100);
        reads.acceptAtomic(9, 42);
        assertTrue(reads.hasUnissued());
        int read = reads.next();
        assertFalse(reads.atomic(read));
        assertEquals(7, reads.sinkStag(read));
        reads.progress(read, 60);
        assertEquals(60, reads.issuedOctets(read));
        assertEquals(0, reads.retire(Long.MAX_VALUE - 1), "a half-written response holds its entry");
        assertThrows(IllegalStateException.class, () -> reads.issued(read + 1, 5), "out of request order");
        reads.progress(read, 40);
        reads.issued(read, 500);
        int atomic = reads.next();
        assertTrue(reads.atomic(atomic));
        assertEquals(9, reads.sinkStag(atomic));
        assertEquals(42, reads.sinkOffset(atomic));
        assertEquals(1, reads.retire(10_000), "only the issued Read; the Atomic Response is not written yet");
        reads.issued(atomic, 600);
        assertFalse(reads.hasUnissued());
        assertEquals(1, reads.retire(600));
        assertTrue(reads.isEmpty());
    }

    /** An entry whose response was all written, ending at output position {@code sentAt}. */
    private static void answered(InboundReads reads, long sentAt) {
        reads.acceptAtomic(0, 0);
        reads.issued(reads.next(), sentAt);
    }
}
