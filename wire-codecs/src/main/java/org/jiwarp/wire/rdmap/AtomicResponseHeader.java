package org.jiwarp.wire.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The Atomic Response header (RFC 7306 section 5.2.2), the 12-octet payload of an untagged message on
 * queue 3: which request it answers, and the value the target held before the operation.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 Original Request Identifier                   |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |              Original Remote Data Value (64)                  |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class AtomicResponseHeader {

    public static final int ORIGINAL_REQUEST_IDENTIFIER_OFFSET = 0;
    public static final int ORIGINAL_REMOTE_DATA_VALUE_OFFSET = 4;
    /** Length of the header. */
    public static final int LENGTH = 12;

    private AtomicResponseHeader() {
    }

    public static int originalRequestIdentifier(ByteBuf buf, int offset) {
        return buf.getInt(offset + ORIGINAL_REQUEST_IDENTIFIER_OFFSET);
    }

    public static long originalRemoteDataValue(ByteBuf buf, int offset) {
        return buf.getLong(offset + ORIGINAL_REMOTE_DATA_VALUE_OFFSET);
    }

    /** Appends an Atomic Response header to {@code out}. */
    public static void write(ByteBuf out, int originalRequestIdentifier, long originalRemoteDataValue) {
        out.writeInt(originalRequestIdentifier);
        out.writeLong(originalRemoteDataValue);
    }
}
