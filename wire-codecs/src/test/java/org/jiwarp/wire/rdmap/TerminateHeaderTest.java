package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.junit.jupiter.api.Test;

/** The Terminate message body (RFC 5040 section 4.8) and the siw 6.1 layout detection. */
class TerminateHeaderTest {

    private static final int NO_DDP = 0;
    private static final int TAGGED = 1;
    private static final int UNTAGGED = 2;

    /**
     * Every error x {no DDP header, tagged, untagged} x {with, without Read Request header} x {M
     * asked or not}, each case with fresh random carried headers and buffer offset.
     */
    @Test
    void roundTripEveryCombination() {
        Property.forAll("terminate round trip, all combinations", 25, random -> {
            for (TerminateError error : TerminateError.values()) {
                for (int ddp = NO_DDP; ddp <= UNTAGGED; ddp++) {
                    for (boolean withReadRequest : new boolean[] {false, true}) {
                        for (boolean m : new boolean[] {false, true}) {
                            roundTrip(random, error, ddp, withReadRequest, m);
                        }
                    }
                }
            }
        });
    }

    private static void roundTrip(SplittableRandom random, TerminateError error, int ddp, boolean withReadRequest,
            boolean m) {
        byte[] ddpBytes = null;
        if (ddp == TAGGED) {
            ddpBytes = Property.bytes(random, 14);
            ddpBytes[0] |= (byte) 0x80;
        } else if (ddp == UNTAGGED) {
            ddpBytes = Property.bytes(random, 18);
            ddpBytes[0] &= 0x7F;
        }
        byte[] rrBytes = withReadRequest ? Property.bytes(random, 28) : null;
        int segmentLength = m ? random.nextInt(0x10000) : -1;
        int offset = random.nextInt(16);
        String where = error + " ddp=" + ddp + " rr=" + withReadRequest + " m=" + m;

        ByteBuf ddpHeader = ddpBytes == null ? null : Unpooled.buffer(ddpBytes.length).writeBytes(ddpBytes);
        ByteBuf readRequest = rrBytes == null ? null : Unpooled.buffer(28).writeBytes(rrBytes);
        ByteBuf out = Unpooled.buffer(offset + 4 + 2 + 18 + 28);
        try {
            out.writeZero(offset);
            TerminateHeader.write(out, error, segmentLength, ddpHeader, readRequest);
            int written = out.writerIndex() - offset;
            if (ddpHeader != null) {
                assertEquals(0, ddpHeader.readerIndex(), where);
                assertEquals(ddpBytes.length, ddpHeader.readableBytes(), where);
            }
            if (readRequest != null) {
                assertEquals(0, readRequest.readerIndex(), where);
            }

            boolean d = ddpBytes != null;
            boolean expectM = m && d;
            int hdrct = (expectM ? TerminateHeader.HDRCT_M : 0) | (d ? TerminateHeader.HDRCT_D : 0)
                    | (withReadRequest ? TerminateHeader.HDRCT_R : 0);
            assertSame(error, TerminateHeader.error(out, offset), where);
            assertEquals(error.layer().code(), TerminateHeader.layerCode(out, offset), where);
            assertEquals(error.errorType(), TerminateHeader.errorType(out, offset), where);
            assertEquals(error.errorCode(), TerminateHeader.errorCode(out, offset), where);
            assertEquals(hdrct, TerminateHeader.hdrct(out, offset), where);
            assertEquals(expectM, TerminateHeader.m(out, offset), where);
            assertEquals(d, TerminateHeader.d(out, offset), where);
            assertEquals(withReadRequest, TerminateHeader.r(out, offset), where);
            assertEquals(0, TerminateHeader.reserved(out, offset), where);
            assertEquals(TerminateHeader.controlWord(error, hdrct), out.getInt(offset), where);

            int ddpLength = d ? ddpBytes.length : 0;
            assertEquals(ddpLength, TerminateHeader.terminatedDdpHeaderLength(out, offset), where);
            assertEquals(TerminateHeader.length(hdrct, ddpLength), written, where);
            assertEquals(4 + (d ? 2 + ddpLength : 0) + (withReadRequest ? 28 : 0), written, where);
            int rdmaAt = TerminateHeader.terminatedRdmaHeaderOffset(out, offset);
            assertEquals(d ? 6 + ddpLength : 4, rdmaAt, where);
            if (d) {
                assertEquals(m ? segmentLength : 0, TerminateHeader.ddpSegmentLength(out, offset), where);
                byte[] carried = ByteBufUtil.getBytes(out, offset + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET,
                        ddpLength);
                assertArrayEquals(ddpBytes, carried, where);
                assertEquals(ddp == TAGGED,
                        DdpHeaders.tagged(out, offset + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET), where);
            }
            if (withReadRequest) {
                assertArrayEquals(rrBytes, ByteBufUtil.getBytes(out, offset + rdmaAt, 28), where);
                assertEquals(offset + rdmaAt + 28, out.writerIndex(), where);
            }
            assertFalse(TerminateHeader.looksLikeSiwLayout(out, offset), where);
        } finally {
            out.release();
            if (ddpHeader != null) {
                ddpHeader.release();
            }
            if (readRequest != null) {
                readRequest.release();
            }
        }
    }

