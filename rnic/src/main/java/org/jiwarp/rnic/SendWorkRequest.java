package org.jiwarp.rnic;

import java.util.Arrays;

/**
 * A send-queue work request, as {@code ibv_send_wr}: Send (optionally with Invalidate and/or a
 * Solicited Event), RDMA Write, or RDMA Read. Build one with the static factories, adjust it with
 * the fluent setters, and post it; the queue pair copies what it needs, so the object may be reused.
 */
public final class SendWorkRequest {

    /** The operation. */
    public enum Opcode {
        SEND, SEND_WITH_INVALIDATE, RDMA_WRITE, RDMA_READ
    }

    private long id;
    private Opcode opcode;
    private Sge[] sgl;
    private long remoteAddress;
    private int rkey;
    private int invalidateStag;
    private boolean signaled = true;
    private boolean fence;
    private boolean solicited;

    private SendWorkRequest(long id, Opcode opcode, Sge[] sgl) {
        this.id = id;
        this.opcode = opcode;
        this.sgl = sgl.clone();
    }

    /** A Send gathering {@code sgl}. */
    public static SendWorkRequest send(long id, Sge... sgl) {
        return new SendWorkRequest(id, Opcode.SEND, sgl);
    }

    /** A Send with Invalidate: the peer invalidates {@code stag} once the message is placed. */
    public static SendWorkRequest sendWithInvalidate(long id, int stag, Sge... sgl) {
        SendWorkRequest wr = new SendWorkRequest(id, Opcode.SEND_WITH_INVALIDATE, sgl);
        wr.invalidateStag = stag;
        return wr;
    }

    /** An RDMA Write of {@code sgl} to the peer's region {@code rkey} at {@code remoteAddress}. */
    public static SendWorkRequest write(long id, long remoteAddress, int rkey, Sge... sgl) {
        SendWorkRequest wr = new SendWorkRequest(id, Opcode.RDMA_WRITE, sgl);
        wr.remoteAddress = remoteAddress;
        wr.rkey = rkey;
        return wr;
    }

    /** An RDMA Read of {@code sink.length()} octets from the peer's {@code rkey} at {@code remoteAddress} into {@code sink}. */
    public static SendWorkRequest read(long id, long remoteAddress, int rkey, Sge sink) {
        SendWorkRequest wr = new SendWorkRequest(id, Opcode.RDMA_READ, new Sge[] {sink});
        wr.remoteAddress = remoteAddress;
        wr.rkey = rkey;
        return wr;
    }

    /** Completes without a work completion on success (errors still complete). */
    public SendWorkRequest unsignaled() {
        this.signaled = false;
        return this;
    }

    /** Whether it completes with a work completion on success (the default) or retires silently. */
    public SendWorkRequest signaled(boolean signaled) {
        this.signaled = signaled;
        return this;
    }

    /** Waits for every earlier RDMA Read to complete before it starts (RFC 5040 section 5.5). */
    public SendWorkRequest fence() {
        this.fence = true;
        return this;
    }

    /** A Send that asks for a Solicited Event at the peer. */
    public SendWorkRequest solicited() {
        this.solicited = true;
        return this;
    }

    public SendWorkRequest id(long id) {
        this.id = id;
        return this;
    }

    public long id() {
        return id;
    }

    public Opcode opcode() {
        return opcode;
    }

    public Sge[] sgl() {
        return sgl.clone();
    }

    Sge[] sglUnsafe() {
        return sgl;
    }

    public long remoteAddress() {
        return remoteAddress;
    }

    public int rkey() {
        return rkey;
    }

    public int invalidateStag() {
        return invalidateStag;
    }

    public boolean signaled() {
        return signaled;
    }

    public boolean isFence() {
        return fence;
    }

    public boolean isSolicited() {
        return solicited;
    }

    /** Total octets of the gather list. */
    public long length() {
        long total = 0;
        for (Sge sge : sgl) {
            total += sge.length();
        }
        return total;
    }

    @Override
    public String toString() {
        return "SendWorkRequest{id=" + id + ", " + opcode + ", sgl=" + Arrays.toString(sgl)
                + (opcode == Opcode.RDMA_WRITE || opcode == Opcode.RDMA_READ
                        ? String.format(", remote 0x%x rkey 0x%08x", remoteAddress, rkey) : "")
                + (signaled ? "" : ", unsignaled") + (fence ? ", fence" : "") + (solicited ? ", solicited" : "") + "}";
    }
}
