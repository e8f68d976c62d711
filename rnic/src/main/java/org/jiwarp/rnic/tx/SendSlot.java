package org.jiwarp.rnic.tx;

import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A posted send work request and its progress. A queue pair's slots are recycled (by its
 * completions, which hand them out): nothing holds one once its completion is reported.
 */
public final class SendSlot {
    public long id;
    public SendWorkRequest.Opcode opcode;
    public Sge[] sgl;
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
    /**
     * For the slot of a prepared request ({@code PreparedSend}): what tells it the slot has left the
     * queue; {@code null} for any other slot.
     */
    public final Runnable prepared;
    /** The slot rung after this one while both wait in the {@link Doorbell}. */
    volatile SendSlot nextRung;
    /** The next free slot while this one is in the completions' free list. */
    public SendSlot nextFree;

    /** The doorbell's stand-in, never posted. */
    public SendSlot() {
        this.prepared = null;
    }

    /** A slot for {@code wr}, whose gather list is {@code sgl} (not copied: a request is immutable once built). */
    public SendSlot(SendWorkRequest wr, Sge[] sgl) {
        this(wr, sgl, null);
    }

    /** The slot of a prepared request; {@code retired} runs each time it leaves the queue. */
    public SendSlot(SendWorkRequest wr, Sge[] sgl, Runnable retired) {
        this.prepared = retired;
        fill(wr, sgl);
    }

    /** Takes the request's fields: a fresh post of this slot. */
    public SendSlot fill(SendWorkRequest wr, Sge[] sgl) {
        this.id = wr.id();
        this.opcode = wr.opcode();
        this.sgl = sgl;
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
    public Operands operands() {
        return operands == null ? Operands.NONE : operands;
    }

    /** RFC 7306 operands of a work request (section 4: Immediate Data; section 5: the atomic's fields). */
    public record Operands(long immediateData, long data, long dataMask, long compareData, long compareMask) {
        static final Operands NONE = new Operands(0, 0, 0, 0, 0);
    }

    /** Ready to be posted again. */
    public void reset() {
        done = false;
        status = WcStatus.SUCCESS;
        error = null;
        original = 0;
        issued = 0;
    }

    /** A Write, Send or Immediate Data: complete once its octets have reached TCP. */
    public boolean completesWhenWritten() {
        return !opcode.awaitsResponse();
    }
}
