package org.jiwarp.rnic;

import java.util.Arrays;

/**
 * A send-queue work request, as {@code ibv_send_wr}: Send (optionally with Invalidate and/or a
 * Solicited Event), RDMA Write, RDMA Read, and the RFC 7306 extensions: Immediate Data and the
 * atomic operations (fetch-and-add, swap, compare-and-swap, each with its masked form). Build one
 * with the static factories, adjust it with the fluent setters, and post it; the queue pair copies
 * what it needs, so the object may be reused.
 *
 * <p>An atomic operation works on the 8 octets at {@code remoteAddress} (8-octet aligned) of a peer
 * region registered with {@link Access#REMOTE_ATOMIC}, read and written as a big-endian 64-bit
 * value (a {@link java.nio.ByteBuffer}'s default order); the value it held before lands in the
 * 8-octet {@code result} entry. A queue pair sends RFC 7306 work only when its {@link QpConfig#rfc7306}
 * says the peer implements it; otherwise such work completes at once in
 * {@link WcStatus#LOCAL_QP_OPERATION_ERROR} and nothing goes on the wire.
 */
public final class SendWorkRequest {

    /** The operation. */
    public enum Opcode {
        SEND, SEND_WITH_INVALIDATE, RDMA_WRITE, RDMA_READ,
        /** RFC 7306 section 6.3: 8 octets delivered in the peer's receive completion. */
        IMMEDIATE_DATA,
        /** RFC 7306 FetchAdd. */
        ATOMIC_FETCH_ADD,
        /** A swap: on the wire an RFC 7306 CmpSwap with Compare Mask 0 (subcode 0x1 is reserved). */
        ATOMIC_SWAP,
        /** RFC 7306 CmpSwap. */
        ATOMIC_COMPARE_SWAP;

        /** An RFC 7306 atomic operation: answered by an Atomic Response, counted against the ORD. */
        public boolean atomic() {
            return this == ATOMIC_FETCH_ADD || this == ATOMIC_SWAP || this == ATOMIC_COMPARE_SWAP;
        }

        /** Waits for a response from the peer (a Read or an atomic), and counts against the ORD. */
        public boolean awaitsResponse() {
            return this == RDMA_READ || atomic();
        }
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
    private long immediateData;
    private long data;
    private long dataMask;
    private long compareData;
    private long compareMask;

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

    /**
     * Immediate Data (RFC 7306 section 6.3): {@code data} arrives in the peer's receive completion
     * ({@link WorkCompletion#immediateData()}), using up one of its posted receives.
     */
    public static SendWorkRequest immediateData(long id, long data) {
        SendWorkRequest wr = new SendWorkRequest(id, Opcode.IMMEDIATE_DATA, new Sge[0]);
        wr.immediateData = data;
        return wr;
    }

    /** Fetch and add: adds {@code add} to the peer's value; the value before lands in {@code result}. */
    public static SendWorkRequest fetchAdd(long id, long remoteAddress, int rkey, Sge result, long add) {
        return maskedFetchAdd(id, remoteAddress, rkey, result, add, 0);
    }

    /**
     * Masked fetch and add: as {@link #fetchAdd}, but a bit set in {@code fieldEnds} (RFC 7306's Add
     * Mask) drops the carry out of that bit, so the 64 bits hold independent counters.
     */
    public static SendWorkRequest maskedFetchAdd(long id, long remoteAddress, int rkey, Sge result, long add,
            long fieldEnds) {
        return atomic(id, Opcode.ATOMIC_FETCH_ADD, remoteAddress, rkey, result, add, fieldEnds, 0, 0);
    }

    /**
     * Swap: writes {@code swap}; the value before lands in {@code result}. RFC 7306 has no swap of
     * its own (subcode 0x1 is reserved): it goes as a CmpSwap whose Compare Mask is 0, which always
     * matches, so any RFC 7306 responder runs it.
     */
    public static SendWorkRequest swap(long id, long remoteAddress, int rkey, Sge result, long swap) {
        return maskedSwap(id, remoteAddress, rkey, result, swap, -1L);
    }

    /** Masked swap: writes the bits of {@code swap} that {@code swapMask} selects. */
    public static SendWorkRequest maskedSwap(long id, long remoteAddress, int rkey, Sge result, long swap,
            long swapMask) {
        return atomic(id, Opcode.ATOMIC_SWAP, remoteAddress, rkey, result, swap, swapMask, 0, 0);
    }

    /** Compare and swap: writes {@code swap} when the value equals {@code compare}; the value before lands in {@code result}. */
    public static SendWorkRequest compareSwap(long id, long remoteAddress, int rkey, Sge result, long compare,
            long swap) {
        return maskedCompareSwap(id, remoteAddress, rkey, result, compare, -1L, swap, -1L);
    }

    /**
     * Masked compare and swap: when the bits {@code compareMask} selects equal those of
     * {@code compare}, writes the bits of {@code swap} that {@code swapMask} selects.
     */
    public static SendWorkRequest maskedCompareSwap(long id, long remoteAddress, int rkey, Sge result, long compare,
            long compareMask, long swap, long swapMask) {
        return atomic(id, Opcode.ATOMIC_COMPARE_SWAP, remoteAddress, rkey, result, swap, swapMask, compare,
                compareMask);
    }

    private static SendWorkRequest atomic(long id, Opcode opcode, long remoteAddress, int rkey, Sge result,
            long data, long dataMask, long compareData, long compareMask) {
        if (result.length() != Long.BYTES) {
            throw new IllegalArgumentException("an atomic operation's result entry holds 8 octets, not "
                    + result.length());
        }
        SendWorkRequest wr = new SendWorkRequest(id, opcode, new Sge[] {result});
        wr.remoteAddress = remoteAddress;
        wr.rkey = rkey;
        wr.data = data;
        wr.dataMask = dataMask;
        wr.compareData = compareData;
        wr.compareMask = compareMask;
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

    /** The 8 octets of an Immediate Data request. */
    public long immediateData() {
        return immediateData;
    }

    /** An atomic operation's Add Data or Swap Data. */
    public long data() {
        return data;
    }

    /** An atomic operation's Add Mask (field ends) or Swap Mask. */
    public long dataMask() {
        return dataMask;
    }

    /** A compare-and-swap's Compare Data. */
    public long compareData() {
        return compareData;
    }

    /** A compare-and-swap's Compare Mask. */
    public long compareMask() {
        return compareMask;
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
                + (opcode == Opcode.RDMA_WRITE || opcode == Opcode.RDMA_READ || opcode.atomic()
                        ? String.format(", remote 0x%x rkey 0x%08x", remoteAddress, rkey) : "")
                + (opcode == Opcode.IMMEDIATE_DATA ? String.format(", data 0x%x", immediateData) : "")
                + (opcode.atomic() ? String.format(", data 0x%x mask 0x%x compare 0x%x mask 0x%x", data, dataMask,
                        compareData, compareMask) : "")
                + (signaled ? "" : ", unsignaled") + (fence ? ", fence" : "") + (solicited ? ", solicited" : "") + "}";
    }
}
