package org.jiwarp.rdmap;

import io.netty.buffer.ByteBuf;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import org.jiwarp.wire.rdmap.AtomicOperation;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The Responder side of RFC 7306 atomic operations (sections 5.1 to 5.3 and 8.2): checks an Atomic
 * Request's target and operation, executes it, and returns the Original Remote Data Value for the
 * Atomic Response. {@link ReadResponder} feeds it from queue 1, where Atomic Requests share the
 * MSNs, the IRD and the response order with RDMA Read Requests.
 *
 * <p>Atomicity: every atomic operation in this JVM runs under one lock, so atomics on one RNIC are
 * atomic with respect to each other whichever queue pair or event loop runs them (and, beyond what
 * RFC 7306 asks, across RNICs of the process too). RDMA Writes and local stores are not serialized
 * with them, as on any RNIC.
 *
 * <p>Checks, in order, each an RDMAP Terminate: the Atomic Operation code (a reserved one is a
 * remote operation error, Unexpected OpCode), then the target as {@link TaggedAccess#checkAtomicTarget}
 * checks it (invalid STag, STag not associated, access rights without REMOTE_ATOMIC, TO wrap, base
 * or bounds violation), and a misaligned Tagged Offset, which RFC 7306 section 8.2 answers with a
 * remote operation error, "Catastrophic error, localized to RDMAP Stream".
 */
public final class AtomicResponder {

    /** Serializes every atomic operation of the process (see the class comment). */
    private static final Object LOCK = new Object();

    private final StagTable stags;
    private final int pd;
    private final int stream;

    public AtomicResponder(StagTable stags, int pd) {
        this(stags, pd, TaggedBuffer.ANY_STREAM);
    }

    /** @param stream this stream's number, which a target STag bound to one stream must name */
    public AtomicResponder(StagTable stags, int pd, int stream) {
        this.stags = stags;
        this.pd = pd;
        this.stream = stream;
    }

    /**
     * Checks and executes the Atomic Request whose 52-octet header starts at {@code header}.
     *
     * @return the value the target held before the operation
     * @throws TerminateException on the first failed check; nothing is changed then
     */
    public long execute(ByteBuf ulpdu, int header) {
        int code = AtomicRequestHeader.operationCode(ulpdu, header);
        AtomicOperation operation = AtomicOperation.valueOf(code);
        // RFC 7306 section 10.1: only FetchAdd (0x0) and CmpSwap (0x2) are defined; the others are reserved.
        if (operation == null) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "Atomic Operation " + code
                    + " is reserved");
        }
        int stag = AtomicRequestHeader.remoteStag(ulpdu, header);
        long taggedOffset = AtomicRequestHeader.remoteTaggedOffset(ulpdu, header);
        TaggedBuffer target = TaggedAccess.checkAtomicTarget(stags, stag, taggedOffset, pd, stream);
        long data = AtomicRequestHeader.data(ulpdu, header);
        long dataMask = AtomicRequestHeader.dataMask(ulpdu, header);
        long compare = AtomicRequestHeader.compareData(ulpdu, header);
        long compareMask = AtomicRequestHeader.compareMask(ulpdu, header);
        try {
            synchronized (LOCK) {
                return TaggedPlacement.readModifyWrite(target, taggedOffset, operation, data, dataMask, compare,
                        compareMask);
            }
        } catch (TerminateException e) {
            // Invalidated between the check and the operation: as if the check had failed.
            throw new TerminateException(TaggedAccess.RDMAP_FOR_DDP.getOrDefault(e.error(), e.error()),
                    "Atomic target: " + e.getMessage());
        }
    }
}
