package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** FPDU arithmetic (RFC 5044 sections 4.1 and 5.2) and the CRC field's byte order. */
class FpduTest {

    @Test
    void padAndLengthForEveryUlpduLength() {
        for (int length = 0; length <= Fpdu.MAX_ULPDU_LENGTH; length++) {
            int pad = Fpdu.padLength(length);
            assertTrue(pad >= 0 && pad <= 3, "pad " + pad + " for " + length);
            assertEquals(0, (2 + length + pad) % 4, "length field + ULPDU + pad for " + length);
            int fpdu = Fpdu.length(length);
            assertEquals(2 + length + pad + 4, fpdu, "FPDU length for " + length);
            assertEquals(0, fpdu % 4, "FPDU length for " + length);
        }
    }

    @Test
    void padExamples() {
        assertEquals(2, Fpdu.padLength(0));
        assertEquals(1, Fpdu.padLength(1));
        assertEquals(0, Fpdu.padLength(2));
        assertEquals(3, Fpdu.padLength(3));
        assertEquals(8, Fpdu.length(0));
        assertEquals(8, Fpdu.length(2));
        assertEquals(12, Fpdu.length(3));
        // A 14-byte tagged DDP header with 4 bytes of data: 2 + 18 = 20, no pad.
        assertEquals(24, Fpdu.length(18));
        assertEquals(3, Fpdu.padLength(0xFFFF));
        assertEquals(2 + 0xFFFF + 3 + 4, Fpdu.length(0xFFFF));
    }

    @Test
    void mulpduExamples() {
        assertEquals(1454, Fpdu.mulpdu(1460, false));
        assertEquals(1442, Fpdu.mulpdu(1460, true));
        // 1448 (timestamps on): ceil(1448/512) = 3.
        assertEquals(1442, Fpdu.mulpdu(1448, false));
        assertEquals(1430, Fpdu.mulpdu(1448, true));
        // EMSS mod 4 is subtracted: 1461 -> 1461 - (6 + 1).
        assertEquals(1454, Fpdu.mulpdu(1461, false));
        // Exactly 512: one marker.
        assertEquals(512 - 6 - 4, Fpdu.mulpdu(512, true));
        assertEquals(513 - 6 - 8 - 1, Fpdu.mulpdu(513, true));
    }

    @Test
    void mulpduMatchesTheRfcFormula() {
        Property.forAll("mulpdu formula", random -> {
            int emss = 128 + random.nextInt(65536 - 128);
            for (boolean markers : new boolean[] {false, true}) {
                int expected = emss - (6 + emss % 4);
                if (markers) {
                    int ceil = emss / 512 + (emss % 512 == 0 ? 0 : 1);
                    expected = emss - (6 + 4 * ceil + emss % 4);
                }
                int mulpdu = Fpdu.mulpdu(emss, markers);
                assertEquals(expected, mulpdu, "EMSS " + emss + " markers " + markers);
                // An FPDU carrying MULPDU octets fits one segment (no leading marker assumed).
                assertTrue(Fpdu.length(mulpdu) <= emss, "FPDU of MULPDU exceeds EMSS " + emss);
            }
        });
    }

    @Test
    void crcFieldIsLittleEndian() {
        ByteBuf out = Unpooled.buffer(8);
        try {
            Fpdu.writeCrc(out, 0xE3069283);
            assertEquals("839206e3", ByteBufUtil.hexDump(out));
            assertEquals(0xE3069283, Fpdu.crc(out, 0));
            out.writeShort(0x1234);
            assertEquals(0x1234, Fpdu.ulpduLength(out, 4));
        } finally {
            out.release();
        }
    }
}
