package org.jiwarp.cli.bench;

import org.HdrHistogram.Histogram;

/**
 * One row of the report: what one stack moved for one spec over all its connections.
 *
 * @param stack      {@code jiwarp} or {@code tcp}
 * @param messages   messages moved, all connections together
 * @param seconds    from the first connection's start to the last one's end
 * @param peakBytesPerSecond the best 100 ms window (the average when the run is shorter)
 * @param latency    nanoseconds: post to completion (bandwidth runs) or half the round trip
 *                   (latency runs; the whole of it for Read)
 * @param allocatedBytes heap bytes allocated by the whole JVM during the measured run (both ends
 *                   when embedded; threads that ended during the run are not counted), or negative
 * @param heapPerConnection heap bytes per connection, measured idle after a GC, for runs of 100
 *                   connections or more; else -1
 * @param connectionMax nanoseconds: each connection's slowest {@code latency} sample, one value
 *                   per connection that took samples (how evenly the connections share the wire;
 *                   a connection of a short many-QP run takes too few samples for a p99 of its own)
 */
public record BenchResult(String stack, BenchSpec spec, int connections, long messages, double seconds,
        double peakBytesPerSecond, Histogram latency, long allocatedBytes, long heapPerConnection,
        Histogram connectionMax) {

    /** A percentile of the connections' slowest samples in microseconds (50: the median connection, 100: the worst). */
    public double connectionMaxMicros(double percentile) {
        return connectionMax.getTotalCount() == 0 ? 0 : connectionMax.getValueAtPercentile(percentile) / 1e3;
    }

    /** Heap bytes allocated per KiB moved, or -1 when unknown. */
    public double allocatedPerKib() {
        return allocatedBytes < 0 || bytes() == 0 ? -1 : allocatedBytes / (bytes() / 1024.0);
    }

    public long bytes() {
        return messages * (long) spec.size();
    }

    public double bytesPerSecond() {
        return seconds > 0 ? bytes() / seconds : 0;
    }

    public double gbitPerSecond() {
        return bytesPerSecond() * 8 / 1e9;
    }

    public double peakGbitPerSecond() {
        return peakBytesPerSecond * 8 / 1e9;
    }

    /** MB/s as perftest prints it (2^20 octets). */
    public double mibPerSecond() {
        return bytesPerSecond() / (1 << 20);
    }

    public double peakMibPerSecond() {
        return peakBytesPerSecond / (1 << 20);
    }

    public double messagesPerSecond() {
        return seconds > 0 ? messages / seconds : 0;
    }

    /** A latency percentile in microseconds. */
    public double latencyMicros(double percentile) {
        return latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(percentile) / 1e3;
    }

    public double maxLatencyMicros() {
        return latency.getTotalCount() == 0 ? 0 : latency.getMaxValue() / 1e3;
    }
}
