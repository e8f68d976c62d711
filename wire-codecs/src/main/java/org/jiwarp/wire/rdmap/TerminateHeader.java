package org.jiwarp.wire.rdmap;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.ddp.DdpHeaders;

/**
 * The Terminate message body (RFC 5040 section 4.8), the payload of an untagged message on
 * queue 2. Offsets count from the first byte after the untagged DDP header.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  | Layer | EType |  Error Code   |M|D|R|         Reserved        |  0  Terminate Control
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  DDP Segment Length (if D)    |                               |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
 *  ~        Terminated DDP Header (if D): 14 bytes tagged, 18 untagged                ~  6
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  ~        Terminated RDMA Header (if R): the 28-byte Read Request header            ~
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>HdrCt: M says the DDP Segment Length is valid (it is the MPA ULPDU Length of the segment that
 * caused the error), D says a DDP header is included, R that an RDMA Read Request header is. As
 * Wireshark does, the DDP Segment Length field travels together with the DDP header (D). The
 * length of the carried DDP header follows from its own Tagged flag.
 *
 * <p>Linux siw (6.1) lays the control word out with little-endian bitfields (Layer in the low
 * nibble of byte 0, HdrCt in the low bits of byte 2): {@link #looksLikeSiwLayout(ByteBuf, int)}
 * recognises that. jiwarp always writes the RFC layout.
 */
public final class TerminateHeader {

    public static final int CONTROL_OFFSET = 0;
    public static final int ERROR_CODE_OFFSET = 1;
    public static final int HDRCT_OFFSET = 2;
    public static final int DDP_SEGMENT_LENGTH_OFFSET = 4;
    public static final int TERMINATED_DDP_HEADER_OFFSET = 6;

    /** Length of the Terminate Control field. */
    public static final int CONTROL_LENGTH = 4;
    public static final int DDP_SEGMENT_LENGTH_LENGTH = 2;

    public static final int HDRCT_M = 0x80;
    public static final int HDRCT_D = 0x40;
    public static final int HDRCT_R = 0x20;
    /** The 13 reserved bits of bytes 2..3. */
    public static final int RESERVED_MASK = 0x1FFF;

    private TerminateHeader() {
    }

