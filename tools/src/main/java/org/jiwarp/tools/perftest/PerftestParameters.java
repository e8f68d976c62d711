package org.jiwarp.tools.perftest;

import java.time.Duration;
import java.util.Objects;
import org.jiwarp.wire.perftest.Verb;

/**
 * What a perftest run does, with perftest's defaults and the adjustments its
 * {@code force_dependecies} makes, so that both ends agree when given the same options: the TX depth
 * is at most the iterations, ib_send_bw's RX depth is at most the iterations and even, CQ
 * moderation is off (1) above 8 KiB unless asked for and never above the TX depth.
 *
 * <p>Set what the user gave; read the resolved values back.
 */
public final class PerftestParameters {

    /** perftest's DEF_SIZE_BW and DEF_SIZE_LAT. */
    static final int DEFAULT_SIZE_BW = 65536;
    static final int DEFAULT_SIZE_LAT = 2;
    /** DEF_ITERS_WB for ib_write_bw, DEF_ITERS for the others. */
    static final int DEFAULT_ITERS_WRITE_BW = 5000;
    static final int DEFAULT_ITERS = 1000;
    /** DEF_TX_BW and DEF_TX_LAT. */
    static final int DEFAULT_TX_BW = 128;
    static final int DEFAULT_TX_LAT = 1;
    /** DEF_RX_SEND and DEF_RX_RDMA. */
    static final int DEFAULT_RX_SEND = 512;
    static final int DEFAULT_RX_RDMA = 1;
    /** DEF_CQ_MOD, and MSG_SIZE_CQ_MOD_LIMIT above which moderation is off unless asked for. */
    static final int DEFAULT_CQ_MOD = 100;
    static final int CQ_MOD_SIZE_LIMIT = 8192;
    /** The outstanding Reads jiwarp offers by default: siw's maximum (perftest takes the device's). */
    static final int DEFAULT_OUT_READS = 128;
    static final int MIN_ITERS = 5;
    /**
     * Above this many iterations perftest does not compute the peak (it reports 0): its search is
     * quadratic in the iterations ({@code force_dependecies}: {@code iters > 20000} sets noPeak).
     */
    static final int MAX_PEAK_ITERS = 20_000;
    static final int MAX_SIZE = 1 << 28;

    private Verb verb = Verb.WRITE;
    private boolean latency;
    private Integer size;
    private Integer iters;
    private Integer txDepth;
    private Integer rxDepth;
    private Integer cqMod;
    private Integer outReads;
    private boolean reportGbits;
    private Integer postList;
    private boolean noPeak;
    private boolean performWarmUp;
    private Duration timeout = Duration.ofSeconds(60);
    private Duration settle = Duration.ofMillis(200);

    public PerftestParameters verb(Verb verb) {
        this.verb = Objects.requireNonNull(verb);
        return this;
    }

    public PerftestParameters latency(boolean latency) {
        this.latency = latency;
        return this;
    }

    /** Message size ({@code -s}); {@code null} for the default. */
    public PerftestParameters size(Integer size) {
        this.size = size;
        return this;
    }

    /** Iterations ({@code -n}); {@code null} for the default. */
    public PerftestParameters iters(Integer iters) {
        this.iters = iters;
        return this;
    }

    public PerftestParameters txDepth(Integer txDepth) {
        this.txDepth = txDepth;
        return this;
    }

    public PerftestParameters rxDepth(Integer rxDepth) {
        this.rxDepth = rxDepth;
        return this;
    }

    public PerftestParameters cqMod(Integer cqMod) {
        this.cqMod = cqMod;
        return this;
    }

    public PerftestParameters outReads(Integer outReads) {
        this.outReads = outReads;
        return this;
    }

    /** Work requests posted at a time, as one chain ({@code -l}); {@code null} for 1. */
    public PerftestParameters postList(Integer postList) {
        this.postList = postList;
        return this;
    }

    /** Work requests posted at a time (1 without {@code -l}). */
    public int postList() {
        return postList != null ? postList : 1;
    }

    /** One TX depth of unmeasured Writes or Reads before the run ({@code --perform_warm_up}). */
    public PerftestParameters performWarmUp(boolean performWarmUp) {
        this.performWarmUp = performWarmUp;
        return this;
    }

    public boolean performWarmUp() {
        return performWarmUp;
    }

    /** No peak asked for ({@code -N}). */
    public PerftestParameters noPeak(boolean noPeak) {
        this.noPeak = noPeak;
        return this;
    }

    /**
     * Whether the bandwidth peak goes unmeasured (reported as 0, as perftest does): asked for with
     * {@code -N}, or more than {@link #MAX_PEAK_ITERS} iterations.
     */
    public boolean noPeak() {
        return noPeak || iters() > MAX_PEAK_ITERS;
    }

    /** Bandwidth in Gb/s instead of MB/s ({@code --report_gbits}). */
    public PerftestParameters reportGbits(boolean reportGbits) {
        this.reportGbits = reportGbits;
        return this;
    }

    public boolean reportGbits() {
        return reportGbits;
    }

