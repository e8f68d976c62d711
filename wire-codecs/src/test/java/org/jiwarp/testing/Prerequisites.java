package org.jiwarp.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a test needs from outside the project (tshark, the shared reference captures, the siw
 * guest): on a developer's machine a missing one skips the test with the reason; under CI
 * ({@code CI=true}, as {@code .ci/run} and every hosted CI set it) it fails the test with the same
 * reason, so a CI run can never pass by skipping what it was meant to check.
 */
public final class Prerequisites {

    /** The environment variable and the system property surefire passes it on as. */
    public static final String EXTERNAL_PCAPS_ENV = "JIWARP_EXTERNAL_PCAPS";
    public static final String EXTERNAL_PCAPS_PROPERTY = "jiwarp.externalPcaps";

    private Prerequisites() {
    }

    /** Whether this run is CI: {@code CI=true} in the environment (or {@code -Djiwarp.ci=true}). */
    public static boolean underCi() {
        return "true".equalsIgnoreCase(System.getenv("CI")) || Boolean.getBoolean("jiwarp.ci");
    }

    /**
     * Goes on when {@code missing} is {@code null}; otherwise skips the test, or under CI fails it,
     * with {@code missing} (a sentence saying what is missing and how to get it) as the reason.
     */
    public static void require(String missing) {
        require(missing, underCi());
    }

    /** {@link #require(String)} with the CI decision given (for its own test). */
    static void require(String missing, boolean ci) {
        if (missing == null) {
            return;
        }
        if (ci) {
            fail("CI=true and a prerequisite is missing, so this check cannot be skipped: " + missing);
        }
        abort(missing + "; skipping (under CI=true this fails)");
    }

    /**
     * For a part of a test that can go on without what it needs: {@code true} when {@code present};
     * otherwise, under CI, fails as {@link #require(String)} does; elsewhere says on standard output
     * that this part is left out, and why, and returns {@code false}.
     */
    public static boolean optional(boolean present, String missing) {
        return optional(present, missing, underCi());
    }

    /** {@link #optional(boolean, String)} with the CI decision given (for its own test). */
    static boolean optional(boolean present, String missing, boolean ci) {
        if (present) {
            return true;
        }
        if (ci) {
            fail("CI=true and a prerequisite is missing, so this check cannot be skipped: " + missing);
        }
        System.out.println(missing + "; left out (under CI=true this fails)");
        return false;
    }

    /** {@link #require(String)} when {@code present} is false. */
    public static void require(boolean present, String missing) {
        require(present ? null : missing);
    }

    /**
     * The shared reference captures' folder ({@code $JIWARP_EXTERNAL_PCAPS}, passed on by surefire
     * as {@code -Djiwarp.externalPcaps}), required as {@link #require(String)} says.
     */
    public static Path externalPcaps() {
        String value = System.getProperty(EXTERNAL_PCAPS_PROPERTY);
        if (value == null || value.isBlank() || value.startsWith("${")) {
            value = System.getenv(EXTERNAL_PCAPS_ENV);
        }
        require(value != null && !value.isBlank(),
                "the shared captures are not configured: set " + EXTERNAL_PCAPS_ENV + " to the pcap-samples folder");
        Path root = Path.of(value.trim());
        require(Files.isDirectory(root), "the shared captures folder " + root + " (" + EXTERNAL_PCAPS_ENV + ") does not exist");
        return root;
    }
}
