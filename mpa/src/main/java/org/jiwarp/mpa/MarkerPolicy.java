package org.jiwarp.mpa;

/**
 * What an endpoint does about MPA markers (RFC 5044 sections 4.3 and 7.1). Markers are negotiated
 * per direction: M in a frame asks the peer to insert markers in the FPDUs it sends.
 */
public enum MarkerPolicy {
    /** Set M: ask the peer for markers; insert them too when the peer asks. */
    REQUEST,
    /** Do not ask, but insert markers when the peer asks (RFC 5044 section 7.1: MUST). */
    ACCEPT,
    /**
     * Neither ask nor insert: a responder rejects a Request with M set (as Linux siw does), an
     * initiator fails on a Reply with M set.
     */
    REFUSE
}
