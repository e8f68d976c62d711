package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * MPA Request and Reply frames (RFC 5044 section 7.1; RFC 6581 section 3 for the Enhanced bit).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                                                               |
 *  +         Key (16 bytes): "MPA ID Req Frame" or                 +  0
 *  |                         "MPA ID Rep Frame"                    |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |M|C|R|E| Res   |     Rev       |          PD_Length            | 16
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  ~                    Private Data (PD_Length bytes)             ~ 20
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>M: in a Request, the initiator wants markers from the responder; in a Reply, the responder
 * wants markers from the initiator. C: CRC in both directions if either sets it. R: reject (Reply
 * only). E: RFC 6581 enhanced connection setup, with Rev 2 and the IRD/ORD words of
 * {@link MpaEnhanced} at the start of the private data.
 */
public final class MpaFrames {

    public static final int KEY_OFFSET = 0;
    public static final int KEY_LENGTH = 16;
    public static final int FLAGS_OFFSET = 16;
    public static final int REVISION_OFFSET = 17;
    public static final int PRIVATE_DATA_LENGTH_OFFSET = 18;
    public static final int PRIVATE_DATA_OFFSET = 20;
    /** Length of the fixed part, before the private data. */
    public static final int HEADER_LENGTH = 20;

    public static final int MARKER_FLAG = 0x80;
    public static final int CRC_FLAG = 0x40;
    public static final int REJECT_FLAG = 0x20;
    /** RFC 6581 section 3: the Enhanced connection setup bit, the high bit of RFC 5044's Res. */
    public static final int ENHANCED_FLAG = 0x10;
    /** The reserved bits as RFC 5044 defines them (Wireshark's {@code iwarp_mpa.res}). */
    public static final int RESERVED_MASK_RFC5044 = 0x1F;
    /** The bits still reserved once RFC 6581 takes the Enhanced bit. */
    public static final int RESERVED_MASK = 0x0F;

    /** RFC 5044 section 7.1: "Private Data Length ... MUST NOT be larger than 512". */
    public static final int MAX_PRIVATE_DATA_LENGTH = 512;

    /** The revision RFC 5044 defines. */
    public static final int REVISION_1 = 1;
    /** The revision RFC 6581 defines (enhanced connection setup). */
    public static final int REVISION_2 = 2;

    /** "MPA ID Req Frame" as big-endian longs, compared without allocation. */
    private static final long KEY_HIGH = 0x4D50412049442052L;
    private static final long REQUEST_KEY_LOW = 0x6571204672616D65L;
    private static final long REPLY_KEY_LOW = 0x6570204672616D65L;

    private static final byte[] REQUEST_KEY = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REPLY_KEY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);

    private MpaFrames() {
    }

    /** A copy of the Request key. */
    public static byte[] requestKey() {
        return REQUEST_KEY.clone();
    }

    /** A copy of the Reply key. */
    public static byte[] replyKey() {
        return REPLY_KEY.clone();
    }

    /** {@code true} when 16 bytes at {@code offset} are the Request key. */
    public static boolean isRequest(ByteBuf buf, int offset) {
        return buf.getLong(offset) == KEY_HIGH && buf.getLong(offset + 8) == REQUEST_KEY_LOW;
    }

    /** {@code true} when 16 bytes at {@code offset} are the Reply key. */
    public static boolean isReply(ByteBuf buf, int offset) {
        return buf.getLong(offset) == KEY_HIGH && buf.getLong(offset + 8) == REPLY_KEY_LOW;
    }

    public static int flags(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + FLAGS_OFFSET);
    }

    public static boolean markerFlag(ByteBuf buf, int offset) {
        return (flags(buf, offset) & MARKER_FLAG) != 0;
    }

    public static boolean crcFlag(ByteBuf buf, int offset) {
        return (flags(buf, offset) & CRC_FLAG) != 0;
    }

    public static boolean rejectFlag(ByteBuf buf, int offset) {
        return (flags(buf, offset) & REJECT_FLAG) != 0;
    }

    public static boolean enhancedFlag(ByteBuf buf, int offset) {
        return (flags(buf, offset) & ENHANCED_FLAG) != 0;
    }

    /** The bits RFC 6581 leaves reserved (must be zero). */
    public static int reserved(ByteBuf buf, int offset) {
        return flags(buf, offset) & RESERVED_MASK;
    }

    public static int revision(ByteBuf buf, int offset) {
        return buf.getUnsignedByte(offset + REVISION_OFFSET);
    }

    public static int privateDataLength(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + PRIVATE_DATA_LENGTH_OFFSET);
    }

    /** Total frame length once the fixed header is readable. */
    public static int frameLength(ByteBuf buf, int offset) {
        return HEADER_LENGTH + privateDataLength(buf, offset);
    }

    /**
     * Appends a Request or Reply frame.
     *
     * @param flags a combination of {@link #MARKER_FLAG}, {@link #CRC_FLAG}, {@link #REJECT_FLAG},
     *     {@link #ENHANCED_FLAG} (and, for tests, reserved bits)
     * @param privateData readable bytes become the private data (not consumed); may be null
     */
    public static void write(ByteBuf out, boolean reply, int flags, int revision, ByteBuf privateData) {
        out.writeBytes(reply ? REPLY_KEY : REQUEST_KEY);
        out.writeByte(flags);
        out.writeByte(revision);
        int length = privateData == null ? 0 : privateData.readableBytes();
        out.writeShort(length);
        if (length > 0) {
            out.writeBytes(privateData, privateData.readerIndex(), length);
        }
    }
}
