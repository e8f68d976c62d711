package org.jiwarp.rpcrdma.nfs;

import io.netty.buffer.ByteBuf;
import org.jiwarp.rpcrdma.Xdr;

/** NFSv3 file attributes (RFC 1813 section 2.5, {@code fattr3}); times in nanoseconds since the epoch. */
public record Fattr3(int type, int mode, int nlink, int uid, int gid, long size, long used, long fsid, long fileid,
        long atimeNanos, long mtimeNanos, long ctimeNanos) {

    public static final int NF3REG = 1;
    public static final int NF3DIR = 2;

    static Fattr3 decode(ByteBuf in) {
        int type = Xdr.getInt(in);
        int mode = Xdr.getInt(in);
        int nlink = Xdr.getInt(in);
        int uid = Xdr.getInt(in);
        int gid = Xdr.getInt(in);
        long size = Xdr.getHyper(in);
        long used = Xdr.getHyper(in);
        Xdr.getHyper(in); // rdev (specdata1, specdata2)
        long fsid = Xdr.getHyper(in);
        long fileid = Xdr.getHyper(in);
        return new Fattr3(type, mode, nlink, uid, gid, size, used, fsid, fileid, time(in), time(in), time(in));
    }

    /** A {@code post_op_attr}: the attributes, or {@code null} when the server left them out. */
    static Fattr3 decodePostOp(ByteBuf in) {
        return Xdr.getBoolean(in) ? decode(in) : null;
    }

    private static long time(ByteBuf in) {
        return Xdr.getUnsignedInt(in) * 1_000_000_000L + Xdr.getUnsignedInt(in);
    }

    public String typeName() {
        return switch (type) {
            case NF3REG -> "file";
            case NF3DIR -> "directory";
            case 3 -> "block device";
            case 4 -> "character device";
            case 5 -> "symbolic link";
            case 6 -> "socket";
            case 7 -> "fifo";
            default -> "type " + type;
        };
    }
}
