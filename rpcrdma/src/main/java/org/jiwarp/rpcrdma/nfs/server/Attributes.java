package org.jiwarp.rpcrdma.nfs.server;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;
import org.jiwarp.rpcrdma.Xdr;

/**
 * A file's attributes as Linux gives them ({@code lstat}, through the "unix" attribute view, never
 * following a symbolic link), and their XDR forms: {@code fattr3} (RFC 1813 section 2.5),
 * {@code post_op_attr}, {@code pre_op_attr} and {@code wcc_data} (also section 2.5).
 *
 * <pre>
 * fattr3: type | mode | nlink | uid | gid | size (8) | used (8) | rdev (4+4) | fsid (8) | fileid (8)
 *         | atime (4+4) | mtime (4+4) | ctime (4+4)          = 84 octets
 * </pre>
 */
record Attributes(int mode, int nlink, int uid, int gid, long size, long rdev, long dev, long ino,
        FileTime atime, FileTime mtime, FileTime ctime) {

    /** {@code ftype3}. */
    static final int NF3REG = 1;
    static final int NF3DIR = 2;
    static final int NF3BLK = 3;
    static final int NF3CHR = 4;
    static final int NF3LNK = 5;
    static final int NF3SOCK = 6;
    static final int NF3FIFO = 7;

    /** Octets of an {@code fattr3}; a {@code post_op_attr} holding one is 4 more. */
    static final int FATTR3_SIZE = 84;

    static Attributes of(Path path) throws IOException {
        Map<String, Object> a = java.nio.file.Files.readAttributes(path, "unix:*", LinkOption.NOFOLLOW_LINKS);
        return new Attributes((Integer) a.get("mode"), (Integer) a.get("nlink"), (Integer) a.get("uid"),
                (Integer) a.get("gid"), (Long) a.get("size"), (Long) a.get("rdev"), (Long) a.get("dev"),
                (Long) a.get("ino"), (FileTime) a.get("lastAccessTime"), (FileTime) a.get("lastModifiedTime"),
                (FileTime) a.get("ctime"));
    }

    /** Reads them, or throws the NFS status for why not. */
    static Attributes require(Path path) {
        try {
            return of(path);
        } catch (IOException e) {
            throw Nfs3Error.of(e);
        }
    }

    /** Reads them, or {@code null}: for post-operation attributes, which are best effort. */
    static Attributes orNull(Path path) {
        if (path == null) {
            return null;
        }
        try {
            return of(path);
        } catch (IOException e) {
            return null;
        }
    }

    /** The {@code ftype3} from the file type bits of {@code st_mode}. */
    int type() {
        return switch (mode & 0170000) {
            case 0100000 -> NF3REG;
            case 0040000 -> NF3DIR;
            case 0120000 -> NF3LNK;
            case 0060000 -> NF3BLK;
            case 0020000 -> NF3CHR;
            case 0140000 -> NF3SOCK;
            default -> NF3FIFO;
        };
    }

    boolean isDirectory() {
        return type() == NF3DIR;
    }

    void encode(ByteBuf out, long fsid) {
        Xdr.putInt(out, type());
        Xdr.putInt(out, mode & 07777);
        Xdr.putInt(out, nlink);
        Xdr.putInt(out, uid);
        Xdr.putInt(out, gid);
        Xdr.putHyper(out, size);
        Xdr.putHyper(out, (size + 511) & ~511L); // used: the unix view has no st_blocks
        Xdr.putInt(out, (int) (((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL))); // specdata1: major
        Xdr.putInt(out, (int) ((rdev & 0xff) | ((rdev >>> 12) & ~0xffL))); // specdata2: minor
        Xdr.putHyper(out, fsid);
        Xdr.putHyper(out, ino);
        putTime(out, atime);
        putTime(out, mtime);
        putTime(out, ctime);
    }

    /** {@code nfstime3}: seconds and nanoseconds, both unsigned 32 bits. */
    static void putTime(ByteBuf out, FileTime time) {
        Instant instant = time.toInstant();
        Xdr.putInt(out, (int) instant.getEpochSecond());
        Xdr.putInt(out, instant.getNano());
    }

    static FileTime getTime(ByteBuf in) {
        long seconds = Xdr.getUnsignedInt(in);
        long nanos = Xdr.getUnsignedInt(in);
        return FileTime.from(Instant.ofEpochSecond(seconds, Math.min(nanos, 999_999_999L)));
    }

    /** {@code post_op_attr}: the attributes, or FALSE when there are none. */
    static void putPostOp(ByteBuf out, Attributes attributes, long fsid) {
        Xdr.putBoolean(out, attributes != null);
        if (attributes != null) {
            attributes.encode(out, fsid);
        }
    }

    /** {@code wcc_data}: the {@code pre_op_attr} (size, mtime, ctime) taken before, the post-op after. */
    static void putWcc(ByteBuf out, Attributes before, Attributes after, long fsid) {
        Xdr.putBoolean(out, before != null);
        if (before != null) {
            Xdr.putHyper(out, before.size);
            putTime(out, before.mtime);
            putTime(out, before.ctime);
        }
        putPostOp(out, after, fsid);
    }
}
