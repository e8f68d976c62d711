package org.jiwarp.cli.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The bandwidth pattern, shared by jiwarp and the TCP baseline so that both move data the same way:
 * keep {@code txDepth} messages outstanding, signal one in {@code cqMod} (and count the ones before it
 * complete with it, as unsignaled work retires in verbs), post in batches with one flush per batch,
 * and when the limit is reached, one round trip that the peer can only answer after it has taken
 * every message (an RDMA Read for jiwarp, a sync frame for TCP). The run ends when that answer
 * arrives, so the figure is what the receiver got, not what the sender queued.
 *
 * <p>Latency here is each signaled message's time from post to completion. Every method runs on the
 * connection's event loop.
 */
abstract class StreamPattern {

    final BenchSpec spec;
    final Limit limit;
    /**
     * Post to completion, made at the first completion (an idle connection holds none): two
     * significant digits from 1 us to 100 s, about 17 KiB, never resized during the run (three
     * digits, resized up to a second, took about 180 KiB per connection, which a thousand of them
     * allocated while measuring).
     */
    private Histogram latency;
    private final LongAdder progress;
    private final long[] postedAt;
    private final CompletableFuture<StreamPattern> finished = new CompletableFuture<>();
    long posted;
    long completed;
    long startNanos;
    long endNanos;
    private boolean syncing;
    private boolean filling;
    private boolean refill;

    StreamPattern(BenchSpec spec, Limit limit, LongAdder progress) {
        this.spec = spec;
        this.limit = limit;
        this.progress = progress;
        this.postedAt = new long[spec.txDepth()];
    }

    /** Posts message {@code index}; {@code signaled} ones report {@link #completed(long)}. */
    abstract void post(long index, boolean signaled);

    /** Ends a batch of {@link #post}s (one flush). */
    abstract void flushPosts();

    /** Starts the closing round trip; the implementation calls {@link #synced()} when it returns. */
    abstract void sync();

    CompletableFuture<StreamPattern> finished() {
        return finished;
    }

    final void start() {
        startNanos = System.nanoTime();
        fill();
    }

    /** Posts up to the depth; a completion that arrives while posting (a flush can complete writes) refills after. */
    final void fill() {
        if (filling) {
            refill = true;
            return;
        }
        filling = true;
        try {
            do {
                refill = false;
                fillOnce();
            } while (refill);
        } finally {
            filling = false;
        }
    }

    private void fillOnce() {
        if (syncing) {
            return;
        }
        long now = System.nanoTime();
        int batch = 0;
        int depth = spec.txDepth();
        while (posted - completed < depth && limit.more(posted, startNanos, now)) {
            boolean last = !limit.timed() && posted + 1 == limit.iterations();
            boolean signaled = last || (posted + 1) % spec.cqMod() == 0;
            postedAt[(int) (posted % depth)] = now;
            post(posted++, signaled);
            batch++;
        }
        if (!limit.more(posted, startNanos, now)) {
            // In-order delivery: the peer answers the sync only once it has taken everything before.
            syncing = true;
            sync();
            batch++;
        }
        if (batch > 0) {
            flushPosts();
        }
    }

    /** What {@link #completed} recorded, in nanoseconds (empty when nothing completed). */
    final Histogram latency() {
        return latency != null ? latency : new Histogram(3);
    }

    /** Signaled message {@code index} has completed, and with it every message before it. */
    final void completed(long index) {
        long now = System.nanoTime();
        if (latency == null) {
            latency = new Histogram(1_000, 100_000_000_000L, 2);
        }
        long nanos = now - postedAt[(int) (index % spec.txDepth())];
        latency.recordValue(Math.min(100_000_000_000L, Math.max(1_000, nanos)));
        progress.add((index + 1 - completed) * spec.size());
        completed = index + 1;
        fill();
    }

    final void synced() {
        endNanos = System.nanoTime();
        progress.add((posted - completed) * spec.size());
        completed = posted;
        finished.complete(this);
    }

    final void failed(Throwable cause) {
        finished.completeExceptionally(cause);
    }
}
