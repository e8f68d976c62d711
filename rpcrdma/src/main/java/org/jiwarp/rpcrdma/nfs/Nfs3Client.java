package org.jiwarp.rpcrdma.nfs;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.Rpc;
import org.jiwarp.rpcrdma.RpcException;
import org.jiwarp.rpcrdma.RpcRdmaCall;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.RpcRdmaReply;
import org.jiwarp.rpcrdma.RpcTransport;
import org.jiwarp.rpcrdma.TcpRpcClient;
import org.jiwarp.rpcrdma.Xdr;

/**
 * An NFSv3 client (RFC 1813) over RPC-over-RDMA with the NFS upper-layer binding of RFC 8267: MOUNT
 * over TCP for the root file handle, then GETATTR, LOOKUP, CREATE, READ (its data in a Write
 * chunk), WRITE (its data in a Read chunk) and READDIR (its reply in a Reply chunk when it is
 * long) over RDMA. The same calls go over TCP ({@link #connect(RpcTransport, byte[], int, int)}
 * with a {@link org.jiwarp.rpcrdma.TcpRpcClient}), where the chunks' data travels inline. Enough
 * to list, read, write and stat; no locking, no caching.
 */
public final class Nfs3Client implements AutoCloseable {

    public static final int NFS_PROGRAM = 100003;
    public static final int NFS_V3 = 3;
    public static final int MOUNT_PROGRAM = 100005;
    public static final int MOUNT_V3 = 3;

    static final int GETATTR = 1;
    static final int LOOKUP = 3;
    static final int READ = 6;
    static final int WRITE = 7;
    static final int CREATE = 8;
    static final int READDIR = 16;
    static final int MNT = 1;
    static final int FILE_SYNC = 2;

    /** Octets asked per READDIR: more than the inline threshold, so long listings come in a Reply chunk. */
    static final int READDIR_COUNT = 64 * 1024;

    private final RpcTransport rpc;
    private final AuthSys credential;
    private final byte[] root;
    private final int rsize;
    private final int wsize;

    private Nfs3Client(RpcTransport rpc, AuthSys credential, byte[] root, int rsize, int wsize) {
        this.rpc = rpc;
        this.credential = credential;
        this.root = root;
        this.rsize = rsize;
        this.wsize = wsize;
    }

    /**
     * Mounts {@code path} with MOUNT version 3 over TCP and connects RPC-over-RDMA to the NFS server.
     *
     * @param rsize, wsize octets per READ and WRITE, at most 1 MiB
     */
    public static Nfs3Client mount(Rnic rnic, InetSocketAddress mountd, InetSocketAddress nfs, String path,
            int rsize, int wsize, RpcRdmaClient.Options options) {
        AuthSys credential = AuthSys.root("jiwarp");
        byte[] root = mountHandle(mountd, path, credential);
        RpcRdmaClient rpc = RpcRdmaClient.connect(rnic, nfs, options);
        return new Nfs3Client(rpc, credential, root, rsize, wsize);
    }

    /** Connects RPC-over-RDMA to the NFS server, for a directory handle MOUNT gave already. */
    public static Nfs3Client connect(Rnic rnic, InetSocketAddress nfs, byte[] root, int rsize, int wsize,
            RpcRdmaClient.Options options) {
        return connect(RpcRdmaClient.connect(rnic, nfs, options), root, rsize, wsize);
    }

    /**
     * An NFS client over {@code transport} (RPC-over-RDMA or TCP), for a directory handle MOUNT
     * gave already; the transport is the client's from now on and closes with it.
     */
    public static Nfs3Client connect(RpcTransport transport, byte[] root, int rsize, int wsize) {
        return new Nfs3Client(transport, AuthSys.root("jiwarp"), root.clone(), rsize, wsize);
    }

    /** MNT (RFC 1813 section 5.2.1): the file handle of an exported directory. */
    public static byte[] mountHandle(InetSocketAddress mountd, String path, AuthSys credential) {
        try (TcpRpcClient tcp = TcpRpcClient.connect(mountd)) {
            ByteBuf reply = tcp.call(MOUNT_PROGRAM, MOUNT_V3, MNT, credential, out -> Xdr.putString(out, path));
            try {
                int status = Xdr.getInt(reply);
                if (status != 0) {
                    throw new RpcException("the server refused to mount " + path + ": " + NfsException.describe(status));
                }
                return Xdr.getOpaque(reply, 64);
            } finally {
                reply.release();
            }
        }
    }

    public byte[] root() {
        return root.clone();
    }

    public RpcTransport transport() {
        return rpc;
    }

