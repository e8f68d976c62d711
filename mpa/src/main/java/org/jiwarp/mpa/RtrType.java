package org.jiwarp.mpa;

/**
 * The ready-to-receive frames of RFC 6581 section 3: in peer-to-peer mode the initiator's first
 * FPDU is one of these, and the responder sends nothing before it arrives.
 */
public enum RtrType {
    /** A zero-length Send (QN 0, MSN 1): consumes a receive buffer at the responder. */
    SEND,
    /** A zero-length RDMA Write. */
    WRITE,
    /** A zero-length RDMA Read Request (QN 1, MSN 1), answered by a zero-length Read Response. */
    READ
}
