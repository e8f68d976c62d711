package org.jiwarp.tools.perftest;

import java.util.Arrays;
import java.util.Locale;

/**
 * ib_write_lat's report ({@code print_report_lat}): each side times the gaps between its own
 * successive posts, a round trip each, and halves them; the two largest gaps are dropped; then the
 * minimum, maximum, median ("typical"), mean, standard deviation and the 99 and 99.9 percentiles,
 * in microseconds.
 */
public record LatencyReport(int size, int iters, double min, double max, double typical, double avg, double stdev,
        double p99, double p999) {

    /** RESULT_FMT_LAT. */
    public static final String HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            + "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    /** LAT_MEASURE_TAIL. */
    private static final int TAIL = 2;

    static LatencyReport of(int size, int iters, long[] posted) {
        int measured = iters - 1;
        double[] delta = new double[measured];
        for (int i = 0; i < measured; i++) {
            delta[i] = (posted[i + 1] - posted[i]) / 1e3 / 2;
        }
        Arrays.sort(delta);
        int n = Math.max(1, measured - TAIL);
        double median = (n - 1) % 2 != 0 ? (delta[n / 2] + delta[n / 2 - 1]) / 2 : delta[n / 2];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += delta[i];
        }
        double avg = sum / n;
        double squares = 0;
        for (int i = 0; i < n; i++) {
            squares += (avg - delta[i]) * (avg - delta[i]);
        }
        int p99 = Math.min(measured - 1, (int) Math.ceil(n * 0.99));
        int p999 = Math.min(measured - 1, (int) Math.ceil(n * 0.999));
        return new LatencyReport(size, iters, delta[0], delta[Math.min(n, measured - 1)], median, avg,
                Math.sqrt(squares / n), delta[p99], delta[p999]);
    }

    /** perftest's REPORT_FMT_LAT line. */
    public String line() {
        return String.format(Locale.ROOT, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t"
                + "%-7.2f\t\t%-7.2f \t\t%-7.2f", size, iters, min, max, typical, avg, stdev, p99, p999);
    }
}