    @Test
    void rfcByteLayout() {
        ByteBuf out = Unpooled.buffer();
        ByteBuf ddp = Unpooled.buffer();
        try {
            TerminateHeader.write(out, TerminateError.LLP_CRC_ERROR, -1, null, null);
            assertEquals("20020000", ByteBufUtil.hexDump(out));
            out.clear();
            TerminateHeader.write(out, TerminateError.RDMAP_UNEXPECTED_OPCODE, -1, null, null);
            assertEquals("02060000", ByteBufUtil.hexDump(out));
            out.clear();
            DdpHeaders.writeTagged(ddp, true, 0x40, 0x100, 0L);
            TerminateHeader.write(out, TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, 1234, ddp, null);
            assertEquals("1101c000" + "04d2" + ByteBufUtil.hexDump(ddp), ByteBufUtil.hexDump(out));
        } finally {
            out.release();
            ddp.release();
        }
    }

    @Test
    void controlWordFromRawFields() {
        assertEquals(0x2002_0000, TerminateHeader.controlWord(2, 0, 2, 0, 0));
        assertEquals(0x1102_E000 | 0x1FFF, TerminateHeader.controlWord(1, 1, 2, 0xFF, 0xFFFF));
        assertEquals(0xFFFF_E000 | 0x1FFF, TerminateHeader.controlWord(0x1F, 0x1F, 0x1FF, 0xFF, 0x1FFF));
        ByteBuf out = Unpooled.buffer(4);
        try {
            out.writeInt(TerminateHeader.controlWord(1, 2, 6, TerminateHeader.HDRCT_D, 0x0ABC));
            assertEquals(1, TerminateHeader.layerCode(out, 0));
            assertEquals(2, TerminateHeader.errorType(out, 0));
            assertEquals(6, TerminateHeader.errorCode(out, 0));
            assertSame(TerminateError.DDP_UNTAGGED_INVALID_VERSION, TerminateHeader.error(out, 0));
            assertEquals(TerminateHeader.HDRCT_D, TerminateHeader.hdrct(out, 0));
            assertEquals(0x0ABC, TerminateHeader.reserved(out, 0));
        } finally {
            out.release();
        }
    }

    @Test
    void lengthArithmetic() {
        assertEquals(4, TerminateHeader.length(0, 0));
        assertEquals(4, TerminateHeader.length(TerminateHeader.HDRCT_M, 0));
        assertEquals(4 + 2 + 14, TerminateHeader.length(TerminateHeader.HDRCT_D, 14));
        assertEquals(4 + 2 + 18 + 28, TerminateHeader.length(TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D
                | TerminateHeader.HDRCT_R, 18));
        assertEquals(4 + 28, TerminateHeader.length(TerminateHeader.HDRCT_R, 18));
    }

    private static boolean siw(int... bytes) {
        ByteBuf buf = Unpooled.buffer(bytes.length + 3);
        try {
            buf.writeZero(3);
            for (int b : bytes) {
                buf.writeByte(b);
            }
            return TerminateHeader.looksLikeSiwLayout(buf, 3);
        } finally {
            buf.release();
        }
    }

    @Test
    void siwLayoutFromTheNotes() {
        // siw 6.1: a CRC error goes out as 02 02 00 00, a tagged bounds violation as 11 01 03 00.
        assertTrue(siw(0x02, 0x02, 0x00, 0x00));
        assertTrue(siw(0x11, 0x01, 0x03, 0x00));
        // A Send without a posted receive (DDP etype 2 code 0x02), siw layout with D set (bit 1).
        assertTrue(siw(0x21, 0x02, 0x02, 0x00));
    }

    @Test
    void rfcLayoutIsNeverTakenForSiw() {
        int[] hdrcts = {0, TerminateHeader.HDRCT_M, TerminateHeader.HDRCT_D, TerminateHeader.HDRCT_R,
            TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D, TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_R,
            TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_R};
        for (TerminateError error : TerminateError.values()) {
            for (int hdrct : hdrcts) {
                int word = TerminateHeader.controlWord(error, hdrct);
                boolean detected = siw(word >>> 24, (word >>> 16) & 0xFF, (word >>> 8) & 0xFF, word & 0xFF);
                assertFalse(detected, error + " hdrct " + Integer.toHexString(hdrct));
            }
        }
    }

    /**
     * With HdrCt 0, some siw-layout words are also valid RFC words and are read the RFC way, as the
     * notes ask: siw's RDMAP / Remote Operation / Unexpected OpCode (0x20 0x06) reads as LLP / MPA
     * Error / Insufficient IRD. With any HdrCt bit set (low bits of byte 2) siw is recognised.
     */
    @Test
    void ambiguousWordsFollowTheRfc() {
        assertFalse(siw(0x20, 0x06, 0x00, 0x00));
        assertSame(TerminateError.LLP_INSUFFICIENT_IRD, TerminateError.valueOf(2, 0, 0x06));
        assertTrue(siw(0x20, 0x06, 0x02, 0x00));
    }

    @Test
    void garbageIsNotSiw() {
        // Neither reading names an error.
        assertFalse(siw(0x33, 0x00, 0x00, 0x00));
        assertFalse(siw(0xF0, 0x01, 0x00, 0x00));
        // siw reading valid, but reserved bits above HdrCt set in byte 2.
        assertFalse(siw(0x02, 0x02, 0x08, 0x00));
    }
}
