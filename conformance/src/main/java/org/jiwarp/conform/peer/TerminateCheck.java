package org.jiwarp.conform.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * Checks a received Terminate ULPDU bit for bit against what RFC 5040 sections 4.8 and 5.4 require
 * for an error caused by a given offending ULPDU, and describes a Terminate in the RFCs' words.
 * The adversarial catalogue (jiwarp against itself) and {@code jiwarp conform} (any target) share
 * it, so that both hold an implementation to the same reading of the RFC.
 *
 * <p>A Terminate that names no error in the RFC layout may still name one in the layout Linux siw
 * 6.1 writes (little-endian bitfields: Layer in the low nibble of byte 0, M/D/R in the low bits of
 * byte 2); {@link #describe} says so ("sent X, which is the RFC's Y encoded as ...").
 */
public final class TerminateCheck {

    /** What a Terminate carries (RFC 5040 section 4.8, HdrCt). */
    public enum Carried {
        /** HdrCt 0: nothing (LLP errors, or no whole DDP header to carry). */
        NOTHING,
        /** M and D: the DDP Segment Length and the offending DDP header. */
        DDP_HEADER,
        /** M, D and R: and the offending RDMA Read Request header. */
        DDP_AND_READ_REQUEST
    }

    private static final int AT = DdpHeaders.UNTAGGED_HEADER_LENGTH;

    private TerminateCheck() {
    }

    /**
     * Every way {@code bytes} differs from the Terminate RFC 5040 requires for {@code expected},
     * carrying {@code carried} of {@code offending}; empty when it is exactly right.
     */
    public static List<String> problems(byte[] bytes, TerminateError expected, Carried carried, byte[] offending) {
        List<String> problems = new ArrayList<>();
        if (bytes.length < AT + TerminateHeader.CONTROL_LENGTH) {
            problems.add("the Terminate is " + bytes.length + " octets, too short for its control word");
            return problems;
        }
        ByteBuf terminate = Unpooled.wrappedBuffer(bytes);
        try {
            // RFC 5040 sections 4.8 and 5.4: untagged, last, queue 2, MSN 1 (the first there), MO 0.
            expect(problems, "Terminate is untagged", false, DdpHeaders.tagged(terminate, 0));
            expect(problems, "Terminate has L set", true, DdpHeaders.last(terminate, 0));
            expect(problems, "DDP version", DdpHeaders.DDP_VERSION, DdpHeaders.version(terminate, 0));
            expect(problems, "DDP reserved bits", 0, DdpHeaders.reserved(terminate, 0));
            expect(problems, "RDMAP version", RdmapHeaders.RDMAP_VERSION, RdmapHeaders.version(terminate, 0));
            expect(problems, "opcode", RdmapOpcode.TERMINATE, RdmapHeaders.opcode(terminate, 0));
            expect(problems, "Invalidate STag field of a Terminate", 0, RdmapHeaders.invalidateStag(terminate, 0));
            expect(problems, "Terminate queue number", (long) DdpHeaders.QN_TERMINATE, DdpHeaders.qn(terminate, 0));
            expect(problems, "Terminate MSN", 1L, DdpHeaders.msn(terminate, 0));
            expect(problems, "Terminate MO", 0L, DdpHeaders.mo(terminate, 0));

            TerminateError sent = TerminateHeader.error(terminate, AT);
            if (sent != expected) {
                problems.add("the error: expected " + expected.describe() + ", got " + describeControl(terminate));
                return problems;
            }
            expect(problems, "Terminate reserved bits", 0, TerminateHeader.reserved(terminate, AT));
            if (carried == Carried.NOTHING) {
                expect(problems, "HdrCt", 0, TerminateHeader.hdrct(terminate, AT));
                expect(problems, "Terminate length", AT + TerminateHeader.CONTROL_LENGTH, bytes.length);
                return problems;
            }
            boolean withRead = carried == Carried.DDP_AND_READ_REQUEST;
            int hdrct = TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D | (withRead ? TerminateHeader.HDRCT_R : 0);
            if (hdrct != TerminateHeader.hdrct(terminate, AT)) {
                problems.add("HdrCt M/D/R: expected " + hdrctName(hdrct) + ", got "
                        + hdrctName(TerminateHeader.hdrct(terminate, AT)));
                return problems;
            }
            int headerLength = headerLength(offending);
            int carriedAt = AT + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET;
            int end = AT + TerminateHeader.length(hdrct, headerLength);
            if (bytes.length < end) {
                problems.add("the Terminate is " + bytes.length + " octets, too short for what its HdrCt says ("
                        + end + ")");
                return problems;
            }
            expect(problems, "DDP Segment Length = the offending ULPDU's length", offending.length,
                    TerminateHeader.ddpSegmentLength(terminate, AT));
            if (!Arrays.equals(Arrays.copyOfRange(offending, 0, headerLength),
                    Arrays.copyOfRange(bytes, carriedAt, carriedAt + headerLength))) {
                problems.add("the carried DDP header: expected " + ByteBufUtil.hexDump(offending, 0, headerLength)
                        + ", got " + ByteBufUtil.hexDump(bytes, carriedAt, headerLength));
            }
            if (withRead) {
                int rdma = AT + TerminateHeader.terminatedRdmaHeaderOffset(terminate, AT);
                if (!Arrays.equals(Arrays.copyOfRange(offending, headerLength, headerLength + ReadRequestHeader.LENGTH),
                        Arrays.copyOfRange(bytes, rdma, rdma + ReadRequestHeader.LENGTH))) {
                    problems.add("the carried Read Request header: expected "
                            + ByteBufUtil.hexDump(offending, headerLength, ReadRequestHeader.LENGTH) + ", got "
                            + ByteBufUtil.hexDump(bytes, rdma, ReadRequestHeader.LENGTH));
                }
            }
            expect(problems, "Terminate length", end, bytes.length);
            return problems;
        } finally {
            terminate.release();
        }
    }

    /** The error a Terminate names in the RFC layout, or {@code null}. */
    public static TerminateError error(byte[] bytes) {
        if (bytes.length < AT + TerminateHeader.CONTROL_LENGTH) {
            return null;
        }
        ByteBuf terminate = Unpooled.wrappedBuffer(bytes);
        try {
            return TerminateHeader.error(terminate, AT);
        } finally {
            terminate.release();
        }
    }

    /**
     * The error a Terminate names when read in Linux siw 6.1's little-endian bitfield layout, or
     * {@code null} when that reading names none (or the RFC reading already names one).
     */
    public static TerminateError siwLayoutError(byte[] bytes) {
        if (bytes.length < AT + TerminateHeader.CONTROL_LENGTH) {
            return null;
        }
        ByteBuf terminate = Unpooled.wrappedBuffer(bytes);
        try {
            if (!TerminateHeader.looksLikeSiwLayout(terminate, AT)) {
                return null;
            }
            int byte0 = terminate.getUnsignedByte(AT);
            return TerminateError.valueOf(byte0 & 0xF, byte0 >>> 4, TerminateHeader.errorCode(terminate, AT));
        } finally {
            terminate.release();
        }
    }

    /**
     * The error a Terminate names when read in Linux siw 6.1's layout, whether or not the RFC reading
     * names one too (a control word such as {@code 0x20060000} is valid both ways: LLP Insufficient
     * IRD as the RFC reads it, RDMAP Unexpected OpCode as siw writes it); {@code null} when that
     * reading names none.
     */
    public static TerminateError siwReading(byte[] bytes) {
        if (bytes.length < AT + TerminateHeader.CONTROL_LENGTH) {
            return null;
        }
        int byte0 = bytes[AT] & 0xFF;
        int byte2 = bytes[AT + TerminateHeader.HDRCT_OFFSET] & 0xFF;
        return (byte2 & 0xF8) == 0 ? TerminateError.valueOf(byte0 & 0xF, byte0 >>> 4, bytes[AT + 1] & 0xFF) : null;
    }

    /**
     * The HdrCt bits a Terminate in siw's layout means (M, D, R in bits 0, 1, 2 of byte 2), as RFC
     * {@link TerminateHeader#HDRCT_M} etc.
     */
    public static int siwLayoutHdrct(byte[] bytes) {
        int byte2 = bytes[AT + TerminateHeader.HDRCT_OFFSET] & 0xFF;
        return ((byte2 & 0x01) != 0 ? TerminateHeader.HDRCT_M : 0) | ((byte2 & 0x02) != 0 ? TerminateHeader.HDRCT_D : 0)
                | ((byte2 & 0x04) != 0 ? TerminateHeader.HDRCT_R : 0);
    }

    /**
     * The Terminate as it would be in the RFC layout, were its control word in siw's encoding
     * ({@link #siwReading} names an error): the same octets with the control word re-encoded
     * (reserved bits zero); {@code null} otherwise. {@link #problems} of the result checks the rest
     * of the Terminate (carried headers, lengths) as the RFC requires.
     */
    public static byte[] asRfcLayout(byte[] bytes) {
        TerminateError siw = siwReading(bytes);
        if (siw == null) {
            return null;
        }
        byte[] fixed = bytes.clone();
        int word = TerminateHeader.controlWord(siw, siwLayoutHdrct(bytes));
        fixed[AT] = (byte) (word >>> 24);
        fixed[AT + 1] = (byte) (word >>> 16);
        fixed[AT + 2] = (byte) (word >>> 8);
        fixed[AT + 3] = (byte) word;
        return fixed;
    }

    /**
     * A Terminate in the RFCs' words: the error by name with its raw control word, the carried
     * headers, and, when the RFC reading names no error but siw's does, what it is under that
     * encoding.
     */
    public static String describe(byte[] bytes) {
        if (bytes.length < AT + TerminateHeader.CONTROL_LENGTH) {
            return "a Terminate of " + bytes.length + " octets, too short for its control word";
        }
        ByteBuf terminate = Unpooled.wrappedBuffer(bytes);
        try {
            StringBuilder s = new StringBuilder("Terminate ").append(describeControl(terminate));
            TerminateError siw = siwLayoutError(bytes);
            if (siw != null) {
                s.append(String.format(", which is the RFC's %s (0x%08x) encoded as little-endian bitfields "
                        + "(Layer in the low nibble of octet 0, M/D/R in the low bits of octet 2, as Linux siw 6.1 "
                        + "writes it)", siw.describe(), TerminateHeader.controlWord(siw, siwLayoutHdrct(bytes))));
                return s.toString();
            }
            int hdrct = TerminateHeader.hdrct(terminate, AT);
            s.append(", HdrCt ").append(hdrctName(hdrct));
            if ((hdrct & TerminateHeader.HDRCT_D) != 0
                    && bytes.length >= AT + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET + 2) {
                int carriedAt = AT + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET;
                int length = Math.min(TerminateHeader.terminatedDdpHeaderLength(terminate, AT), bytes.length - carriedAt);
                s.append(", DDP Segment Length ").append(TerminateHeader.ddpSegmentLength(terminate, AT))
                        .append(", carried DDP header ").append(ByteBufUtil.hexDump(bytes, carriedAt, length));
            }
            if ((hdrct & TerminateHeader.HDRCT_R) != 0) {
                int rdma = AT + TerminateHeader.terminatedRdmaHeaderOffset(terminate, AT);
                int length = Math.max(0, Math.min(ReadRequestHeader.LENGTH, bytes.length - rdma));
                s.append(", carried Read Request header ").append(ByteBufUtil.hexDump(bytes, rdma, length));
            }
            return s.toString();
        } finally {
            terminate.release();
        }
    }

    private static String describeControl(ByteBuf terminate) {
        int word = terminate.getInt(AT);
        TerminateError error = TerminateHeader.error(terminate, AT);
        String name = error != null ? error.describe() : String.format("layer %d / error type %d / code 0x%02x "
                + "(no error the RFCs define)", TerminateHeader.layerCode(terminate, AT),
                TerminateHeader.errorType(terminate, AT), TerminateHeader.errorCode(terminate, AT));
        return String.format("%s (control word 0x%08x)", name, word);
    }

    private static String hdrctName(int hdrct) {
        StringBuilder s = new StringBuilder();
        s.append((hdrct & TerminateHeader.HDRCT_M) != 0 ? "M" : "");
        s.append((hdrct & TerminateHeader.HDRCT_D) != 0 ? "D" : "");
        s.append((hdrct & TerminateHeader.HDRCT_R) != 0 ? "R" : "");
        return s.length() == 0 ? "none" : s.toString();
    }

    private static int headerLength(byte[] offending) {
        ByteBuf sent = Unpooled.wrappedBuffer(offending);
        try {
            return DdpHeaders.headerLength(sent, 0);
        } finally {
            sent.release();
        }
    }

    private static void expect(List<String> problems, String what, Object expected, Object actual) {
        if (!expected.equals(actual)) {
            problems.add(what + ": expected " + expected + ", got " + actual);
        }
    }
}
