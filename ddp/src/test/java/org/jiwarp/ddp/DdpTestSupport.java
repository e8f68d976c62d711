package org.jiwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.function.Executable;

/** Shared pieces of the DDP tests. */
final class DdpTestSupport {

    private DdpTestSupport() {
    }

    /**
     * Asserts that {@code body} throws a {@link DdpException} with exactly this Terminate error, checking
     * layer, error type and code as raw wire values too.
     */
    static DdpException assertTerminate(TerminateLayer layer, int errorType, int errorCode, TerminateError expected,
            Executable body) {
        return assertTerminate(layer, errorType, errorCode, expected, body, "");
    }

    /** The same, with {@code what} naming the case in a failure. */
    static DdpException assertTerminate(TerminateLayer layer, int errorType, int errorCode, TerminateError expected,
            Executable body, String what) {
        DdpException e = assertThrows(DdpException.class, body, what);
        assertEquals(expected, e.error(), what + ": " + e.getMessage());
        assertEquals(layer, e.error().layer(), what + ": layer");
        assertEquals(errorType, e.error().errorType(), what + ": error type");
        assertEquals(errorCode, e.error().errorCode(), what + ": error code");
        return e;
    }

    /** Random octets, eight per draw. */
    static byte[] randomBytes(SplittableRandom random, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i += 8) {
            long value = random.nextLong();
            for (int j = i; j < Math.min(length, i + 8); j++) {
                bytes[j] = (byte) value;
                value >>>= 8;
            }
        }
        return bytes;
    }

    /**
     * Runs {@code body} on a fresh thread and rethrows what it threw: under paranoid leak detection Netty
     * records a stack trace on each buffer access, which costs several times more from JUnit's deep stack.
     */
    static void onShallowStack(Runnable body) {
        Throwable[] thrown = new Throwable[1];
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                thrown[0] = t;
            }
        }, "property");
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
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
}
