package org.jiwarp.rpcrdma;

/**
 * Where an RPC client's calls go: RPC-over-RDMA ({@link RpcRdmaClient}) or record marking over TCP
 * ({@link TcpRpcClient}), so that an upper layer such as the NFSv3 client runs unchanged on
 * either and the two can be compared on the same server.
 *
 * <p>A call's chunks are RPC-over-RDMA's (RFC 8166 section 3.4); over TCP a Read chunk's data is
 * sent inline at its position, and Write and Reply chunks are not needed: the reply carries
 * everything inline and {@link RpcRdmaReply#writeChunkData()} is empty. Calls may be made from
 * several threads at once.
 */
public interface RpcTransport extends AutoCloseable {

    /**
     * Makes a call and waits for its reply; the RPC reply header is not checked here (see
     * {@link Rpc#getAcceptedReply}).
     *
     * @throws RpcException when the connection fails or no reply comes in time
     */
    RpcRdmaReply call(RpcRdmaCall call, AuthSys credential);

    @Override
    void close();
}
