package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** RDMAP opcodes (RFC 5040 section 4.2, RFC 7306 section 4.1). */
class RdmapOpcodeTest {

    @Test
    void valueOfEveryFourBitCode() {
        RdmapOpcode[] expected = {
            RdmapOpcode.RDMA_WRITE, RdmapOpcode.RDMA_READ_REQUEST, RdmapOpcode.RDMA_READ_RESPONSE, RdmapOpcode.SEND,
            RdmapOpcode.SEND_WITH_INVALIDATE, RdmapOpcode.SEND_WITH_SE, RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE,
            RdmapOpcode.TERMINATE, RdmapOpcode.IMMEDIATE_DATA, RdmapOpcode.IMMEDIATE_DATA_WITH_SE,
            RdmapOpcode.ATOMIC_REQUEST, RdmapOpcode.ATOMIC_RESPONSE, null, null, null, null,
        };
        for (int code = 0; code < 16; code++) {
            assertSame(expected[code], RdmapOpcode.valueOf(code), "code " + code);
            if (expected[code] != null) {
                assertEquals(code, expected[code].code());
            }
        }
    }

    @Test
    void outOfRangeCodesAreNull() {
        for (int code : new int[] {-1, 16, 17, 0x40, 0xFF, 0x100, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            assertNull(RdmapOpcode.valueOf(code), "code " + code);
        }
    }

    @Test
    void tableMatchesValues() {
        Set<Integer> codes = new HashSet<>();
        for (RdmapOpcode opcode : RdmapOpcode.values()) {
            assertTrue(opcode.code() >= 0 && opcode.code() <= 0xF, opcode.name());
            assertTrue(codes.add(opcode.code()), "duplicate code " + opcode.code());
            assertSame(opcode, RdmapOpcode.valueOf(opcode.code()));
            assertSame(opcode, RdmapOpcode.valueOf(opcode.name()));
        }
        assertEquals(12, codes.size());
        int found = 0;
        for (int code = 0; code < 16; code++) {
            if (RdmapOpcode.valueOf(code) != null) {
                found++;
            }
        }
        assertEquals(RdmapOpcode.values().length, found);
    }

    @Test
    void onlyWriteAndReadResponseAreTagged() {
        for (RdmapOpcode opcode : RdmapOpcode.values()) {
            boolean tagged = opcode == RdmapOpcode.RDMA_WRITE || opcode == RdmapOpcode.RDMA_READ_RESPONSE;
            assertEquals(tagged, opcode.tagged(), opcode.name());
            if (tagged) {
                assertEquals(-1, opcode.queueNumber(), opcode.name());
                assertEquals(14, RdmapHeaders.ddpHeaderLength(opcode));
            } else {
                assertTrue(opcode.queueNumber() >= 0, opcode.name());
                assertEquals(18, RdmapHeaders.ddpHeaderLength(opcode));
            }
        }
    }

    @Test
    void queueNumbers() {
        // RFC 5040 section 5.1: QN 0 Send, 1 Read Request, 2 Terminate.
        assertEquals(1, RdmapOpcode.RDMA_READ_REQUEST.queueNumber());
        assertEquals(0, RdmapOpcode.SEND.queueNumber());
        assertEquals(0, RdmapOpcode.SEND_WITH_INVALIDATE.queueNumber());
        assertEquals(0, RdmapOpcode.SEND_WITH_SE.queueNumber());
        assertEquals(0, RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE.queueNumber());
        assertEquals(2, RdmapOpcode.TERMINATE.queueNumber());
        // RFC 7306: Immediate Data travels like a Send.
        assertEquals(0, RdmapOpcode.IMMEDIATE_DATA.queueNumber());
        assertEquals(0, RdmapOpcode.IMMEDIATE_DATA_WITH_SE.queueNumber());
        // RFC 7306: Atomic Requests share the Read Request queue; Atomic Responses use queue 3.
        assertEquals(1, RdmapOpcode.ATOMIC_REQUEST.queueNumber());
        assertEquals(3, RdmapOpcode.ATOMIC_RESPONSE.queueNumber());
    }

    @Test
    void solicitedEventAndInvalidate() {
        Set<RdmapOpcode> se = EnumSet.of(RdmapOpcode.SEND_WITH_SE, RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE,
                RdmapOpcode.IMMEDIATE_DATA_WITH_SE);
        Set<RdmapOpcode> invalidating = EnumSet.of(RdmapOpcode.SEND_WITH_INVALIDATE,
                RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE);
        for (RdmapOpcode opcode : RdmapOpcode.values()) {
            assertEquals(se.contains(opcode), opcode.solicitedEvent(), opcode.name());
            assertEquals(invalidating.contains(opcode), opcode.invalidates(), opcode.name());
        }
    }

    @Test
    void wiresharkNames() {
        String[] names = {"Write", "Read Request", "Read Response", "Send", "Send with Invalidate", "Send with SE",
            "Send with SE and Invalidate", "Terminate"};
        for (int code = 0; code < names.length; code++) {
            assertEquals(names[code], RdmapOpcode.valueOf(code).displayName());
        }
    }
}
