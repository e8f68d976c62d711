package org.jiwarp.mpa;

import io.netty.handler.codec.DecoderException;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * An MPA error: a framing or connection-setup failure with the LLP error it maps to (RFC 5044
 * section 8, RFC 6581 section 3), so that RDMAP can report it in a Terminate. The handler that
 * throws it closes the connection right after.
 */
public class MpaException extends DecoderException {

    private static final long serialVersionUID = 1L;

    private final TerminateError error;

    public MpaException(TerminateError error, String message) {
        super(message);
        this.error = error;
    }

    public MpaException(TerminateError error, String message, Throwable cause) {
        super(message, cause);
        this.error = error;
    }

    /**
     * The LLP-layer error for the Terminate, or {@code null} for a failure no Terminate reports
     * (the peer rejected the connection).
     */
    public TerminateError error() {
        return error;
    }
}
