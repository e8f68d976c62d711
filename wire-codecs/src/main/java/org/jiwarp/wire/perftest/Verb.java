package org.jiwarp.wire.perftest;

/** What a perftest run measures, with perftest's names ({@code testsStr}) and programs. */
public enum Verb {
    SEND("Send", "ib_send"),
    WRITE("RDMA_Write", "ib_write"),
    READ("RDMA_Read", "ib_read");

    private final String title;
    private final String program;

    Verb(String title, String program) {
        this.title = title;
        this.program = program;
    }

    /** perftest's name for it, as in "RDMA_Write BW Test". */
    public String title() {
        return title;
    }

    /** The perftest program: {@code ib_write_bw}, {@code ib_write_lat}, ... */
    public String program(boolean latency) {
        return program + (latency ? "_lat" : "_bw");
    }
}
