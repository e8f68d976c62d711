package org.jiwarp.wire.perftest;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;

/**
 * perftest's {@code struct pingpong_dest}: what each side tells the other about its queue pair and
 * buffer, in every {@code ctx_hand_shake}. The C struct is sent as it lies in memory on LP64
 * (natural alignment, 56 octets), each field converted to big-endian ({@code HAVE_ENDIAN}):
 *
 * <pre>
 *    0  lid        int       (0 on iWARP)
 *    4  out_reads  int       outstanding RDMA Reads (ib_read_bw), else 1
 *    8  qpn        int       queue pair number
 *   12  psn        int       random 24 bits (unused over rdma_cm)
 *   16  rkey       unsigned  the STag of the peer's buffer (ib_send_bw on iWARP: of its credit word)
 *   20  (padding, 4 octets: whatever the stack held; jiwarp sends zeros)
 *   24  vaddr      u64       where to write or read (the upper half of the buffer; the credit word)
 *   32  gid        16 octets raw
 *   48  srqn       unsigned  (unused here; the receiver does not convert it)
 *   52  gid_index  int       (likewise; the receiver keeps its own)
 * </pre>
 *
 * @param rkey  an STag, unsigned
 * @param vaddr a Tagged Offset, unsigned
 */
public record PingpongDest(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, byte[] gid, int srqn,
        int gidIndex) {

    public static final int LENGTH = 56;
    public static final int GID_LENGTH = 16;

    public PingpongDest {
        if (gid.length != GID_LENGTH) {
            throw new IllegalArgumentException("a GID has 16 octets, not " + gid.length);
        }
        gid = gid.clone();
    }

    /** All zeros: what perftest sends in the two handshakes around the test connection's setup. */
    public static PingpongDest zero() {
        return new PingpongDest(0, 0, 0, 0, 0, 0, new byte[GID_LENGTH], 0, 0);
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        b.putInt(0, lid).putInt(4, outReads).putInt(8, qpn).putInt(12, psn).putInt(16, rkey)
                .putLong(24, vaddr).put(32, gid).putInt(48, srqn).putInt(52, gidIndex);
        return b.array();
    }

    public static PingpongDest decode(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("struct pingpong_dest has " + LENGTH + " octets, not " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[] gid = new byte[GID_LENGTH];
        b.get(32, gid);
        return new PingpongDest(b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12), b.getInt(16), b.getLong(24), gid,
                b.getInt(48), b.getInt(52));
    }

    /** perftest's {@code ctx_print_pingpong_data} line (BASIC_ADDR_FMT, then OUT for reads, RKey/VAddr for RDMA). */
    public String describe(String side, Verb verb) {
        StringBuilder line = new StringBuilder(" " + side + " address: LID " + hex(lid, 4) + " QPN " + hex(qpn, 6)
                + " PSN " + hex(psn, 6));
        if (verb == Verb.READ) {
            line.append(" OUT ").append(hex(outReads, 4));
        }
        if (verb != Verb.SEND) {
            line.append(" RKey ").append(hex(Integer.toUnsignedLong(rkey), 8)).append(" VAddr ").append(hex(vaddr, 16));
        }
        return line.toString();
    }

    /** C's {@code %#0<width>x}: "0x" and zero padding within the width, but a bare 0 has no "0x". */
    private static String hex(long value, int width) {
        String digits = Long.toHexString(value);
        int room = value == 0 ? width : width - 2;
        String padded = "0".repeat(Math.max(0, room - digits.length())) + digits;
        return value == 0 ? padded : "0x" + padded;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PingpongDest d && lid == d.lid && outReads == d.outReads && qpn == d.qpn && psn == d.psn
                && rkey == d.rkey && vaddr == d.vaddr && Arrays.equals(gid, d.gid) && srqn == d.srqn
                && gidIndex == d.gidIndex;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gid) * 31 + Long.hashCode(vaddr) + rkey + qpn;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "PingpongDest{qpn=%d, psn=0x%06x, rkey=0x%08x, vaddr=0x%x, out_reads=%d}",
                qpn, psn, rkey, vaddr, outReads);
    }
}
