package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Terminate errors (RFC 5040 7.2, RFC 5041 7.2, RFC 5044 8, RFC 6581 3) and layers. */
class TerminateErrorTest {

    @Test
    void valueOfFindsEveryConstant() {
        for (TerminateError error : TerminateError.values()) {
            assertSame(error, TerminateError.valueOf(error.layer().code(), error.errorType(), error.errorCode()),
                    error.name());
            assertTrue(error.errorType() >= 0 && error.errorType() <= 0xF, error.name());
            assertTrue(error.errorCode() >= 0 && error.errorCode() <= 0xFF, error.name());
            assertNotNull(error.rfcName(), error.name());
            assertTrue(error.describe().contains(error.rfcName()), error.name());
        }
    }

    @Test
    void triplesAreUnique() {
        Set<Integer> keys = new HashSet<>();
        for (TerminateError error : TerminateError.values()) {
            int key = error.layer().code() << 12 | error.errorType() << 8 | error.errorCode();
            assertTrue(keys.add(key), "duplicate triple for " + error);
        }
    }

    @Test
    void exhaustiveScanFindsExactlyTheConstants() {
        int found = 0;
        for (int layer = 0; layer < 16; layer++) {
            for (int type = 0; type < 16; type++) {
                for (int code = 0; code < 256; code++) {
                    TerminateError error = TerminateError.valueOf(layer, type, code);
                    if (error != null) {
                        found++;
                        assertEquals(layer, error.layer().code());
                        assertEquals(type, error.errorType());
                        assertEquals(code, error.errorCode());
                    }
                }
            }
        }
        assertEquals(TerminateError.values().length, found);
    }

    @Test
    void outOfRangeArgumentsReturnNull() {
        int[] bad = {-1, Integer.MIN_VALUE, Integer.MAX_VALUE};
        for (int b : bad) {
            assertNull(TerminateError.valueOf(b, 0, 0));
            assertNull(TerminateError.valueOf(0, b, 0));
            assertNull(TerminateError.valueOf(0, 0, b));
        }
        assertNull(TerminateError.valueOf(3, 0, 0));
        assertNull(TerminateError.valueOf(15, 0, 0));
        assertNull(TerminateError.valueOf(16, 0, 0));
        assertNull(TerminateError.valueOf(0, 16, 0));
        assertNull(TerminateError.valueOf(2, 0, 0x100));
        assertNull(TerminateError.valueOf(2, 0x10, 0x02));
        assertNull(TerminateError.valueOf(1, 2, 0x102), "code must not wrap into 0x02");
        assertNull(TerminateError.valueOf(0, 0x12, 0x06), "type must not wrap into 2");
        assertNull(TerminateError.valueOf(2, 0, 0), "LLP code 0 is not defined");
        assertNull(TerminateError.valueOf(2, 1, 2));
    }

