package org.jiwarp.conformance.siw;

/**
 * The siw peer could not be built, booted or talked to. The message carries what helps most: the
 * build script's output, or the tail of the guest console and QEMU's own log.
 */
public final class SiwPeerException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SiwPeerException(String message) {
        super(message);
    }

    public SiwPeerException(String message, Throwable cause) {
        super(message, cause);
    }
}
