package org.jiwarp.conform;

/**
 * The stock tool the target runs, whose exchange tells jiwarp conform where the target's registered
 * buffer is ({@code --app}).
 */
public enum Program {
    /** rdma-core's {@code rping}: a 64-octet (or the client's advertised) buffer, remote read and write. */
    RPING("rping"),
    /**
     * perftest's {@code ib_write_bw -R}: both halves of its data buffer in one region registered for
     * local and remote write only ({@code create_single_mr} in perftest_resources.c).
     */
    IB_WRITE_BW("ib_write_bw"),
    /**
     * perftest's {@code ib_read_bw -R}: the same region registered for remote read and, because an
     * iWARP Read's sink is written remotely, remote write ({@code IBV_TRANSPORT_IWARP}).
     */
    IB_READ_BW("ib_read_bw");

    private final String command;

    Program(String command) {
        this.command = command;
    }

    /** The name {@code --app} takes and reports print. */
    public String command() {
        return command;
    }

    boolean perftest() {
        return this != RPING;
    }

    /** Whether the target's buffer takes remote reads (rping's and ib_read_bw's do). */
    boolean remoteRead() {
        return this != IB_WRITE_BW;
    }

    public static Program of(String command) {
        for (Program p : values()) {
            if (p.command.equals(command)) {
                return p;
            }
        }
        return null;
    }
}