    @Test
    void valuesFromTheNotes() {
        // DDP (layer 1).
        assertSame(TerminateError.DDP_LOCAL_CATASTROPHIC, TerminateError.valueOf(1, 0, 0x00));
        assertSame(TerminateError.DDP_TAGGED_INVALID_STAG, TerminateError.valueOf(1, 1, 0x00));
        assertSame(TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, TerminateError.valueOf(1, 1, 0x01));
        assertSame(TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, TerminateError.valueOf(1, 1, 0x02));
        assertSame(TerminateError.DDP_TAGGED_TO_WRAP, TerminateError.valueOf(1, 1, 0x03));
        assertSame(TerminateError.DDP_TAGGED_INVALID_VERSION, TerminateError.valueOf(1, 1, 0x04));
        assertSame(TerminateError.DDP_UNTAGGED_INVALID_QN, TerminateError.valueOf(1, 2, 0x01));
        TerminateError noBuffer = TerminateError.valueOf(1, 2, 0x02);
        assertSame(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, noBuffer);
        assertEquals("Invalid MSN - no buffer available", noBuffer.rfcName());
        assertEquals("Untagged Buffer Error", noBuffer.errorTypeName());
        assertSame(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, TerminateError.valueOf(1, 2, 0x03));
        assertSame(TerminateError.DDP_UNTAGGED_INVALID_MO, TerminateError.valueOf(1, 2, 0x04));
        assertSame(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, TerminateError.valueOf(1, 2, 0x05));
        assertSame(TerminateError.DDP_UNTAGGED_INVALID_VERSION, TerminateError.valueOf(1, 2, 0x06));
        assertNull(TerminateError.valueOf(1, 2, 0x00));
        assertNull(TerminateError.valueOf(1, 1, 0x05));

        // LLP (layer 2, MPA).
        TerminateError crc = TerminateError.valueOf(2, 0, 0x02);
        assertSame(TerminateError.LLP_CRC_ERROR, crc);
        assertEquals(TerminateLayer.LLP, crc.layer());
        assertEquals("MPA Error", crc.errorTypeName());
        assertSame(TerminateError.LLP_CONNECTION_LOST, TerminateError.valueOf(2, 0, 0x01));
        assertSame(TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, TerminateError.valueOf(2, 0, 0x03));
        assertSame(TerminateError.LLP_INVALID_REQUEST_REPLY, TerminateError.valueOf(2, 0, 0x04));
        assertSame(TerminateError.LLP_LOCAL_CATASTROPHIC, TerminateError.valueOf(2, 0, 0x05));
        assertSame(TerminateError.LLP_INSUFFICIENT_IRD, TerminateError.valueOf(2, 0, 0x06));
        assertSame(TerminateError.LLP_NO_MATCHING_RTR, TerminateError.valueOf(2, 0, 0x07));
        assertNull(TerminateError.valueOf(2, 0, 0x08));

        // RDMAP (layer 0).
        TerminateError opcode = TerminateError.valueOf(0, 2, 0x06);
        assertSame(TerminateError.RDMAP_UNEXPECTED_OPCODE, opcode);
        assertEquals("Remote Operation Error", opcode.errorTypeName());
        assertSame(TerminateError.RDMAP_LOCAL_CATASTROPHIC, TerminateError.valueOf(0, 0, 0x00));
        assertSame(TerminateError.RDMAP_INVALID_STAG, TerminateError.valueOf(0, 1, 0x00));
        assertSame(TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION, TerminateError.valueOf(0, 1, 0x01));
        assertSame(TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION, TerminateError.valueOf(0, 1, 0x02));
        assertSame(TerminateError.RDMAP_STAG_NOT_ASSOCIATED, TerminateError.valueOf(0, 1, 0x03));
        assertSame(TerminateError.RDMAP_TO_WRAP, TerminateError.valueOf(0, 1, 0x04));
        assertSame(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, TerminateError.valueOf(0, 1, 0x09));
        assertSame(TerminateError.RDMAP_PROTECTION_UNSPECIFIED, TerminateError.valueOf(0, 1, 0xFF));
        assertSame(TerminateError.RDMAP_INVALID_VERSION, TerminateError.valueOf(0, 2, 0x05));
        assertSame(TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM, TerminateError.valueOf(0, 2, 0x07));
        assertSame(TerminateError.RDMAP_CATASTROPHIC_GLOBAL, TerminateError.valueOf(0, 2, 0x08));
        assertSame(TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED, TerminateError.valueOf(0, 2, 0x09));
        assertSame(TerminateError.RDMAP_OPERATION_UNSPECIFIED, TerminateError.valueOf(0, 2, 0xFF));
        assertNull(TerminateError.valueOf(0, 2, 0x02), "siw's CRC error read in the RFC layout");
        assertEquals("Remote Protection Error", TerminateError.RDMAP_TO_WRAP.errorTypeName());

        assertEquals(33, TerminateError.values().length);
    }

    @Test
    void errorTypeNames() {
        assertEquals("Local Catastrophic Error", TerminateError.errorTypeName(0, 0));
        assertEquals("Tagged Buffer Error", TerminateError.errorTypeName(1, 1));
        assertEquals("Reserved for the use by the LLP", TerminateError.errorTypeName(1, 3));
        assertEquals("Unknown", TerminateError.errorTypeName(2, 1));
        assertEquals("Unknown", TerminateError.errorTypeName(0, 3));
        assertEquals("Unknown", TerminateError.errorTypeName(3, 0));
        assertEquals("Unknown", TerminateError.errorTypeName(-1, -1));
    }

    @Test
    void layers() {
        assertSame(TerminateLayer.RDMAP, TerminateLayer.valueOf(0));
        assertSame(TerminateLayer.DDP, TerminateLayer.valueOf(1));
        assertSame(TerminateLayer.LLP, TerminateLayer.valueOf(2));
        for (int code : new int[] {3, 15, 16, -1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            assertNull(TerminateLayer.valueOf(code), "layer " + code);
        }
        for (TerminateLayer layer : TerminateLayer.values()) {
            assertSame(layer, TerminateLayer.valueOf(layer.code()));
        }
    }
}
