package org.jiwarp.rpcrdma;

/** A call that failed at the RPC layer (RFC 5531) or the RPC-over-RDMA layer (RFC 8166 errors). */
public class RpcException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public RpcException(String message) {
        super(message);
    }

    public RpcException(String message, Throwable cause) {
        super(message, cause);
    }
}
