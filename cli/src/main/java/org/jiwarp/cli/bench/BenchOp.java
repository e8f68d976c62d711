package org.jiwarp.cli.bench;

/** What a benchmark moves, as perftest's {@code ib_write_*}, {@code ib_read_*} and {@code ib_send_*}. */
public enum BenchOp {
    WRITE("RDMA Write"),
    READ("RDMA Read"),
    SEND("Send");

    private final String displayName;

    BenchOp(String displayName) {
        this.displayName = displayName;
    }

    public String displayName() {
        return displayName;
    }
}
