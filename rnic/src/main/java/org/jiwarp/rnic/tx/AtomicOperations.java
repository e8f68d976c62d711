package org.jiwarp.rnic.tx;

import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.wire.rdmap.AtomicOperation;

/**
 * The RFC 7306 Atomic Operation code of each atomic work request: a swap travels as a CmpSwap whose
 * Compare Mask is 0 (it always matches), since RFC 7306 section 10.1 reserves subcode 0x1.
 */
final class AtomicOperations {

    private AtomicOperations() {
    }

    static int wireCode(SendWorkRequest.Opcode opcode) {
        switch (opcode) {
            case ATOMIC_FETCH_ADD:
                return AtomicOperation.FETCH_ADD.code();
            case ATOMIC_SWAP:
            case ATOMIC_COMPARE_SWAP:
                return AtomicOperation.COMPARE_SWAP.code();
            default:
                throw new IllegalArgumentException(opcode + " is not an atomic operation");
        }
    }
}
