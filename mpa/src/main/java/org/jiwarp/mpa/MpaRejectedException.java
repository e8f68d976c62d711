package org.jiwarp.mpa;

/**
 * The responder rejected the connection: its Reply had the R bit set (RFC 5044 section 7.1). Not a
 * protocol error, so it maps to no Terminate; it carries the responder's private data, which may
 * say why.
 */
public final class MpaRejectedException extends MpaException {

    private static final long serialVersionUID = 1L;

    private final byte[] privateData;

    public MpaRejectedException(String message, byte[] privateData) {
        super(null, message);
        this.privateData = privateData.clone();
    }

    /** The private data of the rejecting Reply (after the RFC 6581 words, if any). */
    public byte[] privateData() {
        return privateData.clone();
    }
}
