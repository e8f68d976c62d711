package org.jiwarp.rpcrdma.nfs.server;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * An NFSv3 procedure that fails with an {@code nfsstat3} (RFC 1813 section 2.6). Thrown inside a
 * procedure and turned into its failure result; it carries no stack trace.
 */
final class Nfs3Error extends RuntimeException {

    private static final long serialVersionUID = 1L;

    static final int NFS3_OK = 0;
    static final int PERM = 1;
    static final int NOENT = 2;
    static final int IO = 5;
    static final int ACCES = 13;
    static final int EXIST = 17;
    static final int XDEV = 18;
    static final int NOTDIR = 20;
    static final int ISDIR = 21;
    static final int INVAL = 22;
    static final int FBIG = 27;
    static final int NOSPC = 28;
    static final int ROFS = 30;
    static final int MLINK = 31;
    static final int NAMETOOLONG = 63;
    static final int NOTEMPTY = 66;
    static final int DQUOT = 69;
    static final int STALE = 70;
    static final int BADHANDLE = 10001;
    static final int NOT_SYNC = 10002;
    static final int BAD_COOKIE = 10003;
    static final int NOTSUPP = 10004;
    static final int TOOSMALL = 10005;
    static final int SERVERFAULT = 10006;

    final int status;

    Nfs3Error(int status) {
        super("NFS status " + status, null, false, false);
        this.status = status;
    }

    /** The status for a file system error: by the exception's type, else by the errno text Linux gives. */
    static Nfs3Error of(IOException e) {
        if (e instanceof NoSuchFileException) {
            return new Nfs3Error(NOENT);
        }
        if (e instanceof FileAlreadyExistsException) {
            return new Nfs3Error(EXIST);
        }
        if (e instanceof DirectoryNotEmptyException) {
            return new Nfs3Error(NOTEMPTY);
        }
        if (e instanceof AccessDeniedException) {
            return new Nfs3Error(ACCES);
        }
        if (e instanceof NotDirectoryException) {
            return new Nfs3Error(NOTDIR);
        }
        String reason = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : "";
        return new Nfs3Error(switch (reason) {
            case "Operation not permitted" -> PERM;
            case "Directory not empty" -> NOTEMPTY;
            case "File exists" -> EXIST;
            case "Not a directory" -> NOTDIR;
            case "Is a directory" -> ISDIR;
            case "Invalid argument", "Too many levels of symbolic links" -> INVAL;
            case "File too large" -> FBIG;
            case "No space left on device" -> NOSPC;
            case "Disk quota exceeded" -> DQUOT;
            case "Read-only file system" -> ROFS;
            case "Too many links" -> MLINK;
            case "File name too long" -> NAMETOOLONG;
            case "Invalid cross-device link" -> XDEV;
            default -> IO;
        });
    }

    /** A name the platform cannot represent as a path. */
    static Nfs3Error of(InvalidPathException e) {
        return new Nfs3Error(INVAL);
    }
}
