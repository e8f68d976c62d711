package org.jiwarp.rpcrdma;

/** Failures in words, for messages a user reads. */
final class Failures {

    private Failures() {
    }

    static String describe(Throwable t) {
        if (t == null) {
            return "unknown failure";
        }
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
