package org.jiwarp.rpcrdma;

/**
 * An RDMA segment (RFC 8166 section 3.4.3; {@code xdr_rdma_segment} in section 4.1.2): a
 * registered region the other end reads from or writes into, named by its handle (the STag), its
 * length, and the offset (Tagged Offset) of its first octet.
 */
public record RdmaSegment(int handle, int length, long offset) {

    @Override
    public String toString() {
        return String.format("%d@0x%x:0x%08x", Integer.toUnsignedLong(length), offset, handle);
    }
}
