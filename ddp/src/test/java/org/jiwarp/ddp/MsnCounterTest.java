package org.jiwarp.ddp;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;

class MsnCounterTest {

    @Test
    void startsAtOneAndAdvances() {
        MsnCounter counter = new MsnCounter();
        assertEquals(1, counter.expected());
        counter.check(1, 1);
        counter.advance();
        assertEquals(2, counter.expected());
        counter.check(2, 5);
    }

    @Test
    void noBufferWhenNothingIsAvailable() {
        MsnCounter counter = new MsnCounter();
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> counter.check(1, 0));
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> counter.check(3, 2), "two available: MSNs 1 and 2");
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> counter.check(1L << 31, 2), "2^31 - 1 ahead: still ahead");
    }

    @Test
    void rangeForCompletedOrOutOfSequenceMsns() {
        MsnCounter counter = new MsnCounter();
        counter.advance();
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(1, 4), "already completed");
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(0, 4));
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(3, 4), "a buffer exists, but MSN 2 comes first");
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(2 + (1L << 31), 4), "2^31 ahead reads as behind");
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(1, 0), "behind wins over no buffer");
    }

    @Test
    void wrapsAt32Bits() {
        MsnCounter counter = new MsnCounter(0xFFFF_FFFFL);
        counter.check(0xFFFF_FFFFL, 1);
        counter.advance();
        assertEquals(0, counter.expected());
        counter.check(0, 1);
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> counter.check(0xFFFF_FFFFL, 1));
        counter.advance();
        assertEquals(1, counter.expected());
    }
}
