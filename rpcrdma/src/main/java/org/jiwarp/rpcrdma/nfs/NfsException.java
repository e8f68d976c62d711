package org.jiwarp.rpcrdma.nfs;

import org.jiwarp.rpcrdma.RpcException;

/** An NFSv3 procedure that returned an error status (RFC 1813 section 2.6, {@code nfsstat3}). */
public final class NfsException extends RpcException {

    private static final long serialVersionUID = 1L;

    private final int status;

    public NfsException(String operation, int status) {
        super(operation + ": " + describe(status));
        this.status = status;
    }

    public int status() {
        return status;
    }

    static String describe(int status) {
        return switch (status) {
            case 1 -> "not owner (NFS3ERR_PERM)";
            case 2 -> "no such file or directory (NFS3ERR_NOENT)";
            case 5 -> "I/O error (NFS3ERR_IO)";
            case 13 -> "permission denied (NFS3ERR_ACCES)";
            case 17 -> "file exists (NFS3ERR_EXIST)";
            case 20 -> "not a directory (NFS3ERR_NOTDIR)";
            case 21 -> "is a directory (NFS3ERR_ISDIR)";
            case 22 -> "invalid argument (NFS3ERR_INVAL)";
            case 27 -> "file too large (NFS3ERR_FBIG)";
            case 28 -> "no space left on the server (NFS3ERR_NOSPC)";
            case 30 -> "read-only file system (NFS3ERR_ROFS)";
            case 63 -> "name too long (NFS3ERR_NAMETOOLONG)";
            case 70 -> "stale file handle (NFS3ERR_STALE)";
            case 10004 -> "operation not supported (NFS3ERR_NOTSUPP)";
            case 10006 -> "server fault (NFS3ERR_SERVERFAULT)";
            case 10008 -> "server busy, try later (NFS3ERR_JUKEBOX)";
            default -> "NFS error " + status;
        };
    }
}
