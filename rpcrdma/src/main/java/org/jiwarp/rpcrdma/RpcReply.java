package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * A handler's answer to an {@link RpcCall}: the {@code accept_stat} (RFC 5531 section 9), the
 * procedure's results as XDR, and optionally a DDP-eligible data item (RFC 8166 section 3.4.2; for
 * NFSv3, RFC 8267 section 4: READ's data, READLINK's path) kept apart from the XDR stream.
 *
 * <p>The DDP-eligible item is the last item of the results, an {@code opaque<>} whose length word
 * is the last word of {@code results}: NFSv3's DDP-eligible items all end their result. Over
 * RPC-over-RDMA the server writes it with RDMA Write into the call's first Write chunk when there
 * is one, and otherwise appends it to the results with its XDR roundup; over TCP it is simply
 * appended. Either way it is never copied into the XDR stream when a Write chunk takes it.
 *
 * <p>The buffers pass to the server, which releases them once the reply is sent or dropped.
 *
 * @param results      the results after the reply header; {@code null} for none
 * @param ddpData      the DDP-eligible data item's octets (without its length word), or {@code null}
 * @param mismatchLow  for PROG_MISMATCH: the lowest version served
 * @param mismatchHigh for PROG_MISMATCH: the highest
 */
public record RpcReply(int acceptStat, ByteBuf results, ByteBuf ddpData, int mismatchLow, int mismatchHigh) {

    /** SUCCESS with {@code results}. */
    public static RpcReply success(ByteBuf results) {
        return new RpcReply(Rpc.SUCCESS, results, null, 0, 0);
    }

    /** SUCCESS with {@code results} and a DDP-eligible data item after them. */
    public static RpcReply success(ByteBuf results, ByteBuf ddpData) {
        return new RpcReply(Rpc.SUCCESS, results, ddpData, 0, 0);
    }

    public static RpcReply progUnavail() {
        return new RpcReply(Rpc.PROG_UNAVAIL, null, null, 0, 0);
    }

    public static RpcReply progMismatch(int low, int high) {
        return new RpcReply(Rpc.PROG_MISMATCH, null, null, low, high);
    }

    public static RpcReply procUnavail() {
        return new RpcReply(Rpc.PROC_UNAVAIL, null, null, 0, 0);
    }

    public static RpcReply garbageArgs() {
        return new RpcReply(Rpc.GARBAGE_ARGS, null, null, 0, 0);
    }

    public static RpcReply systemErr() {
        return new RpcReply(Rpc.SYSTEM_ERR, null, null, 0, 0);
    }

    /** Writes the reply header and the results (not the DDP-eligible item). */
    public void encode(ByteBuf out, int xid) {
        Rpc.putAcceptedReply(out, xid, acceptStat);
        if (acceptStat == Rpc.PROG_MISMATCH) {
            Xdr.putInt(out, mismatchLow);
            Xdr.putInt(out, mismatchHigh);
        }
        if (results != null) {
            out.writeBytes(results, results.readerIndex(), results.readableBytes());
        }
    }

    /** Octets of the DDP-eligible item, 0 without one. */
    public int ddpLength() {
        return ddpData == null ? 0 : ddpData.readableBytes();
    }

    public void release() {
        if (results != null) {
            results.release();
        }
        if (ddpData != null) {
            ddpData.release();
        }
    }
}
