package org.jiwarp.rnic;

import org.jiwarp.wire.rdmap.TerminateError;

/**
 * One work completion. Mutable so that {@link CompletionQueue#poll(WorkCompletion[])} can fill a
 * caller's preallocated array without allocating.
 */
public final class WorkCompletion {

    private long workRequestId;
    private WcStatus status;
    private WcOpcode opcode;
    private long byteLength;
    private QueuePair queuePair;
    private int invalidatedStag;
    private boolean solicited;
    private TerminateError error;
    private long immediateData;

    public WorkCompletion() {
    }

    WorkCompletion set(long workRequestId, WcStatus status, WcOpcode opcode, long byteLength, QueuePair queuePair,
            int invalidatedStag, boolean solicited, TerminateError error) {
        this.workRequestId = workRequestId;
        this.status = status;
        this.opcode = opcode;
        this.byteLength = byteLength;
        this.queuePair = queuePair;
        this.invalidatedStag = invalidatedStag;
        this.solicited = solicited;
        this.error = error;
        this.immediateData = 0;
        return this;
    }

    WorkCompletion immediateData(long data) {
        this.immediateData = data;
        return this;
    }

    /** Copies {@code other} into this completion. */
    public WorkCompletion copyFrom(WorkCompletion other) {
        return set(other.workRequestId, other.status, other.opcode, other.byteLength, other.queuePair,
                other.invalidatedStag, other.solicited, other.error).immediateData(other.immediateData);
    }

    /**
     * The 8 octets of an Immediate Data message, for {@link WcOpcode#RECEIVE_IMMEDIATE_DATA}; the
     * value before the operation, for a successful atomic; else 0.
     */
    public long immediateData() {
        return immediateData;
    }

    /** The id the work request was posted with. */
    public long workRequestId() {
        return workRequestId;
    }

    public WcStatus status() {
        return status;
    }

    public WcOpcode opcode() {
        return opcode;
    }

    /** Octets received (for {@link WcOpcode#RECEIVE}) or moved (for the others). */
    public long byteLength() {
        return byteLength;
    }

    public QueuePair queuePair() {
        return queuePair;
    }

    /** The STag a Send with Invalidate invalidated at this end, or 0. */
    public int invalidatedStag() {
        return invalidatedStag;
    }

    /** {@code true} for a receive whose Send asked for a Solicited Event. */
    public boolean solicited() {
        return solicited;
    }

    /** For an error completion caused by a Terminate (sent or received): its RFC error; else {@code null}. */
    public TerminateError error() {
        return error;
    }

    @Override
    public String toString() {
        return "WorkCompletion{id=" + workRequestId + ", " + status + ", " + opcode + ", bytes=" + byteLength
                + (invalidatedStag != 0 ? String.format(", invalidated 0x%08x", invalidatedStag) : "")
                + (opcode == WcOpcode.RECEIVE_IMMEDIATE_DATA ? String.format(", immediate 0x%x", immediateData) : "")
                + (solicited ? ", solicited" : "") + (error != null ? ", " + error.describe() : "") + "}";
    }
}
