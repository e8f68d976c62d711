package org.jiwarp.cli.bench;

/**
 * What a benchmark moves, as perftest's {@code ib_write_*}, {@code ib_read_*}, {@code ib_send_*}
 * and {@code ib_atomic_*} (RFC 7306 fetch-and-add and compare-and-swap on 8 octets).
 */
public enum BenchOp {
    WRITE("RDMA Write"),
    READ("RDMA Read"),
    SEND("Send"),
    FETCH_ADD("atomic fetch-and-add"),
    COMPARE_SWAP("atomic compare-and-swap"),
    /** {@code --op send --imm}: RFC 7306 Immediate Data, 8 octets delivered in the receive completion. */
    IMMEDIATE("Immediate Data"),
    /** On the command line only: both atomics, one after the other. */
    ATOMIC("atomic");

    private final String displayName;

    BenchOp(String displayName) {
        this.displayName = displayName;
    }

    public String displayName() {
        return displayName;
    }

    /** The short name the tables show ({@code fadd} and {@code cas} for the atomics, as in ib_atomic_*'s reports). */
    public String label() {
        return switch (this) {
            case FETCH_ADD -> "fadd";
            case COMPARE_SWAP -> "cas";
            case IMMEDIATE -> "imm";
            default -> name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** An RFC 7306 atomic: 8 octets, answered by the peer like a Read. */
    public boolean atomic() {
        return this == FETCH_ADD || this == COMPARE_SWAP || this == ATOMIC;
    }

    /** Goes into the peer's posted receives (Send, Immediate Data). */
    public boolean received() {
        return this == SEND || this == IMMEDIATE;
    }

    /** Needs a peer that implements RFC 7306. */
    public boolean rfc7306() {
        return atomic() || this == IMMEDIATE;
    }

    /** Always 8 octets (the atomics and Immediate Data). */
    public boolean eightOctets() {
        return rfc7306();
    }

    /** Completes with the peer's answer (a Read or an atomic): latency is the whole round trip. */
    public boolean answered() {
        return this == READ || atomic();
    }
}
