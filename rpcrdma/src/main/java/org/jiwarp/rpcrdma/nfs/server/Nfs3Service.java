package org.jiwarp.rpcrdma.nfs.server;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.jiwarp.rpcrdma.nfs.server.Nfs3Error.NFS3_OK;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.RpcCall;
import org.jiwarp.rpcrdma.RpcHandler;
import org.jiwarp.rpcrdma.RpcReply;
import org.jiwarp.rpcrdma.Xdr;
import org.jiwarp.rpcrdma.XdrException;

/**
 * The NFS program, version 3 (RFC 1813 section 3): its 22 procedures over one export's directory.
 * Every procedure decodes its arguments first (a short or malformed one is GARBAGE_ARGS), then
 * works, and answers its {@code nfsstat3} with the result or failure body the RFC gives it, with
 * the attributes of the objects it touched ({@code post_op_attr}, {@code wcc_data}) whenever it can
 * read them. READ's data and READLINK's path leave as the reply's DDP-eligible item (RFC 8267
 * section 4).
 */
final class Nfs3Service implements RpcHandler {

    static final int NULL = 0;
    static final int GETATTR = 1;
    static final int SETATTR = 2;
    static final int LOOKUP = 3;
    static final int ACCESS = 4;
    static final int READLINK = 5;
    static final int READ = 6;
    static final int WRITE = 7;
    static final int CREATE = 8;
    static final int MKDIR = 9;
    static final int SYMLINK = 10;
    static final int MKNOD = 11;
    static final int REMOVE = 12;
    static final int RMDIR = 13;
    static final int RENAME = 14;
    static final int LINK = 15;
    static final int READDIR = 16;
    static final int READDIRPLUS = 17;
    static final int FSSTAT = 18;
    static final int FSINFO = 19;
    static final int PATHCONF = 20;
    static final int COMMIT = 21;

    /** {@code stable_how} (section 3.3.7). */
    static final int UNSTABLE = 0;
    static final int DATA_SYNC = 1;
    static final int FILE_SYNC = 2;
    /** {@code createmode3} (section 3.3.8). */
    static final int UNCHECKED = 0;
    static final int GUARDED = 1;
    static final int EXCLUSIVE = 2;
    /** ACCESS bits (section 3.3.4). */
    static final int ACCESS3_READ = 0x01;
    static final int ACCESS3_LOOKUP = 0x02;
    static final int ACCESS3_MODIFY = 0x04;
    static final int ACCESS3_EXTEND = 0x08;
    static final int ACCESS3_DELETE = 0x10;
    static final int ACCESS3_EXECUTE = 0x20;

    /** rtmax and wtmax: the most READ returns and WRITE takes (FSINFO). */
    static final int MAX_IO = 1 << 20;
    static final int DTPREF = 64 << 10;
    /** READDIR's cookie verifier: zeros, since the cookies hold across changes (section 3.3.16). */
    private static final byte[] NO_VERIFIER = new byte[8];
    static final int NAME_MAX = 255;
    /** The longest name or symbolic link text decoded; a longer one is GARBAGE_ARGS. */
    static final int MAX_PATH = 4096;
    /** The most octets one READDIR or READDIRPLUS reply is built to. */
    static final int MAX_DIRECTORY_REPLY = 1 << 20;
    /** {@code nobody}: the caller with an AUTH_NONE credential. */
    static final int NOBODY = 65534;

    private static final int FSF3_LINK = 0x1;
    private static final int FSF3_SYMLINK = 0x2;
    private static final int FSF3_HOMOGENEOUS = 0x8;
    private static final int FSF3_CANSETTIME = 0x10;

    private final FileHandles handles;
    private final boolean readOnly;
    private final byte[] writeVerifier;
    private final long fsid;
    final LongAdder calls;
    final LongAdder octetsRead = new LongAdder();
    final LongAdder octetsWritten = new LongAdder();
    /**
     * Calls answered with an error, but for NFS3ERR_NOENT: a missing name is an answer about the
     * directory, which clients ask for before each CREATE (two in a {@code cp -r} of a tree).
     */
    final LongAdder errors = new LongAdder();

    Nfs3Service(FileHandles handles, boolean readOnly, byte[] writeVerifier, LongAdder calls) {
        this.handles = handles;
        this.readOnly = readOnly;
        this.writeVerifier = writeVerifier.clone();
        this.fsid = handles.exportId();
        this.calls = calls;
    }

