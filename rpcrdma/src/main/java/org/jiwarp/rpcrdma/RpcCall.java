package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * One RPC call as a server receives it (RFC 5531 section 9, {@code call_body}): the xid, the RPC
 * version, the program, version and procedure, the credential, and the procedure's arguments as
 * XDR. Over RPC-over-RDMA the arguments are whole again: the data of the call's Read chunks was
 * pulled with RDMA Read and stands at its XDR position with its XDR roundup (RFC 8166 sections
 * 3.4.5 and 3.5.3), so a handler decodes them as if they had come inline.
 *
 * <p>The arguments are lent to {@link RpcHandler#handle}: the server releases them when the
 * handler returns; a handler that keeps them past that retains them.
 *
 * @param credentialFlavor the credential's flavor ({@link AuthSys#NONE}, {@link AuthSys#FLAVOR}, or
 *                         one the server answers with AUTH_BADCRED)
 * @param credential       the AUTH_SYS credential, or {@code null} for another flavor
 * @param arguments        the XDR after the call header
 */
public record RpcCall(int xid, int rpcVersion, int program, int version, int procedure, int credentialFlavor,
        AuthSys credential, ByteBuf arguments) {
}
