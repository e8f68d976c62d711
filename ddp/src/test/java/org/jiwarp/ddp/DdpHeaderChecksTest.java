package org.jiwarp.ddp;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;

class DdpHeaderChecksTest {

    private static ByteBuf tagged(int control) {
        ByteBuf ulpdu = Unpooled.buffer();
        ulpdu.writeByte(0xEE); // read already: the header starts at the reader index
        DdpHeaders.writeTagged(ulpdu, control, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), 0x100, 0);
        ulpdu.readerIndex(1);
        return ulpdu;
    }

    private static ByteBuf untagged(int control) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, control, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, 1, 0);
        return ulpdu;
    }

    private static void check(ByteBuf ulpdu) {
        try {
            DdpHeaderChecks.checkVersion(ulpdu);
        } finally {
            ulpdu.release();
        }
    }

    @Test
    void versionOneWithAnyReservedBitsPasses() {
        check(tagged(DdpHeaders.controlByte(true, true)));
        check(untagged(DdpHeaders.controlByte(false, false)));
        // RFC 5041 section 4.1: reserved bits are not checked on receive.
        check(tagged(DdpHeaders.controlByte(true, false, 0xF, 1)));
        check(untagged(DdpHeaders.controlByte(false, true, 0x5, 1)));
    }

    @Test
    void otherVersionsFailByBufferModel() {
        for (int version : new int[] {0, 2, 3}) {
            assertTerminate(TerminateLayer.DDP, 1, 0x04, TerminateError.DDP_TAGGED_INVALID_VERSION,
                    () -> check(tagged(DdpHeaders.controlByte(true, true, 0, version))));
            assertTerminate(TerminateLayer.DDP, 2, 0x06, TerminateError.DDP_UNTAGGED_INVALID_VERSION,
                    () -> check(untagged(DdpHeaders.controlByte(false, true, 0, version))));
        }
        assertTerminate(TerminateLayer.DDP, 2, 0x06, TerminateError.DDP_UNTAGGED_INVALID_VERSION,
                () -> DdpHeaderChecks.checkVersion(Unpooled.EMPTY_BUFFER));
    }

    @Test
    void queueNumbers() {
        for (long qn = 0; qn < 3; qn++) {
            DdpHeaderChecks.checkQn(qn, 3);
        }
        DdpHeaderChecks.checkQn(3, 4);
        for (long qn : new long[] {3, 4, 0xFFFF_FFFFL, -1}) {
            assertTerminate(TerminateLayer.DDP, 2, 0x01, TerminateError.DDP_UNTAGGED_INVALID_QN,
                    () -> DdpHeaderChecks.checkQn(qn, 3));
        }
    }
}
