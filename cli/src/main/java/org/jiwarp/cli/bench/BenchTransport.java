package org.jiwarp.cli.bench;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/** One side of the comparison: jiwarp, or the plain TCP baseline. */
interface BenchTransport {

    String name();

    /** Opens {@code count} connections for {@code spec}; none starts moving data before {@link Connection#begin()}. */
    List<Connection> connect(BenchSpec spec, int count, LongAdder progress, Limit limit) throws Exception;

    /** One connection (a queue pair, or a TCP socket) running the pattern. */
    interface Connection extends AutoCloseable {
        void begin();

        CompletableFuture<Result> result();

        /**
         * After the run: checks that the data arrived intact (the octets the peer holds, or that
         * came back, equal the pattern the sender started with); completes exceptionally on a
         * mismatch. The TCP baseline checks nothing.
         */
        default CompletableFuture<Void> verify() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        void close();
    }

    /** What one connection moved: messages, from start to end (nanoTime), and its latency histogram. */
    record Result(long messages, long startNanos, long endNanos, Histogram latency) {
    }
}
