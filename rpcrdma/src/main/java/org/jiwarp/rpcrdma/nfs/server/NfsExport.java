package org.jiwarp.rpcrdma.nfs.server;

import java.io.IOException;
import java.nio.file.Path;
import org.jiwarp.rpcrdma.RpcHandler;

/**
 * One local directory served as an NFSv3 export (RFC 1813): the NFS program (100003 version 3)
 * and MOUNT (100005 version 3) as {@link RpcHandler}s, for any RPC transport (RPC-over-RDMA's
 * {@code RpcRdmaServer}, RPC over TCP's {@code RpcTcpServer}).
 *
 * <p>API agreed for issue 24's parallel work; the implementation follows.
 */
public final class NfsExport implements AutoCloseable {

    /** How the export is served. */
    public record Options(boolean readOnly) {
        public static Options defaults() {
            return new Options(false);
        }
    }

    /** Counters for a status line; totals since the export opened. */
    public record Statistics(long calls, long octetsRead, long octetsWritten, long errors) {
    }

    private NfsExport() {
    }

    /**
     * Opens {@code directory} for serving.
     *
     * @throws IOException when it is not a directory that can be read
     */
    public static NfsExport open(Path directory, Options options) throws IOException {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    /** The export's directory, as given. */
    public Path directory() {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    /** The path MOUNT's MNT accepts for this export (the directory's absolute path). */
    public String mountPath() {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    /** NFS version 3 (program 100003): for the RDMA and TCP listeners. */
    public RpcHandler nfs() {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    /** MOUNT version 3 (program 100005): for the MOUNT TCP listener. */
    public RpcHandler mount() {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    public Statistics statistics() {
        throw new UnsupportedOperationException("issue 24: in progress");
    }

    @Override
    public void close() {
    }
}
