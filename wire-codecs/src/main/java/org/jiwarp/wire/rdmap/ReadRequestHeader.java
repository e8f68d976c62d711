package org.jiwarp.wire.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The RDMA Read Request header (RFC 5040 section 4.4), the 28-byte payload of an untagged message
 * on queue 1. Offsets count from the first byte after the untagged DDP header.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                         Data Sink STag                        |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                  Data Sink Tagged Offset (64)                 |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                    RDMA Read Message Size                     | 12
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        Data Source STag                       | 16
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 Data Source Tagged Offset (64)                | 20
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class ReadRequestHeader {

    public static final int SINK_STAG_OFFSET = 0;
    public static final int SINK_TAGGED_OFFSET_OFFSET = 4;
    public static final int READ_SIZE_OFFSET = 12;
    public static final int SOURCE_STAG_OFFSET = 16;
    public static final int SOURCE_TAGGED_OFFSET_OFFSET = 20;
    /** Length of the header. */
    public static final int LENGTH = 28;

    private ReadRequestHeader() {
    }

    public static int sinkStag(ByteBuf buf, int offset) {
        return buf.getInt(offset + SINK_STAG_OFFSET);
    }

    public static long sinkTaggedOffset(ByteBuf buf, int offset) {
        return buf.getLong(offset + SINK_TAGGED_OFFSET_OFFSET);
    }

    /** The RDMA Read Message Size, an unsigned 32-bit value. */
    public static long readSize(ByteBuf buf, int offset) {
        return buf.getUnsignedInt(offset + READ_SIZE_OFFSET);
    }

    public static int sourceStag(ByteBuf buf, int offset) {
        return buf.getInt(offset + SOURCE_STAG_OFFSET);
    }

    public static long sourceTaggedOffset(ByteBuf buf, int offset) {
        return buf.getLong(offset + SOURCE_TAGGED_OFFSET_OFFSET);
    }

    /** Appends a Read Request header to {@code out}. */
    public static void write(ByteBuf out, int sinkStag, long sinkTaggedOffset, long readSize, int sourceStag,
            long sourceTaggedOffset) {
        out.writeInt(sinkStag);
        out.writeLong(sinkTaggedOffset);
        out.writeInt((int) readSize);
        out.writeInt(sourceStag);
        out.writeLong(sourceTaggedOffset);
    }
}
