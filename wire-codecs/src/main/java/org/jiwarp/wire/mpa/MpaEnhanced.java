package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;

/**
 * The RFC 6581 (section 3) enhanced connection setup words that open the private data of a Request
 * or Reply sent with the Enhanced bit and Rev 2.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |P|S|         IRD (14)          |W|R|          ORD (14)         |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   P peer-to-peer mode, S zero-length Send RTR,
 *   W zero-length RDMA Write RTR, R zero-length RDMA Read RTR
 * </pre>
 *
 * <p>ULP private data follows the four bytes.
 */
public final class MpaEnhanced {

    public static final int IRD_OFFSET = 0;
    public static final int ORD_OFFSET = 2;
    /** Length of the IRD and ORD words. */
    public static final int LENGTH = 4;

    /** The 14-bit IRD or ORD value. */
    public static final int VALUE_MASK = 0x3FFF;
    /** IRD word: peer-to-peer mode. */
    public static final int PEER_TO_PEER = 0x8000;
    /** IRD word: a zero-length Send may serve as the ready-to-receive frame. */
    public static final int SEND_RTR = 0x4000;
    /** ORD word: a zero-length RDMA Write may serve as the ready-to-receive frame. */
    public static final int WRITE_RTR = 0x8000;
    /** ORD word: a zero-length RDMA Read may serve as the ready-to-receive frame. */
    public static final int READ_RTR = 0x4000;

    private MpaEnhanced() {
    }

    /** The whole IRD word, flags included; {@code offset} is the first private data byte. */
    public static int irdWord(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + IRD_OFFSET);
    }

    /** The whole ORD word, flags included. */
    public static int ordWord(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + ORD_OFFSET);
    }

    public static int ird(ByteBuf buf, int offset) {
        return irdWord(buf, offset) & VALUE_MASK;
    }

    public static int ord(ByteBuf buf, int offset) {
        return ordWord(buf, offset) & VALUE_MASK;
    }

    public static boolean peerToPeer(ByteBuf buf, int offset) {
        return (irdWord(buf, offset) & PEER_TO_PEER) != 0;
    }

    public static boolean sendRtr(ByteBuf buf, int offset) {
        return (irdWord(buf, offset) & SEND_RTR) != 0;
    }

    public static boolean writeRtr(ByteBuf buf, int offset) {
        return (ordWord(buf, offset) & WRITE_RTR) != 0;
    }

    public static boolean readRtr(ByteBuf buf, int offset) {
        return (ordWord(buf, offset) & READ_RTR) != 0;
    }

    /** Appends the two words. IRD and ORD are clamped to 0..0x3FFF. */
    public static void write(ByteBuf out, int ird, int ord, boolean peerToPeer, boolean sendRtr, boolean writeRtr,
            boolean readRtr) {
        out.writeShort((peerToPeer ? PEER_TO_PEER : 0) | (sendRtr ? SEND_RTR : 0) | clamp(ird));
        out.writeShort((writeRtr ? WRITE_RTR : 0) | (readRtr ? READ_RTR : 0) | clamp(ord));
    }

    private static int clamp(int value) {
        return Math.max(0, Math.min(value, VALUE_MASK));
    }
}
