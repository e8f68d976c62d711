package org.jiwarp.rnic;


/** What a work completion completes ({@code ibv_wc_opcode}). */
public enum WcOpcode {
    SEND, RDMA_WRITE, RDMA_READ, RECEIVE,
    /** RFC 7306: an Immediate Data request this side sent. */
    IMMEDIATE_DATA,
    /** RFC 7306: an Immediate Data message used up a receive; its 8 octets are in the completion. */
    RECEIVE_IMMEDIATE_DATA,
    /** RFC 7306 fetch-and-add (masked or not). */
    ATOMIC_FETCH_ADD,
    /** RFC 7306 swap (masked or not). */
    ATOMIC_SWAP,
    /** RFC 7306 compare-and-swap (masked or not). */
    ATOMIC_COMPARE_SWAP;

    /** What a send work request of {@code opcode} completes as. */
    public static WcOpcode of(SendWorkRequest.Opcode opcode) {
        switch (opcode) {
            case RDMA_WRITE:
                return RDMA_WRITE;
            case RDMA_READ:
                return RDMA_READ;
            case IMMEDIATE_DATA:
                return IMMEDIATE_DATA;
            case ATOMIC_FETCH_ADD:
                return ATOMIC_FETCH_ADD;
            case ATOMIC_SWAP:
                return ATOMIC_SWAP;
            case ATOMIC_COMPARE_SWAP:
                return ATOMIC_COMPARE_SWAP;
            default:
                return SEND;
        }
    }
}
