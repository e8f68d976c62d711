package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.junit.jupiter.api.Test;

/** The RDMAP fields inside DDP's RsvdULP (RFC 5040 sections 4.2 and 4.3). */
class RdmapHeadersTest {

    @Test
    void everyControlByteRoundTrips() {
        ByteBuf out = Unpooled.buffer(18);
        try {
            for (int control = 0; control < 256; control++) {
                int version = control >>> 6;
                int reserved = (control >>> 4) & 3;
                int opcode = control & 0xF;
                assertEquals(control, RdmapHeaders.controlByte(version, reserved, opcode), "control " + control);
                out.clear();
                DdpHeaders.writeUntagged(out, true, control, 0, 0, 1, 0);
                assertEquals(control, RdmapHeaders.control(out, 0));
                assertEquals(version, RdmapHeaders.version(out, 0));
                assertEquals(reserved, RdmapHeaders.reserved(out, 0));
                assertEquals(opcode, RdmapHeaders.opcodeCode(out, 0));
                assertSame(RdmapOpcode.valueOf(opcode), RdmapHeaders.opcode(out, 0));
                if (opcode >= 0xC) {
                    assertNull(RdmapHeaders.opcode(out, 0));
                }
            }
        } finally {
            out.release();
        }
    }

    @Test
    void controlByteForEachOpcode() {
        for (RdmapOpcode opcode : RdmapOpcode.values()) {
            int control = RdmapHeaders.controlByte(opcode);
            assertEquals(0x40 | opcode.code(), control, opcode.name());
            ByteBuf out = Unpooled.buffer(18);
            try {
                if (opcode.tagged()) {
                    DdpHeaders.writeTagged(out, true, control, 0x1234, 0L);
                } else {
                    DdpHeaders.writeUntagged(out, true, control, 0, opcode.queueNumber(), 1, 0);
                }
                assertEquals(1, RdmapHeaders.version(out, 0));
                assertEquals(0, RdmapHeaders.reserved(out, 0));
                assertSame(opcode, RdmapHeaders.opcode(out, 0));
                assertEquals(RdmapHeaders.ddpHeaderLength(opcode), DdpHeaders.headerLength(out, 0));
            } finally {
                out.release();
            }
        }
    }

    @Test
    void controlByteMasksOutOfRangeFields() {
        assertEquals(0xFF, RdmapHeaders.controlByte(7, 7, 0x1F));
        assertEquals(0x40 | 0x10 | 0x0A, RdmapHeaders.controlByte(5, 5, 0x1A));
    }

    @Test
    void invalidateStagRoundTrip() {
        Property.forAll("invalidate STag round trip", random -> {
            int stag = random.nextInt();
            int offset = random.nextInt(16);
            RdmapOpcode opcode = random.nextBoolean() ? RdmapOpcode.SEND_WITH_INVALIDATE
                    : RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE;
            long msn = random.nextLong(0x1_0000_0000L);
            ByteBuf out = Unpooled.buffer(offset + 18);
            try {
                out.writeZero(offset);
                DdpHeaders.writeUntagged(out, random.nextBoolean(), RdmapHeaders.controlByte(opcode), stag,
                        DdpHeaders.QN_SEND, msn, 0);
                assertEquals(stag, RdmapHeaders.invalidateStag(out, offset));
                assertSame(opcode, RdmapHeaders.opcode(out, offset));
                assertEquals(true, RdmapHeaders.opcode(out, offset).invalidates());
                assertEquals(msn, DdpHeaders.msn(out, offset));
                assertEquals(0, DdpHeaders.qn(out, offset));
            } finally {
                out.release();
            }
        });
    }
}
