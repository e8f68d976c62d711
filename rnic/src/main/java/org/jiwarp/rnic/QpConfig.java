package org.jiwarp.rnic;

import java.util.Objects;

/**
 * What a queue pair is created with ({@code ibv_qp_init_attr} plus the iWARP read limits): its
 * protection domain, completion queues, queue depths, and the IRD/ORD it asks for in the MPA
 * enhanced setup (the connection may negotiate them down).
 *
 * <p>Immutable: each method named after a setting returns a copy with that setting changed, so
 * {@code new QpConfig(pd, cq, cq).ord(8).sendDepth(256)} reads as a builder, and no call can change
 * a configuration a queue pair already holds.
 */
public final class QpConfig {

    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final int sendDepth;
    private final int receiveDepth;
    private final int ird;
    private final int ord;
    private final int maxSge;
    private final int inlineThreshold;
    private final boolean rfc7306;
    private final SharedReceiveQueue srq;

    public QpConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue receiveCq) {
        this(Objects.requireNonNull(pd), Objects.requireNonNull(sendCq), Objects.requireNonNull(receiveCq), 1024,
                1024, 16, 16, 16, 1024, false, null);
    }

    private QpConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue receiveCq, int sendDepth,
            int receiveDepth, int ird, int ord, int maxSge, int inlineThreshold, boolean rfc7306,
            SharedReceiveQueue srq) {
        this.pd = pd;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.sendDepth = sendDepth;
        this.receiveDepth = receiveDepth;
        this.ird = ird;
        this.ord = ord;
        this.maxSge = maxSge;
        this.inlineThreshold = inlineThreshold;
        this.rfc7306 = rfc7306;
        this.srq = srq;
    }

    public QpConfig sendDepth(int depth) {
        return new QpConfig(pd, sendCq, receiveCq, positive("send depth", depth), receiveDepth, ird, ord, maxSge,
                inlineThreshold, rfc7306, srq);
    }

    public QpConfig receiveDepth(int depth) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, positive("receive depth", depth), ird, ord, maxSge,
                inlineThreshold, rfc7306, srq);
    }

    /** Inbound RDMA Reads this QP will serve at once. */
    public QpConfig ird(int ird) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, positive("IRD", ird), ord, maxSge,
                inlineThreshold, rfc7306, srq);
    }

    /** Outbound RDMA Reads this QP will have outstanding at once. */
    public QpConfig ord(int ord) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, ird, positive("ORD", ord), maxSge,
                inlineThreshold, rfc7306, srq);
    }

    public QpConfig maxSge(int maxSge) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, ird, ord, positive("max SGE", maxSge),
                inlineThreshold, rfc7306, srq);
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
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, ird, ord, maxSge, octets, rfc7306, srq);
    }

    /**
     * Whether the peer implements RFC 7306 (atomics and Immediate Data): only then does this queue
     * pair send them; otherwise such work requests complete at once in
     * {@link WcStatus#LOCAL_QP_OPERATION_ERROR}. Off by default: Linux siw does not implement RFC
     * 7306 and terminates the stream on its opcodes. Inbound RFC 7306 messages are served either way.
     */
    public QpConfig rfc7306(boolean peerSupportsIt) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, ird, ord, maxSge, inlineThreshold,
                peerSupportsIt, srq);
    }

    /**
     * Takes the queue pair's receives from {@code srq} ({@code ibv_qp_init_attr.srq}): its untagged
     * Sends land in the shared queue's receives, its own receive queue is gone ({@link
     * QueuePair#postReceive} refuses, {@link #receiveDepth} is unused), and its completions still go
     * to its receive completion queue. {@code null}: a receive queue of its own.
     */
    public QpConfig srq(SharedReceiveQueue srq) {
        return new QpConfig(pd, sendCq, receiveCq, sendDepth, receiveDepth, ird, ord, maxSge, inlineThreshold,
                rfc7306, srq);
    }

    /** The shared receive queue the queue pair takes its receives from; {@code null} when none. */
    public SharedReceiveQueue srq() {
        return srq;
    }

    public boolean rfc7306() {
        return rfc7306;
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
