package org.jiwarp.rnic;

import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A posted send work request and its progress. A queue pair's slots are recycled (see {@link
 * Completions#slot}): nothing holds one once its completion is reported.
 */
final class SendSlot {
    long id;
    SendWorkRequest.Opcode opcode;
    Sge[] sgl;
    long remoteAddress;
    int rkey;
    int invalidateStag;
    boolean signaled;
    boolean fence;
    boolean solicited;
    long length;
    /** RFC 7306: Immediate Data's 8 octets or an atomic's operands; {@code null} for the other opcodes. */
    Operands operands;
    /** The value an atomic found (reported in its completion). */
    long original;
    boolean done;
    WcStatus status = WcStatus.SUCCESS;
    TerminateError error;
    /** The issue number of a Write, Send or Immediate Data that went to TCP, else 0. */
    long issued;
    /** The prepared request this slot belongs to, told when the slot leaves the queue; or {@code null}. */
    final PreparedSend prepared;
    /** The slot rung after this one while both wait in the {@link Doorbell}. */
    volatile SendSlot nextRung;
    /** The next free slot while this one is in {@link Completions}' free list. */
    SendSlot nextFree;

    /** The doorbell's stand-in, never posted. */
    SendSlot() {
        this.prepared = null;
    }

    SendSlot(SendWorkRequest wr) {
        this(wr, null);
    }

    SendSlot(SendWorkRequest wr, PreparedSend prepared) {
        this.prepared = prepared;
        fill(wr);
    }

    /** Takes the request's fields: a fresh post of this slot. */
    SendSlot fill(SendWorkRequest wr) {
        this.id = wr.id();
        this.opcode = wr.opcode();
        this.sgl = wr.sglUnsafe(); // immutable once the request is built
        this.remoteAddress = wr.remoteAddress();
        this.rkey = wr.rkey();
        this.invalidateStag = wr.invalidateStag();
        this.signaled = wr.signaled();
        this.fence = wr.isFence();
        this.solicited = wr.isSolicited();
        this.length = wr.length();
        // Only RFC 7306 work carries operands: the other slots stay small.
        this.operands = wr.immediateData() == 0 && wr.data() == 0 && wr.dataMask() == 0 && wr.compareData() == 0
                && wr.compareMask() == 0 ? null : new Operands(wr.immediateData(), wr.data(), wr.dataMask(),
                wr.compareData(), wr.compareMask());
        reset();
        return this;
    }

    /** The RFC 7306 operands, zeros when the request has none. */
    Operands operands() {
        return operands == null ? Operands.NONE : operands;
    }

    /** RFC 7306 operands of a work request (section 4: Immediate Data; section 5: the atomic's fields). */
    record Operands(long immediateData, long data, long dataMask, long compareData, long compareMask) {
        static final Operands NONE = new Operands(0, 0, 0, 0, 0);
    }

    /** Ready to be posted again. */
    void reset() {
        done = false;
        status = WcStatus.SUCCESS;
        error = null;
        original = 0;
        issued = 0;
    }

    /** A Write, Send or Immediate Data: complete once its octets have reached TCP. */
    boolean completesWhenWritten() {
        return !opcode.awaitsResponse();
    }
}