    @Override
    public RpcReply handle(RpcCall call) {
        calls.increment();
        if (call.procedure() == NULL) {
            return RpcReply.success(null);
        }
        ByteBuf in = call.arguments();
        ByteBuf out = PooledByteBufAllocator.DEFAULT.heapBuffer(256);
        ByteBuf ddp = null;
        try {
            switch (call.procedure()) {
                case GETATTR -> getattr(in, out);
                case SETATTR -> setattr(in, out);
                case LOOKUP -> lookup(in, out);
                case ACCESS -> access(in, out, call.credential());
                case READLINK -> ddp = readlink(in, out);
                case READ -> ddp = read(in, out);
                case WRITE -> write(in, out);
                case CREATE -> create(in, out);
                case MKDIR, SYMLINK -> mkdirOrSymlink(in, out, call.procedure() == SYMLINK);
                case MKNOD -> mknod(in, out);
                case REMOVE, RMDIR -> remove(in, out, call.procedure() == RMDIR);
                case RENAME -> rename(in, out);
                case LINK -> link(in, out);
                case READDIR, READDIRPLUS -> readdir(in, out, call.procedure() == READDIRPLUS);
                case FSSTAT, FSINFO, PATHCONF -> fsInformation(in, out, call.procedure());
                case COMMIT -> commit(in, out);
                default -> {
                    out.release();
                    return RpcReply.procUnavail();
                }
            }
        } catch (XdrException e) {
            out.release();
            errors.increment();
            return RpcReply.garbageArgs();
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
        int status = out.getInt(0);
        if (status != NFS3_OK && status != Nfs3Error.NOENT) {
            errors.increment();
        }
        return ddp == null ? RpcReply.success(out) : RpcReply.success(out, ddp);
    }

    // ---- section 3.3.1 to 3.3.5: attributes, names, access, links ----

    private void getattr(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        try {
            Attributes attributes = Attributes.require(handles.resolve(fh));
            Xdr.putInt(out, NFS3_OK);
            attributes.encode(out, fsid);
        } catch (Nfs3Error e) {
            fail(out, e);
        }
    }

    private void setattr(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        Sattr sattr = Sattr.decode(in);
        FileTime guard = Xdr.getBoolean(in) ? Attributes.getTime(in) : null;
        Path path = null;
        Attributes before = null;
        try {
            modifying();
            path = handles.resolve(fh);
            before = Attributes.require(path);
            if (guard != null && !guard.toInstant().equals(before.ctime().toInstant())) {
                throw new Nfs3Error(Nfs3Error.NOT_SYNC); // section 3.3.2: the guard's ctime differs
            }
            apply(path, before, sattr);
            Xdr.putInt(out, NFS3_OK);
        } catch (Nfs3Error e) {
            fail(out, e);
        }
        Attributes.putWcc(out, before, Attributes.orNull(path), fsid);
    }

    private void lookup(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        byte[] name = name(in);
        Path dir = null;
        try {
            dir = handles.resolve(fh);
            Attributes dirAttributes = directory(dir);
            String component = component(name);
            Path path = switch (component) {
                case "." -> dir;
                case ".." -> parent(dir);
                default -> child(dir, component);
            };
            Attributes attributes = Attributes.require(path);
            Xdr.putInt(out, NFS3_OK);
            Xdr.putOpaque(out, handles.handle(path, attributes));
            Attributes.putPostOp(out, attributes, fsid);
            Attributes.putPostOp(out, dirAttributes, fsid);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(dir), fsid);
        }
    }

