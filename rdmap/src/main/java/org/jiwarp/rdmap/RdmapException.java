package org.jiwarp.rdmap;

import org.jiwarp.wire.rdmap.TerminateError;

/**
 * An RDMAP error (RFC 5040 section 7.2) detected while processing an inbound message; the engine
 * turns it into exactly one Terminate with {@link #error()}.
 */
public final class RdmapException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final TerminateError error;

    public RdmapException(TerminateError error, String message) {
        super(message);
        this.error = error;
    }

    public TerminateError error() {
        return error;
    }
}
