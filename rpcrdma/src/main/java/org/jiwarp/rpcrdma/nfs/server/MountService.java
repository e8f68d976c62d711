package org.jiwarp.rpcrdma.nfs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.RpcCall;
import org.jiwarp.rpcrdma.RpcHandler;
import org.jiwarp.rpcrdma.RpcReply;
import org.jiwarp.rpcrdma.Xdr;
import org.jiwarp.rpcrdma.XdrException;

/**
 * The MOUNT program, version 3 (RFC 1813 section 5.2) for the one export: MNT hands out the root
 * file handle for exactly {@link NfsExport#mountPath()}, with AUTH_SYS as the flavor to use. The
 * mount list DUMP answers is kept per client machine name (from AUTH_SYS, "unknown" without one)
 * and holds at most {@link #MAX_MOUNTS} entries.
 */
final class MountService implements RpcHandler {

    static final int NULL = 0;
    static final int MNT = 1;
    static final int DUMP = 2;
    static final int UMNT = 3;
    static final int UMNTALL = 4;
    static final int EXPORT = 5;

    static final int MNT3_OK = 0;
    static final int MNT3ERR_NOENT = 2;
    /** {@code MNTPATHLEN} (section 5.1.1). */
    static final int MNTPATHLEN = 1024;
    static final int MAX_MOUNTS = 256;

    private final String mountPath;
    private final byte[] rootHandle;
    private final LongAdder calls;
    private final Map<String, String> mounts = new ConcurrentHashMap<>();

    MountService(String mountPath, byte[] rootHandle, LongAdder calls) {
        this.mountPath = mountPath;
        this.rootHandle = rootHandle.clone();
        this.calls = calls;
    }

    @Override
    public RpcReply handle(RpcCall call) {
        calls.increment();
        ByteBuf in = call.arguments();
        String client = call.credential() == null ? "unknown" : call.credential().machineName();
        ByteBuf out = PooledByteBufAllocator.DEFAULT.heapBuffer(128);
        try {
            switch (call.procedure()) {
                case NULL, UMNTALL -> {
                    if (call.procedure() == UMNTALL) {
                        mounts.remove(client);
                    }
                }
                case MNT -> mnt(Xdr.getString(in, MNTPATHLEN), client, out);
                case DUMP -> {
                    for (Map.Entry<String, String> mount : mounts.entrySet()) {
                        Xdr.putBoolean(out, true);
                        Xdr.putString(out, mount.getKey());
                        Xdr.putString(out, mount.getValue());
                    }
                    Xdr.putBoolean(out, false);
                }
                case UMNT -> mounts.remove(client, Xdr.getString(in, MNTPATHLEN));
                case EXPORT -> {
                    Xdr.putBoolean(out, true);
                    Xdr.putString(out, mountPath);
                    Xdr.putBoolean(out, false); // groups: none, so any client
                    Xdr.putBoolean(out, false);
                }
                default -> {
                    out.release();
                    return RpcReply.procUnavail();
                }
            }
        } catch (XdrException e) {
            out.release();
            return RpcReply.garbageArgs();
        }
        return RpcReply.success(out);
    }

    private void mnt(String path, String client, ByteBuf out) {
        if (!path.equals(mountPath)) {
            Xdr.putInt(out, MNT3ERR_NOENT); // section 5.2.1: only the one export is served
            return;
        }
        if (mounts.size() < MAX_MOUNTS || mounts.containsKey(client)) {
            mounts.put(client, path);
        }
        Xdr.putInt(out, MNT3_OK);
        Xdr.putOpaque(out, rootHandle);
        Xdr.putInt(out, 1);
        Xdr.putInt(out, AuthSys.FLAVOR);
    }
}
