package org.jiwarp.rnic;

import java.util.Objects;

/**
 * What a queue pair is created with ({@code ibv_qp_init_attr} plus the iWARP read limits): its
 * protection domain, completion queues, queue depths, and the IRD/ORD it asks for in the MPA
 * enhanced setup (the connection may negotiate them down).
 */
public final class QpConfig {

    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private int sendDepth = 1024;
    private int receiveDepth = 1024;
    private int ird = 16;
    private int ord = 16;
    private int maxSge = 16;
    private int inlineThreshold = 1024;

    public QpConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue receiveCq) {
        this.pd = Objects.requireNonNull(pd);
        this.sendCq = Objects.requireNonNull(sendCq);
        this.receiveCq = Objects.requireNonNull(receiveCq);
    }

    public QpConfig sendDepth(int depth) {
        this.sendDepth = positive("send depth", depth);
        return this;
    }

    public QpConfig receiveDepth(int depth) {
        this.receiveDepth = positive("receive depth", depth);
        return this;
    }

    /** Inbound RDMA Reads this QP will serve at once. */
    public QpConfig ird(int ird) {
        this.ird = positive("IRD", ird);
        return this;
    }

    /** Outbound RDMA Reads this QP will have outstanding at once. */
    public QpConfig ord(int ord) {
        this.ord = positive("ORD", ord);
        return this;
    }

    public QpConfig maxSge(int maxSge) {
        this.maxSge = positive("max SGE", maxSge);
        return this;
    }

    /**
     * DDP segments of at most this many payload octets are copied into their FPDU, which then goes
     * to TCP as one buffer; longer ones reference the registered memory (zero copy). Copying a small
     * payload costs less than tracking its pieces. 0 never copies. Either way the data is read when
     * the work request is issued, so the source must stay unchanged until it completes.
     */
    public QpConfig inlineThreshold(int octets) {
        if (octets < 0) {
            throw new IllegalArgumentException("inline threshold must not be negative: " + octets);
        }
        this.inlineThreshold = octets;
        return this;
    }

    public int inlineThreshold() {
        return inlineThreshold;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue receiveCq() {
        return receiveCq;
    }

    public int sendDepth() {
        return sendDepth;
    }

    public int receiveDepth() {
        return receiveDepth;
    }

    public int ird() {
        return ird;
    }

    public int ord() {
        return ord;
    }

    public int maxSge() {
        return maxSge;
    }

    private static int positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
        return value;
    }
}
