package org.jiwarp.rnic;

import org.jiwarp.wire.rdmap.AtomicOperation;

/** The RFC 7306 Atomic Operation code of each atomic work request. */
final class AtomicOperations {

    private AtomicOperations() {
    }

    static int wireCode(SendWorkRequest.Opcode opcode) {
        switch (opcode) {
            case ATOMIC_FETCH_ADD:
                return AtomicOperation.FETCH_ADD.code();
            case ATOMIC_SWAP:
                return AtomicOperation.SWAP.code();
            case ATOMIC_COMPARE_SWAP:
                return AtomicOperation.COMPARE_SWAP.code();
            default:
                throw new IllegalArgumentException(opcode + " is not an atomic operation");
        }
    }
}
