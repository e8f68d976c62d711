package org.jiwarp.ddp;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;

/** {@link SingleSegmentQueue}: RDMAP's queue 1 as DDP checks it (RFC 5041 sections 5.3 and 7.1). */
class SingleSegmentQueueTest {

    private static final int LENGTH = 28;

    @Test
    void acceptsMessagesInMsnOrderAndWrapsAt2To32() {
        SingleSegmentQueue queue = new SingleSegmentQueue(0xFFFF_FFFEL, LENGTH);
        queue.accept(0xFFFF_FFFEL, 0, true, LENGTH, true);
        queue.accept(0xFFFF_FFFFL, 0, true, LENGTH, true);
        assertEquals(0, queue.expectedMsn());
        queue.accept(0, 0, true, LENGTH, true);
        assertEquals(1, queue.expectedMsn());
    }

    @Test
    void eachCheckInOrderWithItsCode() {
        SingleSegmentQueue queue = new SingleSegmentQueue(2, LENGTH);
        // The MSN first: a replay or a gap, whatever else is wrong.
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.accept(1, 5, false, 3, false));
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.accept(3, 0, true, LENGTH, true));
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.accept(2, 28, true, LENGTH, true));
        assertTerminate(TerminateLayer.DDP, 2, 0x05, TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG,
                () -> queue.accept(2, 0, false, LENGTH, true));
        assertTerminate(TerminateLayer.DDP, 2, 0x05, TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG,
                () -> queue.accept(2, 0, true, LENGTH + 1, true));
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.accept(2, 0, true, LENGTH, false));
        assertEquals(2, queue.expectedMsn(), "a refused message does not take its MSN");
        queue.accept(2, 0, true, LENGTH, true);
        assertEquals(3, queue.expectedMsn());
    }
}
