package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.function.Executable;

/** Assertions on the {@link TerminateException}s the layers throw, shared by their tests (test-jar). */
public final class TerminateAssertions {

    private TerminateAssertions() {
    }

    /**
     * Asserts that {@code body} throws a {@link TerminateException} with exactly this Terminate error,
     * checking layer, error type and code as raw wire values too.
     */
    public static TerminateException assertTerminate(TerminateLayer layer, int errorType, int errorCode,
            TerminateError expected, Executable body) {
        return assertTerminate(layer, errorType, errorCode, expected, body, "");
    }

    /** The same, with {@code what} naming the case in a failure. */
    public static TerminateException assertTerminate(TerminateLayer layer, int errorType, int errorCode,
            TerminateError expected, Executable body, String what) {
        TerminateException e = assertThrows(TerminateException.class, body, what);
        assertEquals(expected, e.error(), what + ": " + e.getMessage());
        assertEquals(layer, e.error().layer(), what + ": layer");
        assertEquals(errorType, e.error().errorType(), what + ": error type");
        assertEquals(errorCode, e.error().errorCode(), what + ": error code");
        return e;
    }
}
