package org.jiwarp.cli.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The latency pattern, shared by jiwarp and the TCP baseline: one message out, one back, then the
 * next. Send and Write report half the round trip and Read the whole of it, as perftest's
 * {@code ib_*_lat} do.
 */
abstract class PingPongPattern {

    final BenchSpec spec;
    final Limit limit;
    final Histogram latency = new Histogram(3);
    private final LongAdder progress;
    private final CompletableFuture<PingPongPattern> finished = new CompletableFuture<>();
    long count;
    long startNanos;
    long endNanos;
    private long sentAt;

    PingPongPattern(BenchSpec spec, Limit limit, LongAdder progress) {
        this.spec = spec;
        this.limit = limit;
        this.progress = progress;
    }

    /** Sends ping number {@code index}; the implementation calls {@link #pong()} when its answer is in. */
    abstract void ping(long index);

    CompletableFuture<PingPongPattern> finished() {
        return finished;
    }

    final void start() {
        startNanos = System.nanoTime();
        sentAt = startNanos;
        ping(0);
    }

    final void pong() {
        long now = System.nanoTime();
        long roundTrip = now - sentAt;
        latency.recordValue(spec.op().answered() ? roundTrip : roundTrip / 2);
        progress.add(spec.size());
        count++;
        if (limit.more(count, startNanos, now)) {
            sentAt = System.nanoTime();
            ping(count);
        } else {
            endNanos = now;
            finished.complete(this);
        }
    }

    final void failed(Throwable cause) {
        finished.completeExceptionally(cause);
    }
}