    public static int layerCode(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + CONTROL_OFFSET) >>> 4;
    }

    public static int errorType(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + CONTROL_OFFSET) & 0x0F;
    }

    public static int errorCode(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + ERROR_CODE_OFFSET);
    }

    /** The named error, or {@code null} when the triple is not one the RFCs define. */
    public static TerminateError error(ByteBuf buf, int offset) {
        return TerminateError.valueOf(layerCode(buf, offset), errorType(buf, offset), errorCode(buf, offset));
    }

    /** The HdrCt bits as they sit in byte 2 ({@link #HDRCT_M}, {@link #HDRCT_D}, {@link #HDRCT_R}). */
    public static int hdrct(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + HDRCT_OFFSET) & (HDRCT_M | HDRCT_D | HDRCT_R);
    }

    public static boolean m(ByteBuf buf, int offset) {
        return (hdrct(buf, offset) & HDRCT_M) != 0;
    }

    public static boolean d(ByteBuf buf, int offset) {
        return (hdrct(buf, offset) & HDRCT_D) != 0;
    }

    public static boolean r(ByteBuf buf, int offset) {
        return (hdrct(buf, offset) & HDRCT_R) != 0;
    }

    public static int reserved(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + HDRCT_OFFSET) & RESERVED_MASK;
    }

    /** The DDP Segment Length; meaningful when D (and valid when M) is set. */
    public static int ddpSegmentLength(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + DDP_SEGMENT_LENGTH_OFFSET);
    }

    /** Length of the carried DDP header, from its Tagged flag; 0 when D is clear. */
    public static int terminatedDdpHeaderLength(ByteBuf buf, int offset) {
        if (!d(buf, offset)) {
            return 0;
        }
        return DdpHeaders.headerLength(buf, offset + TERMINATED_DDP_HEADER_OFFSET);
    }

    /** Offset (from {@code offset}) of the carried RDMA header; valid when R is set. */
    public static int terminatedRdmaHeaderOffset(ByteBuf buf, int offset) {
        int d = terminatedDdpHeaderLength(buf, offset);
        return d == 0 ? CONTROL_LENGTH : TERMINATED_DDP_HEADER_OFFSET + d;
    }

    /** Total length of a Terminate body with these header-control bits and carried DDP header length. */
    public static int length(int hdrct, int terminatedDdpHeaderLength) {
        int length = CONTROL_LENGTH;
        if ((hdrct & HDRCT_D) != 0) {
            length += DDP_SEGMENT_LENGTH_LENGTH + terminatedDdpHeaderLength;
        }
        if ((hdrct & HDRCT_R) != 0) {
            length += ReadRequestHeader.LENGTH;
        }
        return length;
    }

    /** The Terminate Control word for an error and HdrCt bits. */
    public static int controlWord(TerminateError error, int hdrct) {
        return controlWord(error.layer().code(), error.errorType(), error.errorCode(), hdrct, 0);
    }

    /** The Terminate Control word from raw field values (for tests and the adversarial peer). */
    public static int controlWord(int layer, int errorType, int errorCode, int hdrct, int reserved) {
        return (layer & 0xF) << 28 | (errorType & 0xF) << 24 | (errorCode & 0xFF) << 16
                | (hdrct & (HDRCT_M | HDRCT_D | HDRCT_R)) << 8 | (reserved & RESERVED_MASK);
    }

    /**
     * Appends a Terminate body: the control word, then (when {@code terminatedDdpHeader} is not
     * null) the DDP Segment Length and the carried DDP header, then (when {@code terminatedReadRequest}
     * is not null) the carried Read Request header. HdrCt D and R follow from what is carried; M is
     * set when {@code ddpSegmentLength >= 0}.
     *
     * @param terminatedDdpHeader readable bytes are the offending DDP header (14 or 18), or null
     * @param terminatedReadRequest readable bytes are the 28-byte Read Request header, or null
     */
    public static void write(ByteBuf out, TerminateError error, int ddpSegmentLength, ByteBuf terminatedDdpHeader,
            ByteBuf terminatedReadRequest) {
        int hdrct = 0;
        if (terminatedDdpHeader != null) {
            hdrct |= HDRCT_D;
            if (ddpSegmentLength >= 0) {
                hdrct |= HDRCT_M;
            }
        }
        if (terminatedReadRequest != null) {
            hdrct |= HDRCT_R;
        }
        out.writeInt(controlWord(error, hdrct));
        if (terminatedDdpHeader != null) {
            out.writeShort(Math.max(ddpSegmentLength, 0));
            out.writeBytes(terminatedDdpHeader, terminatedDdpHeader.readerIndex(), terminatedDdpHeader.readableBytes());
        }
        if (terminatedReadRequest != null) {
            out.writeBytes(terminatedReadRequest, terminatedReadRequest.readerIndex(), ReadRequestHeader.LENGTH);
        }
    }

    /**
     * The HdrCt bits as Linux siw 6.1 lays them out (little-endian bitfields: M, D and R in the
     * three low bits of byte 2), returned in the RFC's positions ({@link #HDRCT_M}, ...).
     */
    public static int siwHdrct(ByteBuf buf, int offset) {
        int byte2 = buf.getUnsignedByte(offset + HDRCT_OFFSET);
        return ((byte2 & 0x01) != 0 ? HDRCT_M : 0) | ((byte2 & 0x02) != 0 ? HDRCT_D : 0)
                | ((byte2 & 0x04) != 0 ? HDRCT_R : 0);
    }

    /** The reserved bits as Linux siw 6.1 lays them out: the five high bits of byte 2 and byte 3. */
    public static int siwReserved(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + HDRCT_OFFSET) >>> 3 | buf.getUnsignedByte(offset + HDRCT_OFFSET + 1) << 5;
    }

    /**
     * {@code true} when the control word makes no sense in the RFC layout but does in the layout
     * Linux siw 6.1 sends (nibbles of byte 0 swapped, HdrCt in the low bits of byte 2).
     */
    public static boolean looksLikeSiwLayout(ByteBuf buf, int offset) {
        int byte0 = buf.getUnsignedByte(offset);
        int byte2 = buf.getUnsignedByte(offset + HDRCT_OFFSET);
        int code = errorCode(buf, offset);
        boolean rfcValid = TerminateError.valueOf(byte0 >>> 4, byte0 & 0xF, code) != null && (byte2 & 0x1F) == 0;
        boolean siwValid = TerminateError.valueOf(byte0 & 0xF, byte0 >>> 4, code) != null && (byte2 & 0xF8) == 0;
        return !rfcValid && siwValid;
    }
}
