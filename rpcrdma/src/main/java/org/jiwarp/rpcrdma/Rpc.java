package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;

/**
 * ONC RPC version 2 messages (RFC 5531 section 9), both ends: the call header a client writes and
 * a server reads ({@link #getCall}), and the reply header a server writes and a client reads
 * before the procedure's results.
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

    /** auth_stat (RFC 5531 section 9): a credential the server cannot read or does not take. */
    public static final int AUTH_BADCRED = 1;

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

    /**
     * Reads a call header (RFC 5531 section 9, {@code call_body}) up to the procedure's arguments,
     * which the returned call holds as a retained slice of {@code in} (the caller releases it).
     * The RPC version and the credential's flavor are returned as sent: the server answers a
     * version other than 2 or a flavor it does not take.
     *
     * @throws XdrException when the header does not decode or the message is not a CALL
     */
    public static RpcCall getCall(ByteBuf in) {
        int xid = Xdr.getInt(in);
        int type = Xdr.getInt(in);
        if (type != CALL) {
            throw new XdrException("message type " + type + " where a CALL (0) was expected");
        }
        int rpcVersion = Xdr.getInt(in);
        int program = Xdr.getInt(in);
        int version = Xdr.getInt(in);
        int procedure = Xdr.getInt(in);
        int flavor = Xdr.getInt(in);
        byte[] body = Xdr.getOpaque(in, AuthSys.MAX_BODY);
        AuthSys credential = flavor == AuthSys.FLAVOR ? AuthSys.decode(io.netty.buffer.Unpooled.wrappedBuffer(body))
                : null;
        Xdr.getInt(in); // the verifier's flavor
        Xdr.getOpaque(in, AuthSys.MAX_BODY);
        return new RpcCall(xid, rpcVersion, program, version, procedure, flavor, credential,
                in.readRetainedSlice(in.readableBytes()));
    }

    /**
     * Writes an accepted reply's header (RFC 5531 section 9, {@code accepted_reply}): xid, REPLY,
     * MSG_ACCEPTED, an AUTH_NONE verifier and {@code acceptStat}; for PROG_MISMATCH the caller
     * writes the lowest and highest version next, for SUCCESS the results.
     */
    public static void putAcceptedReply(ByteBuf out, int xid, int acceptStat) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, REPLY);
        Xdr.putInt(out, MSG_ACCEPTED);
        Xdr.putInt(out, AuthSys.NONE);
        Xdr.putInt(out, 0);
        Xdr.putInt(out, acceptStat);
    }

    /** Writes a denied reply (RFC 5531 section 9, {@code rejected_reply}) for an RPC version other than 2. */
    public static void putRpcMismatch(ByteBuf out, int xid) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, REPLY);
        Xdr.putInt(out, MSG_DENIED);
        Xdr.putInt(out, RPC_MISMATCH);
        Xdr.putInt(out, RPC_VERSION);
        Xdr.putInt(out, RPC_VERSION);
    }

    /** Writes a denied reply with an authentication error ({@code auth_stat}). */
    public static void putAuthError(ByteBuf out, int xid, int authStat) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, REPLY);
        Xdr.putInt(out, MSG_DENIED);
        Xdr.putInt(out, AUTH_ERROR);
        Xdr.putInt(out, authStat);
    }

    /**
     * The server's own denial of {@code call} (RFC 5531 section 9), before any handler sees it: an
     * RPC_MISMATCH reply for an RPC version other than 2, an AUTH_BADCRED reply for a credential
     * flavor other than AUTH_NONE and AUTH_SYS; {@code null} when the call is for the handler. Every
     * transport's server applies these same rules.
     */
    public static ByteBuf denial(RpcCall call) {
        if (call.rpcVersion() != RPC_VERSION) {
            ByteBuf denied = io.netty.buffer.Unpooled.buffer(24);
            putRpcMismatch(denied, call.xid());
            return denied;
        }
        if (call.credentialFlavor() != AuthSys.NONE && call.credentialFlavor() != AuthSys.FLAVOR) {
            ByteBuf denied = io.netty.buffer.Unpooled.buffer(20);
            putAuthError(denied, call.xid(), AUTH_BADCRED);
            return denied;
        }
        return null;
    }

    /**
     * {@code handler}'s answer to {@code call}, which {@link #denial} let through: a handler that
     * throws or answers nothing is answered with SYSTEM_ERR (as {@link RpcHandler} says).
     */
    public static RpcReply answer(RpcHandler handler, RpcCall call) {
        RpcReply reply;
        try {
            reply = handler.handle(call);
        } catch (RuntimeException e) {
            reply = null;
        }
        return reply == null ? RpcReply.systemErr() : reply;
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
