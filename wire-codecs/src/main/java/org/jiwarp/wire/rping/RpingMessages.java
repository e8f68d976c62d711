package org.jiwarp.wire.rping;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * rping's application protocol (rdma-core's {@code librdmacm/examples/rping.c}), as a peer must
 * speak it byte for byte.
 *
 * <pre>
 *   client                                   server
 *   Send  {start_buf addr, rkey, size}  --&gt;
 *                                       &lt;--  RDMA Read of start_buf into rdma_buf
 *                                       &lt;--  Send (16 octets, "go ahead")
 *   Send  {rdma_buf addr, rkey, size}   --&gt;
 *                                       &lt;--  RDMA Write of rdma_buf (strlen + 1 octets) into the client's rdma_buf
 *                                       &lt;--  Send (16 octets, "go ahead")
 *   -V: start_buf and rdma_buf must be equal; then the next ping
 * </pre>
 *
 * <p>Every Send carries {@code struct rping_rdma_info}: {@code __be64 buf; __be32 rkey; __be32 size},
 * 16 octets; a receive of any other length is "bogus data". The client fills {@code start_buf} with
 * {@code "rdma-ping-%d: "} and then letters from a rotating start, 'A' to 'z', and a final NUL.
 */
public final class RpingMessages {

    /** {@code sizeof(struct rping_rdma_info)}. */
    public static final int INFO_LENGTH = 16;
    /** rping's default port. */
    public static final int DEFAULT_PORT = 7174;
    /** rping's default ping size. */
    public static final int DEFAULT_SIZE = 64;
    /** {@code RPING_MIN_BUFSIZE}: {@code sizeof("2147483647") + sizeof("rdma-ping-%d: ")}. */
    public static final int MIN_SIZE = 11 + 15;
    /** {@code RPING_BUFSIZE - 1}. */
    public static final int MAX_SIZE = 64 * 1024 - 1;

    private RpingMessages() {
    }

    /** Writes {@code struct rping_rdma_info} at index 0 of {@code buf}. */
    public static void writeInfo(ByteBuf buf, long address, int rkey, int size) {
        buf.setLong(0, address);
        buf.setInt(8, rkey);
        buf.setInt(12, size);
    }

    public static long infoAddress(ByteBuf buf) {
        return buf.getLong(0);
    }

    public static int infoRkey(ByteBuf buf) {
        return buf.getInt(8);
    }

    public static int infoSize(ByteBuf buf) {
        return buf.getInt(12);
    }

    /** The rotating start letter of ping {@code ping}: 'A' (65) to 'z' (122), one step per ping. */
    public static int startLetter(long ping) {
        return (int) (65 + ping % (122 - 65 + 1));
    }

    /** Fills {@code size} octets of {@code buf} the way the rping client fills start_buf for ping {@code ping}. */
    public static void fillPing(ByteBuf buf, int size, long ping) {
        byte[] prefix = String.format("rdma-ping-%d: ", ping).getBytes(StandardCharsets.US_ASCII);
        int cc = Math.min(prefix.length, size - 1);
        buf.setBytes(0, prefix, 0, cc);
        int c = startLetter(ping);
        for (int i = cc; i < size; i++) {
            buf.setByte(i, c);
            c++;
            if (c > 122) {
                c = 65;
            }
        }
        buf.setByte(size - 1, 0);
    }

    /** The C string at the start of {@code buf} (up to its first NUL or {@code limit} octets). */
    public static String cString(ByteBuf buf, int limit) {
        int length = cStringLength(buf, limit);
        return buf.toString(0, length, StandardCharsets.US_ASCII);
    }

    /** {@code strlen} of the buffer, bounded by {@code limit}. */
    public static int cStringLength(ByteBuf buf, int limit) {
        int end = buf.indexOf(0, limit, (byte) 0);
        return end < 0 ? limit : end;
    }
}
