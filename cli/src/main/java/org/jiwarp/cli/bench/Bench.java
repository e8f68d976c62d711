package org.jiwarp.cli.bench;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Runs one spec over one stack: opens the connections, starts them together, samples progress every
 * 100 ms (for the peak and the progress line) and merges what the connections report.
 */
public final class Bench {

    private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private Bench() {
    }

    /**
     * Bytes allocated on the heap by every live thread of this JVM so far (both ends when embedded),
     * or -1 where the JVM cannot tell.
     */
    static long allocatedBytes() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        if (!(threads instanceof com.sun.management.ThreadMXBean)) {
            return -1;
        }
        com.sun.management.ThreadMXBean hotspot = (com.sun.management.ThreadMXBean) threads;
        long total = 0;
        for (long bytes : hotspot.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            total += Math.max(0, bytes);
        }
        return total;
    }

    /** Heap in use once collections stop freeing anything (what earlier runs left is gone by then). */
    private static long heapAfterGc() throws InterruptedException {
        Runtime runtime = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            Thread.sleep(50);
            long now = runtime.totalMemory() - runtime.freeMemory();
            if (now >= used - (used >> 7)) {
                return Math.min(now, used);
            }
            used = now;
        }
        return used;
    }

    /**
     * The progress line: which stack (the TCP baseline is named as such, with the pattern it
     * mimics), what, and how far.
     */
    static String progressText(String stack, BenchSpec spec, long bytes, long nanos) {
        String what = stack.equals("tcp") ? "plain TCP (" + spec.op().displayName() + " pattern)"
                : "jiwarp " + spec.op().displayName();
        return String.format(Locale.ROOT, "%s, %d B %s: %.2f GB moved, %.2f Gb/s", what, spec.size(),
                spec.mode() == BenchMode.LAT ? "latency" : "bandwidth", bytes / 1e9, bytes * 8.0 / Math.max(1, nanos));
    }

    /**
     * @param progressLine called about once a second with a one-line status, or {@code null}
     */
    static BenchResult run(BenchTransport transport, BenchSpec spec, int connections, Limit limit,
            Consumer<String> progressLine) throws Exception {
        LongAdder progress = new LongAdder();
        long heapBefore = connections >= 100 ? heapAfterGc() : 0;
        List<BenchTransport.Connection> opened = transport.connect(spec, connections, progress, limit);
        try {
            // The stack's own heap per connection, measured idle: the registered buffers are direct
            // memory and the application's, so they are not in it.
            long heapPerConnection = connections >= 100 ? (heapAfterGc() - heapBefore) / connections : -1;
            long allocatedBefore = allocatedBytes();
            long begin = System.nanoTime();
            for (BenchTransport.Connection connection : opened) {
                connection.begin();
            }
            CompletableFuture<?> all = CompletableFuture.allOf(opened.stream()
                    .map(BenchTransport.Connection::result).toArray(CompletableFuture[]::new));
            double peak = 0;
            long lastBytes = 0;
            long lastNanos = begin;
            long lastLine = begin;
            long deadline = limit.timed() ? begin + (long) ((limit.seconds() + 60) * 1e9) : Long.MAX_VALUE;
            while (!all.isDone()) {
                try {
                    all.get(SAMPLE_NANOS, TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    long now = System.nanoTime();
                    long bytes = progress.sum();
                    peak = Math.max(peak, (bytes - lastBytes) * 1e9 / (now - lastNanos));
                    lastBytes = bytes;
                    lastNanos = now;
                    if (progressLine != null && now - lastLine >= 1_000_000_000L) {
                        lastLine = now;
                        progressLine.accept(progressText(transport.name(), spec, bytes, now - begin));
                    }
                    if (now > deadline) {
                        throw new IllegalStateException("the run did not finish within a minute of its duration");
                    }
                }
            }
            all.get();
            long allocated = allocatedBytes() - allocatedBefore;
            for (BenchTransport.Connection connection : opened) {
                connection.verify().get(30, TimeUnit.SECONDS);
            }
            long messages = 0;
            long start = Long.MAX_VALUE;
            long end = Long.MIN_VALUE;
            Histogram latency = new Histogram(3);
            Histogram connectionMax = new Histogram(3);
            for (BenchTransport.Connection connection : opened) {
                BenchTransport.Result result = connection.result().get();
                messages += result.messages();
                start = Math.min(start, result.startNanos());
                end = Math.max(end, result.endNanos());
                latency.add(result.latency());
                if (result.latency().getTotalCount() > 0) {
                    connectionMax.recordValue(result.latency().getMaxValue());
                }
            }
            double seconds = (end - start) / 1e9;
            double average = seconds > 0 ? messages * (double) spec.size() / seconds : 0;
            if (peak < average) {
                peak = average;
            }
            return new BenchResult(transport.name(), spec, connections, messages, seconds, peak, latency, allocated,
                    heapPerConnection, connectionMax);
        } finally {
            for (BenchTransport.Connection connection : opened) {
                connection.close();
            }
        }
    }
}