    /** How long any one step (a control message, a completion, the peer's Write) may take. */
    public PerftestParameters timeout(Duration timeout) {
        this.timeout = Objects.requireNonNull(timeout);
        return this;
    }

    /**
     * How long a client waits after its control connection is up before its first message: siw's
     * passive side attaches its receive path after sending the Reply, and what arrives before sits
     * unread until more data comes (see the package javadoc). In peer-to-peer mode the RTR frame
     * goes out at once regardless; if it sits there, the first message, sent this much later, moves
     * both on. An RTR and a message that share a TCP segment would hang together.
     */
    public PerftestParameters settle(Duration settle) {
        this.settle = Objects.requireNonNull(settle);
        return this;
    }

    public Verb verb() {
        return verb;
    }

    public boolean latency() {
        return latency;
    }

    public int size() {
        return size != null ? size : latency ? DEFAULT_SIZE_LAT : DEFAULT_SIZE_BW;
    }

    public int iters() {
        return iters != null ? iters : verb == Verb.WRITE && !latency ? DEFAULT_ITERS_WRITE_BW : DEFAULT_ITERS;
    }

    public int txDepth() {
        int depth = txDepth != null ? txDepth : latency ? DEFAULT_TX_LAT : DEFAULT_TX_BW;
        return Math.min(depth, iters());
    }

    /** Receives the ib_send_bw server keeps posted, and the sender's credit window; 1 for the others. */
    public int rxDepth() {
        if (verb != Verb.SEND) {
            return rxDepth != null ? rxDepth : DEFAULT_RX_RDMA;
        }
        int depth = Math.min(rxDepth != null ? rxDepth : DEFAULT_RX_SEND, iters());
        // perftest: "WA for a bug when rx_depth is odd in SEND".
        return depth % 2 == 1 ? depth + 1 : depth;
    }

    /** Work requests per signalled completion (bandwidth tests). */
    public int cqMod() {
        if (postList() > 1 && cqMod == null) {
            // perftest: "Post List requested - CQ moderation will be the size of the post list".
            return postList();
        }
        int mod = cqMod != null ? cqMod : size() > CQ_MOD_SIZE_LIMIT ? 1 : DEFAULT_CQ_MOD;
        return Math.min(mod, txDepth());
    }

    /** ib_read_bw's outstanding Reads, offered as IRD and ORD; 1 for the others. */
    public int outReads() {
        return verb == Verb.READ ? outReads != null ? outReads : DEFAULT_OUT_READS : 1;
    }

    public Duration timeout() {
        return timeout;
    }

    public Duration settle() {
        return settle;
    }

    /** The perftest program this run speaks to. */
    public String program() {
        return verb.program(latency);
    }

    /** Throws {@link IllegalArgumentException} for what perftest (or this implementation) refuses. */
    public PerftestParameters validate() {
        if (latency && verb != Verb.WRITE) {
            throw new IllegalArgumentException("only the Write latency test (ib_write_lat) is implemented, not "
                    + verb.program(true));
        }
        check("size", size(), 1, MAX_SIZE);
        check("iterations", iters(), MIN_ITERS, 100_000_000);
        check("TX depth", txDepth != null ? txDepth : 1, 1, 15_000);
        check("RX depth", rxDepth != null ? rxDepth : 1, 1, 16_384);
        check("CQ moderation", cqMod != null ? cqMod : 1, 1, 1024);
        check("outstanding reads", outReads(), 1, 16_383);
        if (postList != null) {
            check("post list", postList, 1, 15_000);
            if (latency && postList > 1) {
                throw new IllegalArgumentException("-l (post lists) goes with the bandwidth tests only, as in "
                        + "perftest");
            }
            if (iters() % postList != 0) {
                throw new IllegalArgumentException("the iterations (" + iters() + ") must be a multiple of the "
                        + "post list (-l " + postList + "), as in perftest");
            }
            if (postList > txDepth()) {
                throw new IllegalArgumentException("the post list (-l " + postList + ") must fit in the TX depth ("
                        + txDepth() + ")");
            }
            if (postList % cqMod() != 0) {
                throw new IllegalArgumentException("the post list (-l " + postList + ") must be a multiple of the "
                        + "CQ moderation (-Q " + cqMod() + "), as in perftest");
            }
        }
        if (verb == Verb.SEND && !latency && rxDepth() / 3 < 1) {
            throw new IllegalArgumentException("ib_send_bw over iWARP returns credits every RX depth / 3 receives: "
                    + "the RX depth must be at least 3, not " + rxDepth());
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the timeout must be positive");
        }
        return this;
    }

    private static void check(String what, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(what + " " + value + " is out of range [" + min + ", " + max + "]");
        }
    }

    @Override
    public String toString() {
        return program() + " -s " + size() + " -n " + iters() + " -t " + txDepth()
                + (verb == Verb.SEND ? " -r " + rxDepth() : "") + (latency ? "" : " -Q " + cqMod())
                + (verb == Verb.READ ? " -o " + outReads() : "") + (postList() > 1 ? " -l " + postList() : "");
    }
}
