package org.jiwarp.cli.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One benchmark run as both ends must agree on it: the operation, bandwidth or latency, the message
 * size, the send queue depth and how often work is signaled. The client carries it to the server in
 * the MPA Request's private data (and, for the TCP baseline, in the first bytes of the stream), so a
 * {@code jiwarp bench --server} needs no options of its own.
 *
 * @param op           RDMA Write, RDMA Read or Send
 * @param mode         bandwidth (a stream of {@code txDepth} outstanding messages) or latency (ping-pong)
 * @param size         octets per message
 * @param txDepth      messages outstanding per queue pair (perftest's {@code -t})
 * @param cqMod        one message in {@code cqMod} is signaled (perftest's {@code -Q}); the rest
 *                     retire when a later signaled one completes, as in verbs
 * @param remoteAddress the client's buffer (write latency: where the server writes back), else 0
 * @param remoteStag   the STag of that buffer, else 0
 */
public record BenchSpec(BenchOp op, BenchMode mode, int size, int txDepth, int cqMod, long remoteAddress,
        int remoteStag) {

    static final byte[] MAGIC = "JWB1".getBytes(StandardCharsets.US_ASCII);
    static final int ENCODED_LENGTH = 4 + 1 + 1 + 4 + 4 + 4 + 8 + 4;

    public BenchSpec {
        if (size < 1) {
            throw new IllegalArgumentException("message size must be positive: " + size);
        }
        if (txDepth < 1 || cqMod < 1) {
            throw new IllegalArgumentException("send queue depth and CQ moderation must be positive");
        }
    }

    /** The Read limits both ends ask for (RFC 6581 IRD/ORD); Linux siw caps them at 128. */
    public int readCredits() {
        return Math.min(txDepth, 128);
    }

    /** This spec with the client's buffer named. */
    public BenchSpec withRemote(long address, int stag) {
        return new BenchSpec(op, mode, size, txDepth, cqMod, address, stag);
    }

    public byte[] encode() {
        ByteBuffer out = ByteBuffer.allocate(ENCODED_LENGTH);
        out.put(MAGIC).put((byte) op.ordinal()).put((byte) mode.ordinal()).putInt(size).putInt(txDepth)
                .putInt(cqMod).putLong(remoteAddress).putInt(remoteStag);
        return out.array();
    }

    /** Reads what {@link #encode()} wrote; a clear exception for anything else. */
    public static BenchSpec decode(byte[] bytes) {
        if (bytes == null || bytes.length < ENCODED_LENGTH
                || !java.util.Arrays.equals(bytes, 0, 4, MAGIC, 0, 4)) {
            throw new IllegalArgumentException("not a jiwarp bench request (" + (bytes == null ? 0 : bytes.length)
                    + " octets of private data)");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, 4, ENCODED_LENGTH - 4);
        int op = in.get();
        int mode = in.get();
        if (op < 0 || op >= BenchOp.values().length || mode < 0 || mode >= BenchMode.values().length) {
            throw new IllegalArgumentException("unknown bench operation " + op + " or mode " + mode);
        }
        return new BenchSpec(BenchOp.values()[op], BenchMode.values()[mode], in.getInt(), in.getInt(), in.getInt(),
                in.getLong(), in.getInt());
    }

    /** The server's answer in the MPA Reply: where its buffer is. */
    static byte[] encodeBuffer(long address, int stag, long length) {
        return ByteBuffer.allocate(4 + 8 + 4 + 8).put(MAGIC).putLong(address).putInt(stag).putLong(length).array();
    }

    /** {address, stag, length} from {@link #encodeBuffer}. */
    static long[] decodeBuffer(byte[] bytes) {
        if (bytes == null || bytes.length < 24 || !java.util.Arrays.equals(bytes, 0, 4, MAGIC, 0, 4)) {
            throw new IllegalStateException("the server's reply names no buffer: is it a jiwarp bench --server?");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, 4, 20);
        return new long[] {in.getLong(), in.getInt(), in.getLong()};
    }
}
