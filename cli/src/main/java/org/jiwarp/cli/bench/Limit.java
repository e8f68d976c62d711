package org.jiwarp.cli.bench;

/**
 * When a run stops posting: after {@code iterations} messages per queue pair (perftest's {@code -n}),
 * or once {@code seconds} have passed (perftest's {@code -D}).
 */
public record Limit(long iterations, double seconds) {

    public Limit {
        if (iterations < 1 && seconds <= 0) {
            throw new IllegalArgumentException("give a positive iteration count or duration");
        }
    }

    public static Limit iterations(long iterations) {
        return new Limit(iterations, 0);
    }

    public static Limit seconds(double seconds) {
        return new Limit(0, seconds);
    }

    public boolean timed() {
        return seconds > 0;
    }

    /** Whether message number {@code index} (from 0) should still be posted. */
    boolean more(long index, long startNanos, long nowNanos) {
        return timed() ? nowNanos - startNanos < (long) (seconds * 1e9) : index < iterations;
    }

    @Override
    public String toString() {
        return timed() ? seconds + " s" : iterations + " iterations";
    }
}
