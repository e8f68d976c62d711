package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a test needs from outside the project (tshark, the shared captures): on a developer's
 * machine a missing tool skips the test with the reason; under {@code CI=true} it fails with it,
 * so that CI never passes by skipping.
 */
final class Required {

    private Required() {
    }

    static void require(boolean present, String reason) {
        if (present) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail(reason + " (CI=true: a missing tool or capture set is a failure, not a skip)");
        }
        assumeTrue(false, reason);
    }
}
