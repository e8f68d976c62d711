package org.jiwarp.mpa;

/**
 * What an endpoint does about MPA CRCs. RFC 5044 section 7.1: CRC is used in both directions when
 * either side sets C, and a responder MUST honour a C set by the initiator.
 */
public enum CrcPolicy {
    /** Set C: CRCs are used in both directions whatever the peer says. */
    REQUIRE,
    /** Do not set C, but use CRCs when the peer sets it (the RFC's behaviour, and Linux siw's). */
    ACCEPT,
    /**
     * Neither set C nor accept it: a responder rejects a Request with C set, an initiator fails on
     * a Reply with C set. Breaks the RFC 5044 rule above; for tests and for peers known to be wrong.
     */
    REFUSE
}
