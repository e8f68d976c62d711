/**
 * RPC-over-RDMA version 1 on jiwarp's RNIC, and what it carries:
 *
 * <ul>
 *   <li>{@link org.jiwarp.rpcrdma.Xdr}: XDR (RFC 4506 sections 4.1-4.12, the types ONC RPC and
 *       NFSv3 use), over Netty buffers;</li>
 *   <li>{@link org.jiwarp.rpcrdma.Rpc} and {@link org.jiwarp.rpcrdma.AuthSys}: ONC RPC version 2
 *       call and reply headers (RFC 5531 sections 8-9) and the AUTH_SYS credential (appendix A);
 *       {@link org.jiwarp.rpcrdma.TcpRpcClient}: record marking over TCP (section 11);</li>
 *   <li>{@link org.jiwarp.rpcrdma.RpcRdmaHeader}: the transport header, chunk lists and errors
 *       (RFC 8166 sections 4.2-4.5); {@link org.jiwarp.rpcrdma.PrivateData}: the connection private
 *       data (RFC 8797 section 4);</li>
 *   <li>{@link org.jiwarp.rpcrdma.RpcRdmaClient}: the requester (RFC 8166 section 3): credits
 *       (3.3.1), inline thresholds (3.3.2-3.3.3), Read, Write and Reply chunks (3.4), RDMA_NOMSG
 *       with a Position Zero Read chunk for long calls (3.5.3), per-call registration and remote
 *       invalidation of chunk handles (RFC 8797 sections 3.2 and 4.1).</li>
 *   <li>{@link org.jiwarp.rpcrdma.RpcRdmaServer}: the responder (RFC 8166 section 3), sharing the
 *       codec above with the requester: credits granted and honoured (3.3.1), receives from one
 *       shared receive queue for all connections, Read chunks pulled with RDMA Read and spliced at
 *       their XDR position with their roundup (3.4.5, 3.5.3), DDP-eligible results pushed into the
 *       Write chunk and long replies into the Reply chunk with RDMA Write (3.4.6, 3.5.3; RFC 8267
 *       section 4 for NFS), Send with Invalidate when the client's private data accepts it (RFC
 *       8797 section 4.1), RDMA_ERROR for what it cannot serve (4.5); each call goes to an
 *       {@link org.jiwarp.rpcrdma.RpcHandler} as an {@link org.jiwarp.rpcrdma.RpcCall} and comes
 *       back as an {@link org.jiwarp.rpcrdma.RpcReply} (RFC 5531 section 9);
 *       {@link org.jiwarp.rpcrdma.RpcPrograms} dispatches on program and version.</li>
 *   <li>{@link org.jiwarp.rpcrdma.RpcTcpServer}: the same handlers over TCP with record marking
 *       (RFC 5531 section 11): a record's fragments joined up to a bound, replies as one fragment
 *       with the DDP-eligible item appended and padded (RFC 4506 section 4.10), the server's
 *       denials shared with the RDMA server ({@code Rpc.denial}, section 9), a bound on each
 *       connection's calls in progress and no reading while its replies cannot be written.</li>
 * </ul>
 */
package org.jiwarp.rpcrdma;