    public Fattr3 getattr(byte[] fh) {
        return nfs("GETATTR", RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, GETATTR, out -> Xdr.putOpaque(out, fh)),
                Fattr3::decode);
    }

    /** LOOKUP of each component of a slash-separated path under {@code dir}. */
    public byte[] lookupPath(byte[] dir, String path) {
        byte[] fh = dir;
        for (String name : path.split("/")) {
            if (!name.isEmpty()) {
                fh = lookup(fh, name);
            }
        }
        return fh;
    }

    public byte[] lookup(byte[] dir, String name) {
        return nfs("LOOKUP " + name, RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, LOOKUP, out -> {
            Xdr.putOpaque(out, dir);
            Xdr.putString(out, name);
        }), in -> Xdr.getOpaque(in, 64));
    }

    /** CREATE UNCHECKED with size 0: a new empty file, or the existing one truncated (RFC 1813 section 3.3.8). */
    public byte[] create(byte[] dir, String name, int mode) {
        byte[] fh = nfs("CREATE " + name, RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, CREATE, out -> {
            Xdr.putOpaque(out, dir);
            Xdr.putString(out, name);
            Xdr.putInt(out, 0); // UNCHECKED
            Xdr.putBoolean(out, true);
            Xdr.putInt(out, mode);
            Xdr.putBoolean(out, false); // uid
            Xdr.putBoolean(out, false); // gid
            Xdr.putBoolean(out, true);
            Xdr.putHyper(out, 0); // size
            Xdr.putInt(out, 0); // atime: DONT_CHANGE
            Xdr.putInt(out, 0); // mtime: DONT_CHANGE
        }), in -> Xdr.getBoolean(in) ? Xdr.getOpaque(in, 64) : null);
        return fh != null ? fh : lookup(dir, name);
    }

    /**
     * READ (RFC 1813 section 3.3.6) with the data in a Write chunk (RFC 8267 section 4): appends
     * up to {@code count} octets at {@code offset} to {@code sink}.
     *
     * @return whether the server said end of file
     */
    public boolean read(byte[] fh, long offset, int count, ByteBuf sink) {
        RpcRdmaCall call = RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, READ, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, offset);
            Xdr.putInt(out, count);
        }).withWriteChunk(count);
        RpcRdmaReply reply = rpc.call(call, credential);
        try {
            ByteBuf in = reply.message();
            Rpc.getAcceptedReply(in);
            int status = Xdr.getInt(in);
            Fattr3.decodePostOp(in);
            if (status != 0) {
                throw new NfsException("READ", status);
            }
            int got = Xdr.getInt(in);
            boolean eof = Xdr.getBoolean(in);
            int length = Xdr.getInt(in);
            if (length != got) {
                throw new RpcException("a READ reply says " + got + " octets and carries " + length);
            }
            ByteBuf data = reply.writeChunkData();
            if (in.readableBytes() >= length && data.readableBytes() == 0) {
                data = in; // a short reply may come inline (RFC 8166 section 3.5.2: the server may reduce it or not)
            }
            if (data.readableBytes() < length) {
                throw new RpcException("a READ reply says " + length + " octets; the Write chunk holds "
                        + data.readableBytes());
            }
            sink.writeBytes(data, data.readerIndex(), length);
            return eof;
        } finally {
            reply.release();
        }
    }

    /**
     * WRITE FILE_SYNC (RFC 1813 section 3.3.7) with the data in a Read chunk (RFC 8267 section
     * 4); {@code data} must be a direct buffer, readable octets are written.
     *
     * @return octets the server wrote
     */
    public int write(byte[] fh, long offset, ByteBuf data) {
        int count = data.readableBytes();
        RpcRdmaCall call = RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, WRITE, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, offset);
            Xdr.putInt(out, count);
            Xdr.putInt(out, FILE_SYNC);
            Xdr.putInt(out, count); // the opaque's length; its octets are the Read chunk
        }).withReadChunk(data);
        return nfs("WRITE", call, in -> {
            skipWcc(in);
            int written = Xdr.getInt(in);
            Xdr.getInt(in); // committed
            Xdr.getFixedOpaque(in, 8); // verifier
            return written;
        });
    }

    /** One READDIR entry (RFC 1813 section 3.3.16). */
    public record Entry(long fileid, String name, long cookie) {
    }

    /** All entries of a directory, READDIR after READDIR until end of directory. */
    public List<Entry> readdir(byte[] dir) {
        List<Entry> entries = new ArrayList<>();
        long cookie = 0;
        byte[] verifier = new byte[8];
        while (true) {
            long from = cookie;
            byte[] verf = verifier;
            RpcRdmaCall call = RpcRdmaCall.inline(NFS_PROGRAM, NFS_V3, READDIR, out -> {
                Xdr.putOpaque(out, dir);
                Xdr.putHyper(out, from);
                Xdr.putFixedOpaque(out, verf);
                Xdr.putInt(out, READDIR_COUNT);
            }).withReplyChunk(READDIR_COUNT + 4096);
            int before = entries.size();
            boolean[] eof = new boolean[1];
            verifier = nfs("READDIR", call, in -> {
                Fattr3.decodePostOp(in); // the directory's attributes
                byte[] v = Xdr.getFixedOpaque(in, 8);
                while (Xdr.getBoolean(in)) {
                    entries.add(new Entry(Xdr.getHyper(in), Xdr.getString(in, 255), Xdr.getHyper(in)));
                }
                eof[0] = Xdr.getBoolean(in);
                return v;
            });
            if (eof[0]) {
                return entries;
            }
            if (entries.size() == before) {
                throw new RpcException("READDIR returned no entry and no end of directory");
            }
            cookie = entries.get(entries.size() - 1).cookie();
        }
    }

    public int rsize() {
        return rsize;
    }

    public int wsize() {
        return wsize;
    }

    private <T> T nfs(String operation, RpcRdmaCall call, java.util.function.Function<ByteBuf, T> ok) {
        RpcRdmaReply reply = rpc.call(call, credential);
        try {
            ByteBuf in = reply.message();
            Rpc.getAcceptedReply(in);
            int status = Xdr.getInt(in);
            if (status != 0) {
                throw new NfsException(operation, status);
            }
            return ok.apply(in);
        } finally {
            reply.release();
        }
    }

    private static void skipWcc(ByteBuf in) {
        if (Xdr.getBoolean(in)) {
            in.skipBytes(24); // pre_op_attr: size, mtime, ctime
        }
        Fattr3.decodePostOp(in);
    }

    @Override
    public void close() {
        rpc.close();
    }
}
