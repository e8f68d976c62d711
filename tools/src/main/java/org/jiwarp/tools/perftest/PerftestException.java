package org.jiwarp.tools.perftest;

/** A perftest run failed: the peer broke the protocol, a work request failed, or a step timed out. */
public final class PerftestException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public PerftestException(String message) {
        super(message);
    }

    public PerftestException(String message, Throwable cause) {
        super(message, cause);
    }
}
