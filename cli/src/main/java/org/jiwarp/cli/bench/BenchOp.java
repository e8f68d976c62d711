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
    /** On the command line only: both atomics, one after the other. */
    ATOMIC("atomic");

    private final String displayName;

    BenchOp(String displayName) {
        this.displayName = displayName;
    }

    public String displayName() {
        return displayName;
    }

    /** An RFC 7306 atomic: 8 octets, answered by the peer like a Read. */
    public boolean atomic() {
        return this == FETCH_ADD || this == COMPARE_SWAP || this == ATOMIC;
    }

    /** Completes with the peer's answer (a Read or an atomic): latency is the whole round trip. */
    public boolean answered() {
        return this == READ || atomic();
    }
}
