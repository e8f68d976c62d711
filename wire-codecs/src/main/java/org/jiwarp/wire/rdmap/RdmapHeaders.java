package org.jiwarp.wire.rdmap;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.ddp.DdpHeaders;

/**
 * The RDMAP fields that live inside the DDP header's RsvdULP bits (RFC 5040 section 4.2): the
 * RDMAP control byte, and for Send with Invalidate the STag to invalidate (RFC 5040 section 4.3).
 *
 * <pre>
 *  DDP header byte 1, the RDMAP control field:
 *   0 1 2 3 4 5 6 7
 *  +-+-+-+-+-+-+-+-+
 *  |RV |Rsv| Opcode|      RV = 01 (RDMAP version 1), Rsv = 0
 *  +-+-+-+-+-+-+-+-+
 *
 *  Untagged header bytes 2..5 (RsvdULP[8:39]): reserved, or the Invalidate STag.
 * </pre>
 *
 * <p>Every accessor takes the offset of the DDP header's first byte.
 */
public final class RdmapHeaders {

    /** Offset of the RDMAP control byte in the DDP header. */
    public static final int CONTROL_OFFSET = 1;
    /** Offset of the Invalidate STag (or the reserved word) in an untagged DDP header. */
    public static final int INVALIDATE_STAG_OFFSET = 2;

    public static final int VERSION_MASK = 0xC0;
    public static final int VERSION_SHIFT = 6;
    public static final int RESERVED_MASK = 0x30;
    public static final int OPCODE_MASK = 0x0F;
    /** RFC 5040 section 4.2: "RDMA Version: MUST be set to 01b". */
    public static final int RDMAP_VERSION = 1;

    private RdmapHeaders() {
    }

    /** The whole control byte. */
    public static int control(ByteBuf buf, int ddpOffset) {
        return buf.getUnsignedByte(ddpOffset + CONTROL_OFFSET);
    }

    public static int version(ByteBuf buf, int ddpOffset) {
        return (control(buf, ddpOffset) & VERSION_MASK) >>> VERSION_SHIFT;
    }

    public static int reserved(ByteBuf buf, int ddpOffset) {
        return (control(buf, ddpOffset) & RESERVED_MASK) >>> 4;
    }

    public static int opcodeCode(ByteBuf buf, int ddpOffset) {
        return control(buf, ddpOffset) & OPCODE_MASK;
    }

    /** The opcode, or {@code null} when reserved. */
    public static RdmapOpcode opcode(ByteBuf buf, int ddpOffset) {
        return RdmapOpcode.valueOf(opcodeCode(buf, ddpOffset));
    }

    /** The STag a Send with Invalidate asks the Data Sink to invalidate. */
    public static int invalidateStag(ByteBuf buf, int ddpOffset) {
        return buf.getInt(ddpOffset + INVALIDATE_STAG_OFFSET);
    }

    /** The control byte for a version-1 header with the given opcode. */
    public static int controlByte(RdmapOpcode opcode) {
        return RDMAP_VERSION << VERSION_SHIFT | opcode.code();
    }

    /** The control byte for arbitrary field values (for tests and the adversarial peer). */
    public static int controlByte(int version, int reserved, int opcode) {
        return (version & 3) << VERSION_SHIFT | (reserved & 3) << 4 | (opcode & OPCODE_MASK);
    }

    /** The DDP header length of a message with this opcode: 14 tagged, 18 untagged. */
    public static int ddpHeaderLength(RdmapOpcode opcode) {
        return opcode.tagged() ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH;
    }
}
