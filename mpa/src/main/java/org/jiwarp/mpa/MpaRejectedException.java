package org.jiwarp.mpa;

/**
 * The responder rejected the connection: its Reply had the R bit set (RFC 5044 section 7.1). Not a
 * protocol error, so it maps to no Terminate; it carries the responder's private data, which may
 * say why.
 */
public final class MpaRejectedException extends MpaException {

    private static final long serialVersionUID = 1L;

    private final byte[] privateData;
    private final int peerIrd;
    private final int peerOrd;

    public MpaRejectedException(String message, byte[] privateData) {
        this(message, privateData, -1, -1);
    }

    /** With the IRD and ORD of the rejecting Reply's RFC 6581 words (-1 when it had none). */
    public MpaRejectedException(String message, byte[] privateData, int peerIrd, int peerOrd) {
        super(null, message);
        this.privateData = privateData.clone();
        this.peerIrd = peerIrd;
        this.peerOrd = peerOrd;
    }

    /**
     * The responder's IRD from the rejecting Reply's RFC 6581 words, or -1 when the Reply was not
     * enhanced: RFC 6581 section 9.1 has the initiator pass it to the ULP on a rejection too.
     */
    public int peerIrd() {
        return peerIrd;
    }

    /** The responder's ORD from the rejecting Reply's RFC 6581 words, or -1. */
    public int peerOrd() {
        return peerOrd;
    }

    /** The private data of the rejecting Reply (after the RFC 6581 words, if any). */
    public byte[] privateData() {
        return privateData.clone();
    }
}
