package org.jiwarp.rpcrdma;

/**
 * A Read segment (RFC 8166 section 3.4.5; {@code xdr_read_chunk} in section 4.1.2): an RDMA
 * segment the responder pulls with RDMA Read, and the XDR position in the RPC message where its
 * data belongs. Segments of the same chunk share a position; position zero makes a Position Zero
 * Read chunk (the whole call).
 */
public record ReadSegment(int position, RdmaSegment segment) {
}
