package org.jiwarp.rpcrdma.nfs.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.atomic.LongAdder;
import org.jiwarp.rpcrdma.RpcHandler;
import org.jiwarp.rpcrdma.RpcPrograms;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;

/**
 * One local directory served as an NFSv3 export (RFC 1813): the NFS program (100003 version 3)
 * and MOUNT (100005 version 3) as {@link RpcHandler}s, for any RPC transport (RPC-over-RDMA's
 * {@code RpcRdmaServer}, RPC over TCP's {@code RpcTcpServer}).
 *
 * <pre>{@code
 * try (NfsExport export = NfsExport.open(Path.of("/srv/data"), NfsExport.Options.defaults())) {
 *     RpcHandler programs = RpcPrograms.builder()
 *             .add(100003, 3, export.nfs()).add(100005, 3, export.mount()).build();
 *     ...
 * }
 * }</pre>
 *
 * <p>File handles name files by device and inode under an id of the directory's real path, so
 * they stay good across a restart on the same directory (see {@code FileHandles}). Each opening
 * draws a new random write verifier (RFC 1813 section 3.3.7): a client that wrote UNSTABLE data
 * before a restart sees it change and writes again.
 */
public final class NfsExport implements AutoCloseable {

    /**
     * How the export is served.
     *
     * @param readOnly every procedure that would change the tree answers NFS3ERR_ROFS
     */
    public record Options(boolean readOnly) {
        public static Options defaults() {
            return new Options(false);
        }
    }

    /**
     * Counters for a status line; totals since the export opened. {@code errors} counts calls
     * answered with an NFS3ERR_* other than NOENT (a name looked up that is not there is an answer,
     * not a failure) and calls whose arguments did not decode.
     */
    public record Statistics(long calls, long octetsRead, long octetsWritten, long errors) {
    }

    private final Path directory;
    private final String mountPath;
    private final Nfs3Service service;
    /**
     * NFS version 3 alone and MOUNT version 3 alone, every other program PROG_UNAVAIL and other
     * versions PROG_MISMATCH (RFC 5531 section 9): the Linux client asks NFSACL (100227) on the NFS
     * port, and an NFS answer to its GETACL reads as an empty ACL that denies every write.
     */
    private final RpcHandler nfs;
    private final RpcHandler mount;

    private NfsExport(Path directory, String mountPath, Nfs3Service service, MountService mount) {
        this.directory = directory;
        this.mountPath = mountPath;
        this.service = service;
        this.nfs = RpcPrograms.builder().add(Nfs3Client.NFS_PROGRAM, Nfs3Client.NFS_V3, service).build();
        this.mount = RpcPrograms.builder().add(Nfs3Client.MOUNT_PROGRAM, Nfs3Client.MOUNT_V3, mount).build();
    }

    /**
     * Opens {@code directory} for serving.
     *
     * @throws IOException when it is not a directory that can be read
     */
    public static NfsExport open(Path directory, Options options) throws IOException {
        Path real = directory.toRealPath();
        if (!Files.isDirectory(real)) {
            throw new NotDirectoryException(directory.toString());
        }
        if (!Files.isReadable(real) || !Files.isExecutable(real)) {
            throw new IOException("the directory " + directory + " cannot be read");
        }
        FileHandles handles = new FileHandles(real);
        byte[] verifier = new byte[8];
        new SecureRandom().nextBytes(verifier);
        LongAdder calls = new LongAdder();
        String mountPath = directory.toAbsolutePath().normalize().toString();
        Nfs3Service nfs = new Nfs3Service(handles, options.readOnly(), verifier, calls);
        return new NfsExport(directory, mountPath, nfs, new MountService(mountPath, handles.rootHandle(), calls));
    }

    /** The export's directory, as given. */
    public Path directory() {
        return directory;
    }

    /** The path MOUNT's MNT accepts for this export (the directory's absolute path). */
    public String mountPath() {
        return mountPath;
    }

    /** NFS version 3 (program 100003), no other program or version: for the RDMA and TCP listeners. */
    public RpcHandler nfs() {
        return nfs;
    }

    /** MOUNT version 3 (program 100005), no other program or version: for the MOUNT TCP listener. */
    public RpcHandler mount() {
        return mount;
    }

    /** Calls to both programs, READ and WRITE octets, and NFS replies that were not NFS3_OK or did not decode. */
    public Statistics statistics() {
        return new Statistics(service.calls.sum(), service.octetsRead.sum(), service.octetsWritten.sum(),
                service.errors.sum());
    }

    /** Nothing is held open between calls: closing only marks the end of use. */
    @Override
    public void close() {
    }
}
