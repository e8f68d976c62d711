package org.jiwarp.wire.ddp;

import io.netty.buffer.ByteBuf;

/**
 * DDP segment headers (RFC 5041 section 4): static accessors over a buffer and the offset of the
 * header's first byte (the first byte of the ULPDU inside an FPDU).
 *
 * <pre>
 *  Control byte:   0 1 2 3 4 5 6 7
 *                 +-+-+-+-+-+-+-+-+
 *                 |T|L| Rsvd  | DV|     T tagged, L last, Rsvd = 0, DV = 01
 *                 +-+-+-+-+-+-+-+-+
 *
 *  Tagged buffer model (14 bytes, RFC 5041 section 4.2):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |T|L| Rsvd  | DV|   RsvdULP     |            STag               |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |     STag (cont.)              |    Tagged Offset (64) ...     |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *  Untagged buffer model (18 bytes, RFC 5041 section 4.3):
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |T|L| Rsvd  | DV|            RsvdULP (40 bits) ...              |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  ... RsvdULP  |               QN (32) ...                     |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  then MSN (32) at offset 10, MO (32) at offset 14             |
 * </pre>
 *
 * <p>RDMAP owns the RsvdULP bits: its control byte is byte 1 (see
 * {@code org.jiwarp.wire.rdmap.RdmapHeaders}).
 */
public final class DdpHeaders {

    public static final int CONTROL_OFFSET = 0;
    public static final int RSVD_ULP_OFFSET = 1;
    /** Tagged: offset of the STag. */
    public static final int STAG_OFFSET = 2;
    /** Tagged: offset of the 64-bit Tagged Offset. */
    public static final int TAGGED_OFFSET_OFFSET = 6;
    /** Untagged: offset of the Queue Number. */
    public static final int QN_OFFSET = 6;
    /** Untagged: offset of the Message Sequence Number. */
    public static final int MSN_OFFSET = 10;
    /** Untagged: offset of the Message Offset. */
    public static final int MO_OFFSET = 14;

    public static final int TAGGED_HEADER_LENGTH = 14;
    public static final int UNTAGGED_HEADER_LENGTH = 18;
    /** Untagged RsvdULP is 40 bits. */
    public static final int UNTAGGED_RSVD_ULP_LENGTH = 5;

    public static final int TAGGED_FLAG = 0x80;
    public static final int LAST_FLAG = 0x40;
    public static final int RESERVED_MASK = 0x3C;
    public static final int VERSION_MASK = 0x03;
    /** RFC 5041 section 4.1: "DV ... MUST be set to 01b". */
    public static final int DDP_VERSION = 1;

    /** RDMAP's untagged queues (RFC 5040 section 5.1): Send and its variants. */
    public static final int QN_SEND = 0;
    /** RDMA Read Requests; RFC 7306 Atomic Requests share it (and the IRD/ORD accounting). */
    public static final int QN_READ_REQUEST = 1;
    public static final int QN_TERMINATE = 2;
    /** RFC 7306: Atomic Responses. */
    public static final int QN_ATOMIC_RESPONSE = 3;

    private DdpHeaders() {
    }

    public static int control(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + CONTROL_OFFSET);
    }

    public static boolean tagged(ByteBuf buf, int offset) {
        return (control(buf, offset) & TAGGED_FLAG) != 0;
    }

    public static boolean last(ByteBuf buf, int offset) {
        return (control(buf, offset) & LAST_FLAG) != 0;
    }

    /** The four reserved control bits, shifted down. */
    public static int reserved(ByteBuf buf, int offset) {
        return (control(buf, offset) & RESERVED_MASK) >>> 2;
    }

    public static int version(ByteBuf buf, int offset) {
        return control(buf, offset) & VERSION_MASK;
    }

    /** Header length by the Tagged flag: 14 or 18. */
    public static int headerLength(ByteBuf buf, int offset) {
        return tagged(buf, offset) ? TAGGED_HEADER_LENGTH : UNTAGGED_HEADER_LENGTH;
    }

    public static int stag(ByteBuf buf, int offset) {
        return buf.getInt(offset + STAG_OFFSET);
    }

    public static long taggedOffset(ByteBuf buf, int offset) {
        return buf.getLong(offset + TAGGED_OFFSET_OFFSET);
    }

    /** Queue number, unsigned 32-bit. */
    public static long qn(ByteBuf buf, int offset) {
        return buf.getUnsignedInt(offset + QN_OFFSET);
    }

    /** Message sequence number, unsigned 32-bit. */
    public static long msn(ByteBuf buf, int offset) {
        return buf.getUnsignedInt(offset + MSN_OFFSET);
    }

    /** Message offset, unsigned 32-bit. */
    public static long mo(ByteBuf buf, int offset) {
        return buf.getUnsignedInt(offset + MO_OFFSET);
    }

    /** The control byte for DDP version 1 with the given flags. */
    public static int controlByte(boolean tagged, boolean last) {
        return (tagged ? TAGGED_FLAG : 0) | (last ? LAST_FLAG : 0) | DDP_VERSION;
    }

    /** The control byte from raw field values (for tests and the adversarial peer). */
    public static int controlByte(boolean tagged, boolean last, int reserved, int version) {
        return (tagged ? TAGGED_FLAG : 0) | (last ? LAST_FLAG : 0) | (reserved & 0xF) << 2 | (version & VERSION_MASK);
    }

    /** Appends a 14-byte tagged header; {@code rsvdUlp} is the RDMAP control byte. */
    public static void writeTagged(ByteBuf out, boolean last, int rsvdUlp, int stag, long taggedOffset) {
        writeTagged(out, controlByte(true, last), rsvdUlp, stag, taggedOffset);
    }

    /** Appends a 14-byte tagged header with an explicit control byte. */
    public static void writeTagged(ByteBuf out, int control, int rsvdUlp, int stag, long taggedOffset) {
        out.writeByte(control);
        out.writeByte(rsvdUlp);
        out.writeInt(stag);
        out.writeLong(taggedOffset);
    }

    /**
     * Appends an 18-byte untagged header; {@code rsvdUlpControl} is RsvdULP's first byte (the RDMAP
     * control byte) and {@code rsvdUlpWord} its last 32 bits (reserved, or the Invalidate STag).
     */
    public static void writeUntagged(ByteBuf out, boolean last, int rsvdUlpControl, int rsvdUlpWord, long qn,
            long msn, long mo) {
        writeUntagged(out, controlByte(false, last), rsvdUlpControl, rsvdUlpWord, qn, msn, mo);
    }

    /** Appends an 18-byte untagged header with an explicit control byte. */
    public static void writeUntagged(ByteBuf out, int control, int rsvdUlpControl, int rsvdUlpWord, long qn,
            long msn, long mo) {
        out.writeByte(control);
        out.writeByte(rsvdUlpControl);
        out.writeInt(rsvdUlpWord);
        out.writeInt((int) qn);
        out.writeInt((int) msn);
        out.writeInt((int) mo);
    }
}
