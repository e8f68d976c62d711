package org.jiwarp.tools.perftest;

import java.util.Locale;
import org.jiwarp.wire.perftest.PerftestWire;

/**
 * perftest's {@code struct bw_report_data} as it prints and exchanges it: MB/sec are 2^20 octets a
 * second, the message rate is in millions a second. The client of ib_write_bw and ib_read_bw sends
 * its report to the server, which prints it as its own ({@code xchg_bw_reports}).
 */
public record BwReport(long size, long iters, double bwPeak, double bwAvg, double msgRateAvg) {

    /** perftest's RESULT_LINE. */
    static final String RESULT_LINE =
            "---------------------------------------------------------------------------------------";
    /** RESULT_FMT. */
    public static final String HEADER = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";

    /** RESULT_FMT_G, with {@code --report_gbits}. */
    public static final String HEADER_GBITS =
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";

    private static final double MB = 0x100000;

    /**
     * From the times work was posted ({@code posted[i]} for operation i; with a post list, the
     * list's first) and the signalled completions ({@code completedAt[c]} for the operation index
     * {@code completedIndex[c]}), as {@code print_report_bw}: the average over the whole run, from
     * the first post to the last completion; the peak over every stretch from a post (of a list's
     * first operation) to a later completion, unless {@code noPeak}: then 0, as perftest reports.
     */
    static BwReport of(int size, int iters, int postList, boolean noPeak, long[] posted, int[] completedIndex,
            long[] completedAt, int completions) {
        long elapsed = Math.max(1, completedAt[completions - 1] - posted[0]);
        double seconds = elapsed / 1e9;
        double bwAvg = (double) size * iters / seconds / MB;
        double rate = iters / seconds / 1e6;
        if (noPeak) {
            return new BwReport(size, iters, 0, bwAvg, rate);
        }
        // The shortest time per operation over any stretch [i, j] that ends in a completion:
        // quadratic, as perftest's search, which it skips above 20000 iterations (noPeak).
        double best = elapsed / (double) iters;
        int c = 0;
        for (int i = 0; i < iters; i += postList) {
            while (c < completions && completedIndex[c] < i) {
                c++;
            }
            long start = posted[i];
            for (int k = c; k < completions; k++) {
                double t = (completedAt[k] - start) / (double) (completedIndex[k] - i + 1);
                if (t > 0 && t < best) {
                    best = t;
                }
            }
        }
        double bwPeak = size / (best / 1e9) / MB;
        return new BwReport(size, iters, bwPeak, bwAvg, rate);
    }

    /** perftest's REPORT_FMT line. */
    public String line() {
        return line(false);
    }

    /** perftest's REPORT_FMT line, in Gb/s (10^9 bits a second) with {@code gbits}, as {@code --report_gbits}. */
    public String line(boolean gbits) {
        double scale = gbits ? MB * 8 / 1e9 : 1;
        return String.format(Locale.ROOT, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f", size, iters,
                bwPeak * scale, bwAvg * scale, msgRateAvg);
    }

    /** The five exchanged fields, in order, each 8 octets big-endian. */
    byte[][] fields() {
        return new byte[][] {PerftestWire.int64(size), PerftestWire.int64(iters), PerftestWire.float64(bwPeak),
                PerftestWire.float64(bwAvg), PerftestWire.float64(msgRateAvg)};
    }

    static BwReport of(byte[][] fields) {
        return new BwReport(PerftestWire.int64(fields[0]), PerftestWire.int64(fields[1]),
                PerftestWire.float64(fields[2]), PerftestWire.float64(fields[3]), PerftestWire.float64(fields[4]));
    }
}
