package org.jiwarp.rnic.cq;

import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Where a queue pair's {@link Completions} report: one completion queue, as the engine sees it, for
 * that queue pair. The completion queue makes one per queue pair ({@code CompletionQueue.sinkFor}),
 * naming the queue pair in its completions, so that only the RNIC
 * can add completions: the verbs never call down into the engine to learn what completed, and the
 * engine never calls up but through this.
 */
public interface CompletionSink {

    /**
     * Adds one completion, filled into an entry of the queue's own (recycled where the caller never
     * holds it).
     *
     * @param immediateData RFC 7306 Immediate Data, or an atomic's original value; 0 when none
     */
    void add(long workRequestId, WcStatus status, WcOpcode opcode, long byteLength, int invalidatedStag,
            boolean solicited, TerminateError error, long immediateData);
}
