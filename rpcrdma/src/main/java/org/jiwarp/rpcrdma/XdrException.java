package org.jiwarp.rpcrdma;

/** An XDR stream that does not decode: too short, a length over its bound, a bad discriminant. */
public final class XdrException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public XdrException(String message) {
        super(message);
    }
}
