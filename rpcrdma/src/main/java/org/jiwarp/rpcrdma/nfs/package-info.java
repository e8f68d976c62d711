/**
 * An NFS version 3 client (RFC 1813 sections 3.3.1-3.3.16 for the procedures it makes, 5.2.1 for
 * MOUNT's MNT) over RPC-over-RDMA with the NFS upper-layer binding of RFC 8267 section 4: READ's
 * data is DDP-eligible and comes in a Write chunk, WRITE's in a Read chunk, READDIR's long reply
 * in a Reply chunk; MOUNT goes over TCP (section 5.1).
 */
package org.jiwarp.rpcrdma.nfs;
