package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * A reply (over TCP too, see {@link RpcTransport}): its transport header, the RPC reply message (inline after an RDMA_MSG header, or the
 * Reply chunk's contents after RDMA_NOMSG), and what the server wrote into the call's Write chunk.
 * The buffers are the caller's: copies, released by {@link #release()}.
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
