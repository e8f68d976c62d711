package org.jiwarp.ddp;

import java.util.Objects;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A DDP error found on an inbound segment, carrying the Terminate error it maps to (RFC 5041
 * section 7.2). The engine turns {@link #error()} into exactly one Terminate message and closes the
 * stream.
 *
 * <p>Checks this package makes on behalf of RDMAP throw it too, with an RDMAP-layer error: the
 * access rights of a tagged sink (RFC 5040 section 7.2 defines the code; DDP has none), the Data
 * Source checks of an RDMA Read Request, and the invalidation of a Send with Invalidate. So the
 * layer of {@link #error()} is not always {@link org.jiwarp.wire.rdmap.TerminateLayer#DDP}.
 */
public final class DdpException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final TerminateError error;

    public DdpException(TerminateError error, String message) {
        super(message);
        this.error = Objects.requireNonNull(error, "error");
    }

    /** The Terminate error: layer, error type and code. */
    public TerminateError error() {
        return error;
    }

    @Override
    public String toString() {
        return getClass().getName() + ": " + error.describe() + ": " + getMessage();
    }
}
