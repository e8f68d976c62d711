package org.jiwarp.tools.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * perftest's figures as {@code print_report_bw} computes them, on made-up timings (no clock): the
 * peak is the fastest stretch from a post to a later completion, computed up to 20000 iterations
 * and reported as 0 above (or with {@code -N}); the average runs from the first post to the last
 * completion.
 */
class PerftestFiguresTest {

    private static final double MB = 0x100000;

    /**
     * 20000 Writes, one completion each (as 64 KiB Writes are, -Q 1): the first half 2 us apart,
     * the second half 1 us apart. The peak is the second half's pace, the average the whole run's.
     */
    @Test
    void thePeakOf20000IterationsIsTheFastestStretchNotTheAverage() {
        int iters = 20_000;
        long[] posted = new long[iters];
        int[] completedIndex = new int[iters];
        long[] completedAt = new long[iters];
        long t = 0;
        for (int i = 0; i < iters; i++) {
            posted[i] = t;
            t += i < iters / 2 ? 2000 : 1000;
            completedIndex[i] = i;
            completedAt[i] = t;
        }
        BwReport report = BwReport.of(65536, iters, 1, false, posted, completedIndex, completedAt, iters);
        double average = 65536 / (30_000_000 / 1e9 / iters) / MB;
        assertEquals(average, report.bwAvg(), average * 1e-9);
        assertEquals(65536 / 1e-6 / MB, report.bwPeak(), 1e-6, report::toString);
        assertTrue(report.bwPeak() > report.bwAvg() * 1.4, report::toString);
    }

    /** Above 20000 iterations, or with -N, perftest does not look for the peak: it reports 0. */
    @Test
    void noPeakAbove20000IterationsOrWithMinusN() {
        assertFalse(new PerftestParameters().iters(20_000).noPeak());
        assertTrue(new PerftestParameters().iters(20_001).noPeak());
        assertTrue(new PerftestParameters().iters(100).noPeak(true).noPeak());
        long[] posted = {0, 1000, 2000, 3000, 4000};
        int[] index = {0, 1, 2, 3, 4};
        long[] completed = {500, 1500, 2500, 3500, 9000};
        BwReport none = BwReport.of(1000, 5, 1, true, posted, index, completed, 5);
        assertEquals(0, none.bwPeak());
        assertEquals(5000 / 9e-6 / MB, none.bwAvg(), 1e-6);
        BwReport some = BwReport.of(1000, 5, 1, false, posted, index, completed, 5);
        assertEquals(1000 / 500e-9 / MB, some.bwPeak(), 1e-6);
    }

    /** perftest's post-list rules: CQ moderation follows the list, -n a multiple, bandwidth only. */
    @Test
    void postListRules() {
        PerftestParameters list = new PerftestParameters().size(65536).iters(1000).postList(10);
        assertEquals(10, list.validate().cqMod());
        assertEquals(5, new PerftestParameters().iters(1000).postList(10).cqMod(5).validate().cqMod());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().iters(1000)
                .postList(3).validate()).getMessage().contains("multiple of the post list"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().iters(1000)
                .postList(10).cqMod(4).validate()).getMessage().contains("multiple of the CQ moderation"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().latency(true)
                .postList(2).validate()).getMessage().contains("bandwidth tests only"));
    }
}