    private void access(ByteBuf in, ByteBuf out, AuthSys credential) {
        byte[] fh = fileHandle(in);
        int asked = Xdr.getInt(in);
        Path path = null;
        try {
            path = handles.resolve(fh);
            Attributes attributes = Attributes.require(path);
            Xdr.putInt(out, NFS3_OK);
            Attributes.putPostOp(out, attributes, fsid);
            Xdr.putInt(out, granted(attributes, credential) & asked);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(path), fsid);
        }
    }

    /** What the mode bits give the caller; uid 0 gets everything but executing a file no one may execute. */
    private int granted(Attributes attributes, AuthSys credential) {
        int uid = credential == null ? NOBODY : credential.uid();
        int mode = attributes.mode();
        int bits;
        if (uid == 0) {
            bits = 6 | ((mode & 0111) != 0 || attributes.isDirectory() ? 1 : 0);
        } else if (uid == attributes.uid()) {
            bits = mode >> 6;
        } else if (credential != null
                && (credential.gid() == attributes.gid() || credential.gids().contains(attributes.gid()))) {
            bits = mode >> 3;
        } else {
            bits = mode;
        }
        boolean directory = attributes.isDirectory();
        int granted = 0;
        if ((bits & 4) != 0) {
            granted |= ACCESS3_READ;
        }
        if ((bits & 1) != 0) {
            granted |= directory ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
        }
        if ((bits & 2) != 0 && !readOnly && (!directory || (bits & 1) != 0)) {
            granted |= ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
        }
        return granted;
    }

    private ByteBuf readlink(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        Path path = null;
        try {
            path = handles.resolve(fh);
            Attributes attributes = Attributes.require(path);
            if (attributes.type() != Attributes.NF3LNK) {
                throw new Nfs3Error(Nfs3Error.INVAL); // section 3.3.5: not a symbolic link
            }
            Path link = path;
            byte[] target = io(() -> Files.readSymbolicLink(link)).toString().getBytes(StandardCharsets.UTF_8);
            Xdr.putInt(out, NFS3_OK);
            Attributes.putPostOp(out, attributes, fsid);
            Xdr.putInt(out, target.length);
            return Unpooled.wrappedBuffer(target);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(path), fsid);
            return null;
        }
    }

    // ---- section 3.3.6, 3.3.7, 3.3.21: data ----

    private ByteBuf read(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        long offset = Xdr.getHyper(in);
        long count = Xdr.getUnsignedInt(in);
        Path path = null;
        ByteBuf data = null;
        try {
            path = handles.resolve(fh);
            Attributes attributes = regularFile(Attributes.require(path));
            if (offset < 0) {
                throw new Nfs3Error(Nfs3Error.INVAL);
            }
            data = PooledByteBufAllocator.DEFAULT.directBuffer((int) Math.min(count, MAX_IO));
            long size;
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, NOFOLLOW_LINKS)) {
                long position = offset;
                while (data.isWritable()) {
                    int got = data.writeBytes(channel, position, data.writableBytes());
                    if (got < 0) {
                        break;
                    }
                    position += got;
                }
                size = channel.size();
            } catch (IOException e) {
                throw Nfs3Error.of(e);
            }
            int length = data.readableBytes();
            octetsRead.add(length);
            Xdr.putInt(out, NFS3_OK);
            Attributes.putPostOp(out, attributes, fsid);
            Xdr.putInt(out, length);
            Xdr.putBoolean(out, offset + length >= size); // eof
            Xdr.putInt(out, length); // the opaque's length; its octets are the DDP-eligible item
            return data;
        } catch (Nfs3Error e) {
            if (data != null) {
                data.release();
            }
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(path), fsid);
            return null;
        } catch (RuntimeException e) {
            if (data != null) {
                data.release();
            }
            throw e;
        }
    }

    private void write(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        long offset = Xdr.getHyper(in);
        long count = Xdr.getUnsignedInt(in);
        int stable = Xdr.getInt(in);
        if (stable < UNSTABLE || stable > FILE_SYNC) {
            throw new XdrException("stable_how is " + stable + ", not 0, 1 or 2");
        }
        int length = Xdr.getLength(in, in.readableBytes(), "WRITE's data");
        int dataIndex = in.readerIndex();
        Path path = null;
        Attributes before = null;
        try {
            modifying();
            path = handles.resolve(fh);
            before = regularFile(Attributes.require(path));
            if (offset < 0) {
                throw new Nfs3Error(Nfs3Error.FBIG);
            }
            int octets = (int) Math.min(count, length);
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE, NOFOLLOW_LINKS)) {
                long position = offset;
                for (ByteBuffer piece : in.nioBuffers(dataIndex, octets)) {
                    while (piece.hasRemaining()) {
                        position += channel.write(piece, position);
                    }
                }
                if (stable != UNSTABLE) {
                    channel.force(stable == FILE_SYNC);
                }
            } catch (IOException e) {
                throw Nfs3Error.of(e);
            }
            octetsWritten.add(octets);
            Xdr.putInt(out, NFS3_OK);
            Attributes.putWcc(out, before, Attributes.orNull(path), fsid);
            Xdr.putInt(out, octets);
            Xdr.putInt(out, stable); // committed: as asked, which the force above made true
            Xdr.putFixedOpaque(out, writeVerifier);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putWcc(out, before, Attributes.orNull(path), fsid);
        }
    }

    private void commit(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        Xdr.getHyper(in); // offset
        Xdr.getInt(in); // count: the whole file is forced
        Path path = null;
        Attributes before = null;
        try {
            path = handles.resolve(fh);
            before = regularFile(Attributes.require(path));
            Path file = path;
            try (FileChannel channel = io(() -> FileChannel.open(file, StandardOpenOption.READ, NOFOLLOW_LINKS))) {
                channel.force(true);
            } catch (IOException e) {
                throw Nfs3Error.of(e);
            }
            Xdr.putInt(out, NFS3_OK);
            Attributes.putWcc(out, before, Attributes.orNull(path), fsid);
            Xdr.putFixedOpaque(out, writeVerifier);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putWcc(out, before, Attributes.orNull(path), fsid);
        }
    }

    // ---- section 3.3.8 to 3.3.15: making and unmaking names ----

    private void create(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        byte[] name = name(in);
        int how = Xdr.getInt(in);
        Sattr sattr = null;
        byte[] verifier = null;
        switch (how) {
            case UNCHECKED, GUARDED -> sattr = Sattr.decode(in);
            case EXCLUSIVE -> verifier = Xdr.getFixedOpaque(in, 8);
            default -> throw new XdrException("createmode3 is " + how + ", not 0, 1 or 2");
        }
        Path dir = null;
        Attributes dirBefore = null;
        try {
            modifying();
            dir = handles.resolve(fh);
            dirBefore = directory(dir);
            Path path = newEntry(dir, name, Nfs3Error.EXIST);
            boolean created = io(() -> {
                try {
                    Files.createFile(path);
                    return true;
                } catch (FileAlreadyExistsException e) {
                    return false;
                }
            });
            Attributes attributes = Attributes.require(path);
            if (verifier != null) {
                exclusive(path, attributes, verifier, created);
            } else if (!created && (how == GUARDED || attributes.type() != Attributes.NF3REG)) {
                throw new Nfs3Error(Nfs3Error.EXIST); // section 3.3.8: GUARDED, or not a file to reuse
            } else {
                apply(path, attributes, sattr);
            }
            created(out, path, dirBefore, dir);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putWcc(out, dirBefore, Attributes.orNull(dir), fsid);
        }
    }

    /**
     * EXCLUSIVE (section 3.3.8): the verifier is kept as the new file's atime and mtime seconds, as
     * Linux nfsd keeps it, so a retransmitted CREATE finds its own file; anyone else's is EXIST.
     */
    private static void exclusive(Path path, Attributes attributes, byte[] verifier, boolean created) {
        ByteBuffer v = ByteBuffer.wrap(verifier);
        FileTime atime = FileTime.from(Instant.ofEpochSecond(v.getInt() & 0xFFFF_FFFFL));
        FileTime mtime = FileTime.from(Instant.ofEpochSecond(v.getInt() & 0xFFFF_FFFFL));
        if (created) {
            io(() -> {
                Files.getFileAttributeView(path, BasicFileAttributeView.class, NOFOLLOW_LINKS).setTimes(mtime, atime, null);
                return null;
            });
        } else if (attributes.type() != Attributes.NF3REG || !attributes.atime().equals(atime)
                || !attributes.mtime().equals(mtime)) {
            throw new Nfs3Error(Nfs3Error.EXIST);
        }
    }

    private void mkdirOrSymlink(ByteBuf in, ByteBuf out, boolean symlink) {
        byte[] fh = fileHandle(in);
        byte[] name = name(in);
        Sattr sattr = Sattr.decode(in);
        String target = symlink ? Xdr.getString(in, MAX_PATH) : null;
        Path dir = null;
        Attributes dirBefore = null;
        try {
            modifying();
            dir = handles.resolve(fh);
            dirBefore = directory(dir);
            Path path = newEntry(dir, name, Nfs3Error.EXIST);
            if (symlink) {
                Path text = pathOf(target);
                io(() -> Files.createSymbolicLink(path, text));
                apply(path, Attributes.require(path), new Sattr(null, sattr.uid(), sattr.gid(), null, null, null));
            } else {
                io(() -> Files.createDirectory(path));
                apply(path, Attributes.require(path), sattr);
            }
            created(out, path, dirBefore, dir);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putWcc(out, dirBefore, Attributes.orNull(dir), fsid);
        }
    }

    /** MKNOD (section 3.3.11): devices, sockets and fifos are not made here. */
    private void mknod(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        name(in);
        Path dir = null;
        try {
            modifying();
            dir = handles.resolve(fh);
            throw new Nfs3Error(Nfs3Error.NOTSUPP);
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putWcc(out, null, Attributes.orNull(dir), fsid);
        }
    }

    /** CREATE, MKDIR and SYMLINK's result: {@code post_op_fh3}, {@code post_op_attr}, the directory's wcc. */
    private void created(ByteBuf out, Path path, Attributes dirBefore, Path dir) {
        Attributes attributes = Attributes.require(path);
        Xdr.putInt(out, NFS3_OK);
        Xdr.putBoolean(out, true);
        Xdr.putOpaque(out, handles.handle(path, attributes));
        Attributes.putPostOp(out, attributes, fsid);
        Attributes.putWcc(out, dirBefore, Attributes.orNull(dir), fsid);
    }

    private void remove(ByteBuf in, ByteBuf out, boolean rmdir) {
        byte[] fh = fileHandle(in);
        byte[] name = name(in);
        Path dir = null;
        Attributes dirBefore = null;
        try {
            modifying();
            dir = handles.resolve(fh);
            dirBefore = directory(dir);
            Path path = newEntry(dir, name, Nfs3Error.INVAL);
            Attributes attributes = Attributes.require(path);
            if (rmdir != attributes.isDirectory()) {
                throw new Nfs3Error(rmdir ? Nfs3Error.NOTDIR : Nfs3Error.ISDIR);
            }
            io(() -> {
                Files.delete(path);
                return null;
            });
            handles.forget(attributes.ino());
            Xdr.putInt(out, NFS3_OK);
        } catch (Nfs3Error e) {
            fail(out, e);
        }
        Attributes.putWcc(out, dirBefore, Attributes.orNull(dir), fsid);
    }

    private void rename(ByteBuf in, ByteBuf out) {
        byte[] fromFh = fileHandle(in);
        byte[] fromName = name(in);
        byte[] toFh = fileHandle(in);
        byte[] toName = name(in);
        Path fromDir = null;
        Path toDir = null;
        Attributes fromBefore = null;
        Attributes toBefore = null;
        try {
            modifying();
            fromDir = handles.resolve(fromFh);
            toDir = handles.resolve(toFh);
            fromBefore = directory(fromDir);
            toBefore = directory(toDir);
            Path from = newEntry(fromDir, fromName, Nfs3Error.INVAL);
            Path to = newEntry(toDir, toName, Nfs3Error.INVAL);
            Attributes attributes = Attributes.require(from);
            io(() -> Files.move(from, to, StandardCopyOption.ATOMIC_MOVE)); // rename(2): replaces the target
            handles.remember(to, attributes.ino());
            Xdr.putInt(out, NFS3_OK);
        } catch (Nfs3Error e) {
            fail(out, e);
        }
        Attributes.putWcc(out, fromBefore, Attributes.orNull(fromDir), fsid);
        Attributes.putWcc(out, toBefore, Attributes.orNull(toDir), fsid);
    }

    private void link(ByteBuf in, ByteBuf out) {
        byte[] fh = fileHandle(in);
        byte[] dirFh = fileHandle(in);
        byte[] name = name(in);
        Path file = null;
        Path dir = null;
        Attributes dirBefore = null;
        try {
            modifying();
            file = handles.resolve(fh);
            dir = handles.resolve(dirFh);
            dirBefore = directory(dir);
            Path path = newEntry(dir, name, Nfs3Error.EXIST);
            Path existing = file;
            io(() -> Files.createLink(path, existing));
            Xdr.putInt(out, NFS3_OK);
        } catch (Nfs3Error e) {
            fail(out, e);
        }
        Attributes.putPostOp(out, Attributes.orNull(file), fsid);
        Attributes.putWcc(out, dirBefore, Attributes.orNull(dir), fsid);
    }

    // ---- section 3.3.16, 3.3.17: directories ----

    /**
     * READDIR and READDIRPLUS. An entry's cookie is a 62-bit hash of its name (1 and 2 for "." and
     * ".."), and the listing goes in cookie order, so a cookie names a place in the directory that
     * survives changes to it, as ext4's hash cookies do: a client that removes entries while it
     * lists (rm -r) goes on after the last one it saw and misses none. The cookie verifier is
     * therefore zero and never checked (section 3.3.16 lets a server that needs none send zeros).
     * Two names of one hash would lose the second after a reply ending on the first: one chance in
     * 2^62 per pair. A reply never exceeds {@code count} (READDIR) or {@code maxcount}, nor its
     * entries' names and cookies {@code dircount} (READDIRPLUS).
     */
    private void readdir(ByteBuf in, ByteBuf out, boolean plus) {
        byte[] fh = fileHandle(in);
        long cookie = Xdr.getHyper(in);
        Xdr.getFixedOpaque(in, 8); // the cookie verifier: this server needs none (see above)
        long dircount = Xdr.getUnsignedInt(in);
        long maxcount = plus ? Xdr.getUnsignedInt(in) : dircount;
        Path dir = null;
        try {
            dir = handles.resolve(fh);
            Attributes attributes = directory(dir);
            List<String> names = listing(dir);
            Xdr.putInt(out, NFS3_OK);
            Attributes.putPostOp(out, attributes, fsid);
            Xdr.putFixedOpaque(out, NO_VERIFIER);
            long room = Math.min(maxcount, MAX_DIRECTORY_REPLY) - out.readableBytes() - 8; // and the end: no entry, eof
            long nameRoom = dircount;
            int index = 0;
            while (index < names.size() && Long.compareUnsigned(cookie(names.get(index)), cookie) <= 0) {
                index++; // the entries up to the cookie were sent, or were there when it was
            }
            int sent = 0;
            for (; index < names.size(); index++) {
                String name = names.get(index);
                Path path = switch (name) {
                    case "." -> dir;
                    case ".." -> parent(dir);
                    default -> child(dir, name);
                };
                Attributes entry = Attributes.orNull(path);
                if (entry == null) {
                    continue; // gone since the listing
                }
                byte[] octets = name.getBytes(StandardCharsets.UTF_8);
                int base = 8 + 4 + octets.length + Xdr.pad(octets.length) + 8; // fileid, name, cookie
                int size = 4 + base + (plus ? 4 + Attributes.FATTR3_SIZE + 4 + 4 + FileHandles.LENGTH : 0);
                if (size > room || (plus && base > nameRoom)) {
                    break;
                }
                room -= size;
                nameRoom -= base;
                Xdr.putBoolean(out, true);
                Xdr.putHyper(out, entry.ino());
                Xdr.putOpaque(out, octets);
                Xdr.putHyper(out, cookie(name));
                byte[] handle = handles.handle(path, entry);
                if (plus) {
                    Attributes.putPostOp(out, entry, fsid);
                    Xdr.putBoolean(out, true);
                    Xdr.putOpaque(out, handle);
                }
                sent++;
            }
            if (sent == 0 && index < names.size()) {
                throw new Nfs3Error(Nfs3Error.TOOSMALL); // section 3.3.16: not even one entry fits
            }
            Xdr.putBoolean(out, false);
            Xdr.putBoolean(out, index == names.size());
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(dir), fsid);
        }
    }

    private static List<String> listing(Path dir) {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        } catch (IOException e) {
            throw Nfs3Error.of(e);
        }
        names.add(".");
        names.add("..");
        names.sort(Comparator.comparingLong(Nfs3Service::cookie));
        return names;
    }

    /** An entry's READDIR cookie: 1 for ".", 2 for "..", else a 62-bit FNV-1a hash of the name, from 3 up. */
    static long cookie(String name) {
        return switch (name) {
            case "." -> 1;
            case ".." -> 2;
            default -> {
                long hash = 0xcbf29ce484222325L;
                for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
                    hash = (hash ^ (b & 0xFF)) * 0x100000001b3L;
                }
                hash ^= hash >>> 29; // FNV's low bits mix poorly; fold the high ones in
                yield 3 + ((hash & 0x3FFF_FFFF_FFFF_FFFFL) % (0x3FFF_FFFF_FFFF_FFFFL - 3));
            }
        };
    }


    // ---- section 3.3.18 to 3.3.20: the file system ----

    private void fsInformation(ByteBuf in, ByteBuf out, int procedure) {
        byte[] fh = fileHandle(in);
        Path path = null;
        try {
            path = handles.resolve(fh);
            Attributes attributes = Attributes.require(path);
            if (procedure == FSSTAT) {
                FileStore store = io(() -> Files.getFileStore(handles.root()));
                long total = io(store::getTotalSpace);
                long free = io(store::getUnallocatedSpace);
                long available = io(store::getUsableSpace);
                Xdr.putInt(out, NFS3_OK);
                Attributes.putPostOp(out, attributes, fsid);
                Xdr.putHyper(out, total);
                Xdr.putHyper(out, free);
                Xdr.putHyper(out, available);
                // Java has no statvfs f_files: one inode per 4 KiB, as mke2fs's default ratio gives
                Xdr.putHyper(out, total / 4096);
                Xdr.putHyper(out, free / 4096);
                Xdr.putHyper(out, available / 4096);
                Xdr.putInt(out, 0); // invarsec
                return;
            }
            Xdr.putInt(out, NFS3_OK);
            Attributes.putPostOp(out, attributes, fsid);
            if (procedure == FSINFO) {
                Xdr.putInt(out, MAX_IO); // rtmax
                Xdr.putInt(out, MAX_IO); // rtpref
                Xdr.putInt(out, 4096); // rtmult
                Xdr.putInt(out, MAX_IO); // wtmax
                Xdr.putInt(out, MAX_IO); // wtpref
                Xdr.putInt(out, 4096); // wtmult
                Xdr.putInt(out, DTPREF);
                Xdr.putHyper(out, Long.MAX_VALUE); // maxfilesize
                Xdr.putInt(out, 0); // time_delta: 1 ns
                Xdr.putInt(out, 1);
                Xdr.putInt(out, FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
            } else {
                Xdr.putInt(out, 65000); // linkmax: ext4's
                Xdr.putInt(out, NAME_MAX);
                Xdr.putBoolean(out, true); // no_trunc
                Xdr.putBoolean(out, true); // chown_restricted
                Xdr.putBoolean(out, false); // case_insensitive
                Xdr.putBoolean(out, true); // case_preserving
            }
        } catch (Nfs3Error e) {
            fail(out, e);
            Attributes.putPostOp(out, Attributes.orNull(path), fsid);
        }
    }

    // ---- arguments, names and checks ----

    /** {@code nfs_fh3}: at most 64 octets (section 2.5); its form is checked when it is resolved. */
    private static byte[] fileHandle(ByteBuf in) {
        return Xdr.getOpaque(in, 64);
    }

    /** {@code filename3}: its octets, checked by {@link #component} once the arguments are decoded. */
    private static byte[] name(ByteBuf in) {
        return Xdr.getOpaque(in, MAX_PATH);
    }

    /** One path component: not empty, no '/' or NUL, at most 255 octets. */
    private static String component(byte[] name) {
        if (name.length > NAME_MAX) {
            throw new Nfs3Error(Nfs3Error.NAMETOOLONG);
        }
        if (name.length == 0) {
            throw new Nfs3Error(Nfs3Error.INVAL);
        }
        for (byte b : name) {
            if (b == '/' || b == 0) {
                throw new Nfs3Error(Nfs3Error.INVAL);
            }
        }
        return new String(name, StandardCharsets.UTF_8);
    }

    /** A name to make or unmake in {@code dir}: "." and ".." get {@code dotStatus}. */
    private static Path newEntry(Path dir, byte[] name, int dotStatus) {
        String component = component(name);
        if (component.equals(".") || component.equals("..")) {
            throw new Nfs3Error(dotStatus);
        }
        return child(dir, component);
    }

    private static Path child(Path dir, String component) {
        try {
            return dir.resolve(component);
        } catch (InvalidPathException e) {
            throw Nfs3Error.of(e);
        }
    }

    /** ".." of a directory: its parent, and the root for the root (the export is the whole tree). */
    private Path parent(Path dir) {
        return dir.equals(handles.root()) ? dir : dir.getParent();
    }

    /**
     * A SYMLINK's text as a path. Java parses it, so repeated and trailing slashes are dropped from
     * what READLINK later returns; the path resolves the same.
     */
    private static Path pathOf(String text) {
        try {
            return Path.of(text);
        } catch (InvalidPathException e) {
            throw Nfs3Error.of(e);
        }
    }

    private static Attributes directory(Path dir) {
        Attributes attributes = Attributes.require(dir);
        if (!attributes.isDirectory()) {
            throw new Nfs3Error(Nfs3Error.NOTDIR);
        }
        return attributes;
    }

    /** READ, WRITE and COMMIT take regular files: a directory is ISDIR, anything else INVAL. */
    private static Attributes regularFile(Attributes attributes) {
        if (attributes.isDirectory()) {
            throw new Nfs3Error(Nfs3Error.ISDIR);
        }
        if (attributes.type() != Attributes.NF3REG) {
            throw new Nfs3Error(Nfs3Error.INVAL);
        }
        return attributes;
    }

    private void modifying() {
        if (readOnly) {
            throw new Nfs3Error(Nfs3Error.ROFS);
        }
    }

    private static void fail(ByteBuf out, Nfs3Error e) {
        out.clear();
        Xdr.putInt(out, e.status);
    }

    /** Sets what {@code sattr} asks: size, then mode, owner, times (section 2.5, {@code sattr3}). */
    private static void apply(Path path, Attributes current, Sattr sattr) {
        boolean link = current.type() == Attributes.NF3LNK;
        try {
            if (sattr.size() != null) {
                regularFile(current);
                try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE, NOFOLLOW_LINKS)) {
                    long size = sattr.size();
                    if (size < 0) {
                        throw new Nfs3Error(Nfs3Error.FBIG);
                    } else if (size < channel.size()) {
                        channel.truncate(size);
                    } else if (size > channel.size()) {
                        channel.write(ByteBuffer.allocate(1), size - 1);
                    }
                }
            }
            if (sattr.mode() != null && !link) { // Linux keeps no mode on a link; the type was checked by lstat
                Files.setAttribute(path, "unix:mode", sattr.mode() & 07777);
            }
            if (sattr.uid() != null && sattr.uid() != current.uid()) {
                Files.setAttribute(path, "unix:uid", sattr.uid(), NOFOLLOW_LINKS);
            }
            if (sattr.gid() != null && sattr.gid() != current.gid()) {
                Files.setAttribute(path, "unix:gid", sattr.gid(), NOFOLLOW_LINKS);
            }
            if (sattr.atime() != null || sattr.mtime() != null) {
                BasicFileAttributeView view = link
                        ? Files.getFileAttributeView(path, BasicFileAttributeView.class, NOFOLLOW_LINKS)
                        : Files.getFileAttributeView(path, BasicFileAttributeView.class);
                view.setTimes(sattr.mtime(), sattr.atime(), null);
            }
        } catch (IOException e) {
            throw Nfs3Error.of(e);
        }
    }

    /** A file system call whose IOException becomes its NFS status. */
    private static <T> T io(IoCall<T> call) {
        try {
            return call.call();
        } catch (IOException e) {
            throw Nfs3Error.of(e);
        }
    }

    @FunctionalInterface
    private interface IoCall<T> {
        T call() throws IOException;
    }

    /**
     * {@code sattr3} (section 2.5): what to set, {@code null} for what not to. SET_TO_SERVER_TIME is
     * resolved to the server's clock when it is decoded.
     */
    record Sattr(Integer mode, Integer uid, Integer gid, Long size, FileTime atime, FileTime mtime) {

        static Sattr decode(ByteBuf in) {
            Integer mode = Xdr.getBoolean(in) ? Xdr.getInt(in) : null;
            Integer uid = Xdr.getBoolean(in) ? Xdr.getInt(in) : null;
            Integer gid = Xdr.getBoolean(in) ? Xdr.getInt(in) : null;
            Long size = Xdr.getBoolean(in) ? Xdr.getHyper(in) : null;
            return new Sattr(mode, uid, gid, size, time(in), time(in));
        }

        private static FileTime time(ByteBuf in) {
            int how = Xdr.getInt(in);
            return switch (how) {
                case 0 -> null; // DONT_CHANGE
                case 1 -> FileTime.from(Instant.now()); // SET_TO_SERVER_TIME
                case 2 -> Attributes.getTime(in); // SET_TO_CLIENT_TIME
                default -> throw new XdrException("time_how is " + how + ", not 0, 1 or 2");
            };
        }
    }
}
