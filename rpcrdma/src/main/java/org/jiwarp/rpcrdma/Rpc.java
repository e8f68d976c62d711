package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * ONC RPC version 2 messages (RFC 5531 section 9): the call header a client writes, and the reply
 * header it reads before the procedure's results.
 */
public final class Rpc {

    public static final int CALL = 0;
    public static final int REPLY = 1;
    public static final int RPC_VERSION = 2;

    public static final int MSG_ACCEPTED = 0;
    public static final int MSG_DENIED = 1;

    public static final int SUCCESS = 0;
    public static final int PROG_UNAVAIL = 1;
    public static final int PROG_MISMATCH = 2;
    public static final int PROC_UNAVAIL = 3;
    public static final int GARBAGE_ARGS = 4;
    public static final int SYSTEM_ERR = 5;

    public static final int RPC_MISMATCH = 0;
    public static final int AUTH_ERROR = 1;

    private Rpc() {
    }

    /** Writes a call header: xid, CALL, RPC version 2, program, version, procedure, credential, AUTH_NONE verifier. */
    public static void putCall(ByteBuf out, int xid, int program, int version, int procedure, AuthSys credential) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, CALL);
        Xdr.putInt(out, RPC_VERSION);
        Xdr.putInt(out, program);
        Xdr.putInt(out, version);
        Xdr.putInt(out, procedure);
        if (credential == null) {
            Xdr.putInt(out, AuthSys.NONE);
            Xdr.putInt(out, 0);
        } else {
            Xdr.putInt(out, AuthSys.FLAVOR);
            Xdr.putOpaque(out, credential.body());
        }
        Xdr.putInt(out, AuthSys.NONE);
        Xdr.putInt(out, 0);
    }

    /** The xid of a message, without consuming it. */
    public static int peekXid(ByteBuf in) {
        if (in.readableBytes() < 4) {
            throw new XdrException("an RPC message shorter than its xid");
        }
        return in.getInt(in.readerIndex());
    }

    /**
     * Reads a reply header up to the results and checks it says SUCCESS.
     *
     * @return the xid
     * @throws RpcException when the call was denied or not accepted with SUCCESS
     * @throws XdrException when the header does not decode
     */
    public static int getAcceptedReply(ByteBuf in) {
        int xid = Xdr.getInt(in);
        int type = Xdr.getInt(in);
        if (type != REPLY) {
            throw new XdrException("message type " + type + " where a REPLY (1) was expected");
        }
        int replyStat = Xdr.getInt(in);
        if (replyStat == MSG_DENIED) {
            int reject = Xdr.getInt(in);
            if (reject == RPC_MISMATCH) {
                throw new RpcException("the server denied the call: RPC version mismatch (it speaks " + Xdr.getInt(in)
                        + " to " + Xdr.getInt(in) + ")");
            }
            if (reject == AUTH_ERROR) {
                throw new RpcException("the server denied the call: authentication error " + Xdr.getInt(in));
            }
            throw new XdrException("reject_stat " + reject);
        }
        if (replyStat != MSG_ACCEPTED) {
            throw new XdrException("reply_stat " + replyStat);
        }
        Xdr.getInt(in); // the verifier's flavor
        Xdr.getOpaque(in, AuthSys.MAX_BODY);
        int accept = Xdr.getInt(in);
        switch (accept) {
            case SUCCESS:
                return xid;
            case PROG_MISMATCH:
                throw new RpcException("the server does not speak this program version (it speaks " + Xdr.getInt(in)
                        + " to " + Xdr.getInt(in) + ")");
            case PROG_UNAVAIL:
                throw new RpcException("the server does not offer this RPC program");
            case PROC_UNAVAIL:
                throw new RpcException("the server does not offer this procedure");
            case GARBAGE_ARGS:
                throw new RpcException("the server could not decode the call's arguments");
            case SYSTEM_ERR:
                throw new RpcException("the server failed with a system error");
            default:
                throw new XdrException("accept_stat " + accept);
        }
    }
}
