package org.jiwarp.wire.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The Atomic Request header (RFC 7306 section 5.2.1), the 52-octet payload of an untagged message on
 * queue 1 (shared with RDMA Read Requests). Offsets count from the first byte after the untagged
 * DDP header. Wireshark names the fields {@code iwarp_rdma.atomic.*}.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Reserved (28)                     | AOp   |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                      Request Identifier                       |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                          Remote STag                          |  8
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                   Remote Tagged Offset (64)                   | 12
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                  Add or Swap Data (64)                        | 20
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                  Add or Swap Mask (64)                        | 28
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Compare Data (64)                         | 36
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Compare Mask (64)                         | 44
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class AtomicRequestHeader {

    public static final int OPERATION_OFFSET = 0;
    public static final int REQUEST_IDENTIFIER_OFFSET = 4;
    public static final int REMOTE_STAG_OFFSET = 8;
    public static final int REMOTE_TAGGED_OFFSET_OFFSET = 12;
    public static final int DATA_OFFSET = 20;
    public static final int DATA_MASK_OFFSET = 28;
    public static final int COMPARE_DATA_OFFSET = 36;
    public static final int COMPARE_MASK_OFFSET = 44;
    /** Length of the header. */
    public static final int LENGTH = 52;
    /** The Atomic Operation field: the low 4 bits of the first word. */
    public static final int OPERATION_MASK = 0xF;

    private AtomicRequestHeader() {
    }

    /** The 4-bit Atomic Operation code (see {@link AtomicOperation#valueOf}). */
    public static int operationCode(ByteBuf buf, int offset) {
        return buf.getInt(offset + OPERATION_OFFSET) & OPERATION_MASK;
    }

    /** The 28 reserved bits above the Atomic Operation field. */
    public static int reserved(ByteBuf buf, int offset) {
        return buf.getInt(offset + OPERATION_OFFSET) >>> 4;
    }

    public static int requestIdentifier(ByteBuf buf, int offset) {
        return buf.getInt(offset + REQUEST_IDENTIFIER_OFFSET);
    }

    public static int remoteStag(ByteBuf buf, int offset) {
        return buf.getInt(offset + REMOTE_STAG_OFFSET);
    }

    public static long remoteTaggedOffset(ByteBuf buf, int offset) {
        return buf.getLong(offset + REMOTE_TAGGED_OFFSET_OFFSET);
    }

    /** Add Data (Fetch and Add) or Swap Data (Swap, Compare and Swap). */
    public static long data(ByteBuf buf, int offset) {
        return buf.getLong(offset + DATA_OFFSET);
    }

    /** Add Mask or Swap Mask. */
    public static long dataMask(ByteBuf buf, int offset) {
        return buf.getLong(offset + DATA_MASK_OFFSET);
    }

    public static long compareData(ByteBuf buf, int offset) {
        return buf.getLong(offset + COMPARE_DATA_OFFSET);
    }

    public static long compareMask(ByteBuf buf, int offset) {
        return buf.getLong(offset + COMPARE_MASK_OFFSET);
    }

    /** Appends an Atomic Request header (reserved bits zero) to {@code out}. */
    public static void write(ByteBuf out, int operationCode, int requestIdentifier, int remoteStag,
            long remoteTaggedOffset, long data, long dataMask, long compareData, long compareMask) {
        out.writeInt(operationCode & OPERATION_MASK);
        out.writeInt(requestIdentifier);
        out.writeInt(remoteStag);
        out.writeLong(remoteTaggedOffset);
        out.writeLong(data);
        out.writeLong(dataMask);
        out.writeLong(compareData);
        out.writeLong(compareMask);
    }
}
