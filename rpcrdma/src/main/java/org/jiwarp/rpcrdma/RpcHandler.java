package org.jiwarp.rpcrdma;

/**
 * Serves the calls of an RPC server ({@link RpcRdmaServer}): dispatches on the program, version
 * and procedure, and answers. It runs on the server's worker threads and may block (file I/O); it
 * is called for calls whose RPC version is 2 and whose credential is AUTH_NONE or AUTH_SYS (the
 * server denies the others itself, RFC 5531 section 9).
 *
 * <p>For a program it does not offer it answers {@link RpcReply#progUnavail()}; for a version
 * outside its range {@link RpcReply#progMismatch}; for a procedure {@link RpcReply#procUnavail()};
 * for arguments that do not decode {@link RpcReply#garbageArgs()}. An exception it throws is
 * answered with SYSTEM_ERR.
 */
@FunctionalInterface
public interface RpcHandler {

    /**
     * Answers {@code call}. Its arguments are lent for the call only (see {@link RpcCall}); the
     * returned reply's buffers pass to the server.
     */
    RpcReply handle(RpcCall call);
}
