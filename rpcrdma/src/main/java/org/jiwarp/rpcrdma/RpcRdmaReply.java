package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * A reply (over TCP too, see {@link RpcTransport}): its transport header, the RPC reply message (inline after an RDMA_MSG header, or the
 * Reply chunk's contents after RDMA_NOMSG), and what the server wrote into the call's Write chunk.
 * The buffers are the caller's, released by {@link #release()}: an inline message is a copy of
 * its receive; a Reply or Write chunk's contents are the chunk's own buffer, not copied, which the
 * server can no longer reach once the call has returned (its region is invalidated and deregistered).
 *
 * @param header          the reply's RPC-over-RDMA header; {@code null} over TCP
 * @param message         the RPC reply, from the xid on
 * @param writeChunkData  the octets the server wrote into the Write chunk (its length is what the
 *                        reply's Write list reports), or an empty buffer
 * @param invalidatedStag the STag the server's Send with Invalidate invalidated, or 0
 */
public record RpcRdmaReply(RpcRdmaHeader header, ByteBuf message, ByteBuf writeChunkData, int invalidatedStag) {

    public void release() {
        message.release();
        writeChunkData.release();
    }
}
