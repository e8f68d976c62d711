package org.jiwarp.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The bench's progress line names the stack it measures. */
class BenchReportTest {

    @Test
    void theProgressLineNamesTheTcpBaselineAsPlainTcp() {
        BenchSpec write = new BenchSpec(BenchOp.WRITE, BenchMode.BW, 4096, 128, 100, 0, 0);
        assertEquals("plain TCP (RDMA Write pattern), 4096 B bandwidth: 2.00 GB moved, 8.00 Gb/s",
                Bench.progressText("tcp", write, 2_000_000_000L, 2_000_000_000L));
        assertEquals("jiwarp RDMA Write, 4096 B bandwidth: 2.00 GB moved, 8.00 Gb/s",
                Bench.progressText("jiwarp", write, 2_000_000_000L, 2_000_000_000L));
        BenchSpec read = new BenchSpec(BenchOp.READ, BenchMode.LAT, 8, 1, 1, 0, 0);
        assertEquals("jiwarp RDMA Read, 8 B latency: 0.00 GB moved, 0.00 Gb/s", Bench.progressText("jiwarp", read, 0, 1));
    }
}
