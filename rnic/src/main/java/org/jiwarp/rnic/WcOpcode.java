package org.jiwarp.rnic;

/** What a work completion completes. */
public enum WcOpcode {
    SEND, RDMA_WRITE, RDMA_READ, RECEIVE
}
