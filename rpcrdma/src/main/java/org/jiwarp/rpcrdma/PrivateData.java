package org.jiwarp.rpcrdma;

import java.nio.ByteBuffer;

/**
 * RPC-over-RDMA version 1's connection private data (RFC 8797 section 4): the magic
 * {@code 0xf6ab0e18}, the version (1), flags (bit 0: the sender accepts Remote Invalidation, that
 * is Send with Invalidate of its chunk handles), and the sender's inline send and receive sizes,
 * each encoded in 1 KiB units minus one (RFC 8797 section 4.2: so 0 is 1 KiB, the default of RFC
 * 8166 section 3.3.3, and 3 is 4 KiB). It follows MPA's own enhanced-setup IRD/ORD words in the
 * MPA Request and Reply.
 */
public record PrivateData(int version, boolean remoteInvalidation, int maxSendSize, int maxReceiveSize) {

    public static final int MAGIC = 0xf6ab0e18;
    public static final int LENGTH = 8;
    public static final int FLAG_REMOTE_INVALIDATION = 1;
    /**
     * The inline size this end offers by default, each way: 4 KiB, as Linux's xprtrdma and svcrdma
     * do.
     */
    public static final int DEFAULT_INLINE = 4096;

    /**
     * The inline threshold of a peer that sent no private data (RFC 8797 section 5.1): RPC-over-RDMA
     * version 1's default of 1 KiB (RFC 8166 section 3.3.3).
     */
    public static final int VERSION_1_INLINE = 1024;

    public PrivateData {
        for (int size : new int[] {maxSendSize, maxReceiveSize}) {
            if (size < 1024 || size > 256 * 1024 || size % 1024 != 0) {
                throw new IllegalArgumentException("an inline size is a multiple of 1 KiB from 1 to 256 KiB, not " + size);
            }
        }
    }

    /**
     * The inline threshold for what an end sends (RFC 8166 section 3.3.2, RFC 8797 section 4.2):
     * the smaller of its own send size and the peer's receive size, the peer's being
     * {@link #VERSION_1_INLINE} when it sent no private data ({@code peer} null).
     */
    public static int sendThreshold(int ownSendSize, PrivateData peer) {
        return Math.min(ownSendSize, peer == null ? VERSION_1_INLINE : peer.maxReceiveSize());
    }

    public byte[] encode() {
        return ByteBuffer.allocate(LENGTH).putInt(MAGIC).put((byte) version)
                .put((byte) (remoteInvalidation ? FLAG_REMOTE_INVALIDATION : 0))
                .put((byte) (maxSendSize / 1024 - 1)).put((byte) (maxReceiveSize / 1024 - 1)).array();
    }

    /**
     * The peer's private data, or {@code null} when it sent none or something else (RFC 8797
     * sections 5.1 and 5.2: then version 1's defaults hold, no Remote Invalidation and
     * {@link #VERSION_1_INLINE} each way).
     */
    public static PrivateData decode(byte[] data) {
        if (data.length < LENGTH) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        if (b.getInt() != MAGIC) {
            return null;
        }
        int version = b.get() & 0xFF;
        int flags = b.get() & 0xFF;
        int send = ((b.get() & 0xFF) + 1) * 1024;
        int receive = ((b.get() & 0xFF) + 1) * 1024;
        return new PrivateData(version, (flags & FLAG_REMOTE_INVALIDATION) != 0, send, receive);
    }
}
