package org.jiwarp.wire.rdmap;

import java.util.Objects;

/**
 * An error found on an inbound DDP segment or RDMAP message that the stream reports with one
 * Terminate (RFC 5040 section 5.6): the exception type DDP and RDMAP share, as codec-http2's
 * {@code Http2Exception} carries an {@code Http2Error}. {@link #error()} holds the layer, error type
 * and code; each layer throws only the errors of its own layer (DDP the DDP ones, RDMAP the RDMAP
 * ones), and the stream turns it into exactly one Terminate and closes.
 *
 * <p>Framing errors below DDP are MPA's ({@code MpaException}, a Netty {@code DecoderException}),
 * carrying an LLP error of the same enum.
 */
public class TerminateException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final TerminateError error;

    public TerminateException(TerminateError error, String message) {
        super(message);
        this.error = Objects.requireNonNull(error, "error");
    }

    /** The Terminate error: layer, error type and code. */
    public TerminateError error() {
        return error;
    }

    @Override
    public String toString() {
        return "TerminateException: " + error.describe() + ": " + getMessage();
    }
}
