package org.jiwarp.rpcrdma.nfs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.Rpc;
import org.jiwarp.rpcrdma.RpcCall;
import org.jiwarp.rpcrdma.RpcHandler;
import org.jiwarp.rpcrdma.RpcReply;
import org.jiwarp.rpcrdma.Xdr;

/**
 * Calls an NFS or MOUNT handler directly, as a transport would: arguments encoded as XDR, the
 * reply's results and DDP-eligible item copied out and the reply released.
 */
final class Nfs3Calls {

    private final RpcHandler handler;
    private final int program;
    private AuthSys credential = AuthSys.root("test");

    Nfs3Calls(RpcHandler handler, int program) {
        this.handler = handler;
        this.program = program;
    }

    Nfs3Calls as(AuthSys credential) {
        this.credential = credential;
        return this;
    }

    /** A reply: the accept_stat, the results (heap, never leak-tracked) and the DDP-eligible octets. */
    record Reply(int acceptStat, ByteBuf in, byte[] ddp) {

        /** Reads the status word that begins the results. */
        int status() {
            return Xdr.getInt(in);
        }
    }

    Reply call(int procedure, Consumer<ByteBuf> arguments) {
        ByteBuf args = Unpooled.buffer();
        arguments.accept(args);
        RpcCall call = new RpcCall(7, Rpc.RPC_VERSION, program, 3, procedure,
                credential == null ? AuthSys.NONE : AuthSys.FLAVOR, credential, args);
        RpcReply reply = handler.handle(call);
        try {
            byte[] results = reply.results() == null ? new byte[0] : ByteBufUtil.getBytes(reply.results());
            byte[] ddp = reply.ddpData() == null ? null : ByteBufUtil.getBytes(reply.ddpData());
            return new Reply(reply.acceptStat(), Unpooled.wrappedBuffer(results), ddp);
        } finally {
            reply.release();
            args.release();
        }
    }

    static void name(ByteBuf out, String name) {
        Xdr.putOpaque(out, name.getBytes(StandardCharsets.UTF_8));
    }

    /** A {@code sattr3} setting the mode (when not negative) and the size (when not negative). */
    static void sattr(ByteBuf out, int mode, long size) {
        Xdr.putBoolean(out, mode >= 0);
        if (mode >= 0) {
            Xdr.putInt(out, mode);
        }
        Xdr.putBoolean(out, false); // uid
        Xdr.putBoolean(out, false); // gid
        Xdr.putBoolean(out, size >= 0);
        if (size >= 0) {
            Xdr.putHyper(out, size);
        }
        Xdr.putInt(out, 0); // atime: DONT_CHANGE
        Xdr.putInt(out, 0); // mtime: DONT_CHANGE
    }

    /** {@code fattr3}, decoded. */
    record Fattr(int type, int mode, int nlink, int uid, int gid, long size, long fsid, long fileid, long atimeSeconds,
            long mtimeSeconds, long mtimeNanos, long ctimeSeconds, long ctimeNanos) {

        static Fattr decode(ByteBuf in) {
            int type = Xdr.getInt(in);
            int mode = Xdr.getInt(in);
            int nlink = Xdr.getInt(in);
            int uid = Xdr.getInt(in);
            int gid = Xdr.getInt(in);
            long size = Xdr.getHyper(in);
            Xdr.getHyper(in); // used
            Xdr.getHyper(in); // rdev
            long fsid = Xdr.getHyper(in);
            long fileid = Xdr.getHyper(in);
            long atime = Xdr.getUnsignedInt(in);
            Xdr.getInt(in);
            return new Fattr(type, mode, nlink, uid, gid, size, fsid, fileid, atime, Xdr.getUnsignedInt(in),
                    Xdr.getUnsignedInt(in), Xdr.getUnsignedInt(in), Xdr.getUnsignedInt(in));
        }

        /** {@code post_op_attr}: {@code null} when absent. */
        static Fattr postOp(ByteBuf in) {
            return Xdr.getBoolean(in) ? decode(in) : null;
        }
    }

    /** {@code wcc_data}: skips the pre-op attributes and returns the post-op ones. */
    static Fattr wcc(ByteBuf in) {
        if (Xdr.getBoolean(in)) {
            in.skipBytes(24);
        }
        return Fattr.postOp(in);
    }
}
