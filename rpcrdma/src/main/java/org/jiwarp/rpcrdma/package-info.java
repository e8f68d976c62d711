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
 *       data (RFC 8797 section 5);</li>
 *   <li>{@link org.jiwarp.rpcrdma.RpcRdmaClient}: the requester (RFC 8166 section 3): credits
 *       (3.3.1), inline thresholds (3.3.2-3.3.3), Read, Write and Reply chunks (3.4), RDMA_NOMSG
 *       with a Position Zero Read chunk for long calls (3.5.3), per-call registration and remote
 *       invalidation of chunk handles (RFC 8797 section 5; RFC 8166 section 3.4.7).</li>
 * </ul>
 */
package org.jiwarp.rpcrdma;
