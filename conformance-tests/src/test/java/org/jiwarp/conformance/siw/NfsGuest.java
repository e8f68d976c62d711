package org.jiwarp.conformance.siw;

/** Ports and paths of the NFS variant of the siw peer ({@code build-nfs-peer.sh}, {@code nfs-serve.sh}). */
final class NfsGuest {

    /** svcrdma's port: RPC-over-RDMA (RFC 8267 section 6 assigns 20049 to NFS over RDMA). */
    static final int RDMA_PORT = 20049;
    /** rpc.mountd's fixed TCP port. */
    static final int MOUNT_PORT = 20048;
    /** The exported tmpfs. */
    static final String EXPORT = "/srv/nfs";

    private NfsGuest() {
    }
}
