/**
 * An NFS version 3 server over one local directory (RFC 1813): the NFS program's procedures
 * (section 3.3.0 to 3.3.21) in {@code Nfs3Service}, MOUNT version 3 (section 5.2) in
 * {@code MountService}, file handles (section 2.5, {@code nfs_fh3}) in {@code FileHandles},
 * {@code fattr3}, {@code post_op_attr} and {@code wcc_data} (section 2.5) in
 * {@code Attributes}, the {@code nfsstat3} codes (section 2.6) in {@code Nfs3Error}; the whole
 * opened and handed out as {@link org.jiwarp.rpcrdma.RpcHandler}s by {@link NfsExport}. READ's data
 * and READLINK's path are DDP-eligible (RFC 8267 section 4).
 *
 * <p>AUTH_SYS (RFC 5531 appendix A) is taken as the caller's identity only to answer ACCESS from
 * the mode bits; every file operation runs as the server process, with its rights: there is no
 * uid switching, and files are made owned by the server's user. Serve only what that user may
 * give to every client that can reach the port.
 *
 * <p>Paths are never followed through a symbolic link: every name is one component looked up
 * with {@code lstat}, LOOKUP of a link gives the link's handle and the client follows it with
 * READLINK. The server is for one user at a time and not hardened against the exported tree
 * being changed under it by local processes beyond not failing.
 */
package org.jiwarp.rpcrdma.nfs.server;
