package org.jiwarp.conform.peer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.jiwarp.conform.peer.TerminateCheck.Carried;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.junit.jupiter.api.Test;

/** {@link TerminateCheck}: what it accepts, what it reports, and how it reads siw's encoding. */
class TerminateCheckTest {

    /** A Terminate for {@code error} about {@code offending}, as RFC 5040 section 4.8 lays it out. */
    private static byte[] terminate(TerminateError error, byte[] offending, int segmentLengthDelta) {
        ByteBuf body = Unpooled.buffer();
        ByteBuf bad = Unpooled.wrappedBuffer(offending);
        try {
            TerminateHeader.write(body, error, offending.length + segmentLengthDelta,
                    bad.slice(0, DdpHeaders.TAGGED_HEADER_LENGTH), null);
            byte[] bytes = ByteBufUtil.getBytes(body);
            int control = (bytes[0] & 0xFF) << 24 | (bytes[1] & 0xFF) << 16 | (bytes[2] & 0xFF) << 8 | bytes[3] & 0xFF;
            return Ulpdus.terminate(Ulpdus.UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, control,
                    java.util.Arrays.copyOfRange(bytes, 4, bytes.length));
        } finally {
            body.release();
            bad.release();
        }
    }

    @Test
    void anRfcTerminateHasNoProblems() {
        byte[] write = Ulpdus.write(0x1234_5601, 0x1000, 16);
        byte[] terminate = terminate(TerminateError.DDP_TAGGED_INVALID_STAG, write, 0);
        assertEquals(List.of(), TerminateCheck.problems(terminate, TerminateError.DDP_TAGGED_INVALID_STAG,
                Carried.DDP_HEADER, write));
        assertTrue(TerminateCheck.describe(terminate).startsWith("Terminate DDP / Tagged Buffer Error / Invalid STag "
                + "(control word 0x1100c000), HdrCt MD, DDP Segment Length 30, carried DDP header c1401234560100000000"
                + "00001000"), TerminateCheck.describe(terminate));
    }

    @Test
    void eachWrongFieldIsReported() {
        byte[] write = Ulpdus.write(0x1234_5601, 0x1000, 16);
        assertEquals(List.of("DDP Segment Length = the offending ULPDU's length: expected 30, got 31"),
                TerminateCheck.problems(terminate(TerminateError.DDP_TAGGED_INVALID_STAG, write, 1),
                        TerminateError.DDP_TAGGED_INVALID_STAG, Carried.DDP_HEADER, write));
        assertEquals(List.of("HdrCt M/D/R: expected MDR, got MD"), TerminateCheck.problems(
                terminate(TerminateError.DDP_TAGGED_INVALID_STAG, write, 0), TerminateError.DDP_TAGGED_INVALID_STAG,
                Carried.DDP_AND_READ_REQUEST, write));
        byte[] other = Ulpdus.write(0x1234_5602, 0x1000, 16);
        assertTrue(TerminateCheck.problems(terminate(TerminateError.DDP_TAGGED_INVALID_STAG, other, 0),
                TerminateError.DDP_TAGGED_INVALID_STAG, Carried.DDP_HEADER, write).get(0)
                .startsWith("the carried DDP header: expected "));
        byte[] msn2 = Ulpdus.terminate(Ulpdus.UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 2, 0,
                TerminateHeader.controlWord(TerminateError.LLP_CRC_ERROR, 0), new byte[0]);
        assertEquals(List.of("Terminate MSN: expected 1, got 2"), TerminateCheck.problems(msn2,
                TerminateError.LLP_CRC_ERROR, Carried.NOTHING, new byte[0]));
    }

    /** Linux siw 6.1's CRC error, {@code 02 02 00 00}: no error in the RFC layout, the RFC's 2/0/2 in siw's. */
    @Test
    void siwsEncodingIsNamedForWhatItMeans() {
        byte[] siw = Ulpdus.terminate(Ulpdus.UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, 0x0202_0000, new byte[0]);
        assertNull(TerminateCheck.error(siw));
        assertEquals(TerminateError.LLP_CRC_ERROR, TerminateCheck.siwLayoutError(siw));
        assertEquals("Terminate layer 0 / error type 2 / code 0x02 (no error the RFCs define) (control word 0x02020000), "
                + "which is the RFC's LLP / MPA Error / MPA CRC Error (0x20020000) encoded as little-endian bitfields "
                + "(Layer in the low nibble of octet 0, M/D/R in the low bits of octet 2, as Linux siw 6.1 writes it)",
                TerminateCheck.describe(siw));
        assertTrue(TerminateCheck.problems(siw, TerminateError.LLP_CRC_ERROR, Carried.NOTHING, new byte[0]).get(0)
                .startsWith("the error: expected LLP / MPA Error / MPA CRC Error, got layer 0 / error type 2"));
        // Re-encoded in the RFC layout, the rest of it is checked as the RFC requires.
        assertEquals(List.of(), TerminateCheck.problems(TerminateCheck.asRfcLayout(siw), TerminateError.LLP_CRC_ERROR,
                Carried.NOTHING, new byte[0]));
        assertNull(TerminateCheck.asRfcLayout(terminate(TerminateError.DDP_TAGGED_INVALID_STAG,
                Ulpdus.write(1, 0, 4), 0)));
        // siw's tagged bounds violation, 11 01 03 00: DDP / tagged / 0x01 with M and D.
        byte[] bounds = Ulpdus.terminate(Ulpdus.UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, 0x1101_0300,
                new byte[0]);
        assertTrue(TerminateCheck.describe(bounds).endsWith("(control word 0x11010300), which is the RFC's DDP / "
                + "Tagged Buffer Error / Base or bounds violation (0x1101c000) encoded as little-endian bitfields "
                + "(Layer in the low nibble of octet 0, M/D/R in the low bits of octet 2, as Linux siw 6.1 writes it)"),
                TerminateCheck.describe(bounds));
    }
}
