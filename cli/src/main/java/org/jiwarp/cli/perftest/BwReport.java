package org.jiwarp.cli.perftest;

import java.util.Locale;

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
    static final String HEADER = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";

    /** RESULT_FMT_G, with {@code --report_gbits}. */
    static final String HEADER_GBITS =
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";

    private static final double MB = 0x100000;

    /**
     * From the times work was posted ({@code posted[i]} for operation i) and the signalled
     * completions ({@code completedAt[c]} for the operation index {@code completedIndex[c]}), as
     * {@code print_report_bw}: the average over the whole run, the peak over every stretch from a
     * post to a later completion.
     */
    static BwReport of(int size, int iters, long[] posted, int[] completedIndex, long[] completedAt, int completions) {
        long elapsed = Math.max(1, completedAt[completions - 1] - posted[0]);
        double seconds = elapsed / 1e9;
        double bwAvg = (double) size * iters / seconds / MB;
        double rate = iters / seconds / 1e6;
        // The shortest time per operation over any stretch [i, j] that ends in a completion.
        double best = elapsed / (double) iters;
        long work = (long) iters * completions;
        if (work <= 50_000_000L) {
            int c = 0;
            for (int i = 0; i < iters; i++) {
                while (c < completions && completedIndex[c] < i) {
                    c++;
                }
                for (int k = c; k < completions; k++) {
                    int j = completedIndex[k];
                    double t = (completedAt[k] - posted[i]) / (double) (j - i + 1);
                    if (t > 0 && t < best) {
                        best = t;
                    }
                }
            }
        }
        double bwPeak = size / (best / 1e9) / MB;
        return new BwReport(size, iters, bwPeak, bwAvg, rate);
    }

    /** perftest's REPORT_FMT line. */
    String line() {
        return line(false);
    }

    /** perftest's REPORT_FMT line, in Gb/s (10^9 bits a second) with {@code gbits}, as {@code --report_gbits}. */
    String line(boolean gbits) {
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
