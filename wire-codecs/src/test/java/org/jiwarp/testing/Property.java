package org.jiwarp.testing;

import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * A small seeded property-test harness on plain JUnit 5.
 *
 * <p>Each property runs {@code cases} times; case {@code i} gets its own {@link SplittableRandom}
 * seeded from the run's base seed. A failing case is rethrown with the seed that reproduces it
 * alone:
 *
 * <pre>
 *   mvn test -Djiwarp.seed=0x1234abcd -Djiwarp.cases=1 -Dtest=...
 * </pre>
 *
 * <p>The base seed is {@code -Djiwarp.seed} when given, otherwise fresh per run (and printed), so
 * every CI run explores new cases while every failure stays reproducible.
 */
public final class Property {

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private Property() {
    }

    /** Cases per property: {@code -Djiwarp.cases}, default 10 000. */
    public static int defaultCases() {
        String value = System.getProperty("jiwarp.cases");
        if (value == null || value.isBlank() || value.startsWith("$")) {
            return 10_000;
        }
        return Integer.parseInt(value.trim());
    }

    /** Runs {@code body} for {@link #defaultCases()} seeded cases. */
    public static void forAll(String name, Consumer<SplittableRandom> body) {
        forAll(name, defaultCases(), body);
    }

    /** Runs {@code body} for {@code cases} seeded cases; rethrows the first failure with its seed. */
    public static void forAll(String name, int cases, Consumer<SplittableRandom> body) {
        String fixed = System.getProperty("jiwarp.seed");
        long base = fixed != null && !fixed.isBlank() ? parseSeed(fixed.trim()) : System.nanoTime() * GOLDEN_GAMMA;
        for (int i = 0; i < cases; i++) {
            long seed = base + i * GOLDEN_GAMMA;
            try {
                body.accept(new SplittableRandom(seed));
            } catch (Throwable t) {
                String message = String.format(
                        "property '%s' failed on case %d of %d; reproduce with -Djiwarp.seed=0x%016x -Djiwarp.cases=1",
                        name, i + 1, cases, seed);
                System.err.println(message);
                throw new AssertionError(message + ": " + t, t);
            }
        }
    }

    /** Random bytes of the given length, eight per draw. */
    public static byte[] bytes(SplittableRandom random, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i += 8) {
            long value = random.nextLong();
            for (int j = i; j < Math.min(length, i + 8); j++) {
                out[j] = (byte) value;
                value >>>= 8;
            }
        }
        return out;
    }

    /**
     * Runs {@code body} on a fresh thread and rethrows what it threw: under paranoid leak detection
     * Netty records a stack trace on each buffer access, which costs several times more from
     * JUnit's deep stack.
     */
    public static void onShallowStack(Runnable body) {
        Throwable[] thrown = new Throwable[1];
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                thrown[0] = t;
            }
        }, "property");
        // A daemon, stopped with the test: the test's deadline interrupts this thread's join.
        thread.setDaemon(true);
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException e) {
            thread.interrupt();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted (the test's deadline?) while the property ran", e);
        }
        if (thrown[0] instanceof Error) {
            throw (Error) thrown[0];
        }
        if (thrown[0] instanceof RuntimeException) {
            throw (RuntimeException) thrown[0];
        }
        if (thrown[0] != null) {
            throw new AssertionError(thrown[0]);
        }
    }

    /** A random split of {@code total} bytes into chunk lengths of at least 1 (at most {@code maxChunk}). */
    public static int[] split(SplittableRandom random, int total, int maxChunk) {
        int[] chunks = new int[Math.max(total, 1)];
        int count = 0;
        int left = total;
        while (left > 0) {
            int n = 1 + random.nextInt(Math.min(left, maxChunk));
            chunks[count++] = n;
            left -= n;
        }
        return java.util.Arrays.copyOf(chunks, count);
    }

    /** A seed as printed on failure: {@code 0x} and 16 hex digits, unsigned (or a decimal number). */
    static long parseSeed(String text) {
        return text.startsWith("0x") || text.startsWith("0X") ? Long.parseUnsignedLong(text.substring(2), 16)
                : Long.parseLong(text);
    }
}
