package org.jiwarp.rnic;

import org.jiwarp.mpa.MpaParameters;

/**
 * What a queue pair's connection setup negotiated (RFC 5044 section 7, RFC 6581 section 3), as a
 * verbs user needs it.
 *
 * @param initiator       {@code true} on the end that connected
 * @param revision        the MPA revision in use (1 or 2)
 * @param enhanced        whether the RFC 6581 enhanced setup took place (IRD and ORD were exchanged)
 * @param crc             CRCs in both directions
 * @param markersToPeer   this end inserts markers in what it sends
 * @param markersFromPeer the peer inserts markers in what it sends
 * @param ird             inbound RDMA Reads this end accepts at once
 * @param ord             outbound RDMA Reads this end may have outstanding
 * @param peerIrd         the peer's IRD as its RFC 6581 words said (0x3FFF: no automatic negotiation), or -1
 *                        without the enhanced setup; RFC 6581 section 9.1 passes it to the ULP, which may
 *                        use it to size its own requests
 * @param peerOrd         the peer's ORD as its RFC 6581 words said, or -1
 * @param peerToPeer      peer-to-peer mode (RFC 6581) was negotiated
 * @param rtr             the ready-to-receive message of peer-to-peer mode, or {@code null}
 * @param mulpdu          the largest ULPDU this end puts in one FPDU
 * @param peerPrivateData the peer's private data
 */
public record ConnectionParameters(boolean initiator, int revision, boolean enhanced, boolean crc, boolean markersToPeer,
        boolean markersFromPeer, int ird, int ord, int peerIrd, int peerOrd, boolean peerToPeer, Rtr rtr, int mulpdu,
        byte[] peerPrivateData) {

    /** The zero-length message peer-to-peer mode exchanges before any other (RFC 6581 section 3). */
    public enum Rtr {
        SEND, WRITE, READ
    }

    public ConnectionParameters {
        peerPrivateData = peerPrivateData.clone();
    }

    static ConnectionParameters of(MpaParameters p) {
        return new ConnectionParameters(p.initiator(), p.revision(), p.enhanced(), p.crc(), p.markersToPeer(), p.markersFromPeer(),
                p.ird(), p.ord(), p.peerIrd(), p.peerOrd(), p.peerToPeer(), p.rtr() == null ? null : Rtr.valueOf(p.rtr().name()), p.mulpdu(),
                p.peerPrivateData());
    }

    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    @Override
    public String toString() {
        return (initiator ? "initiator" : "responder") + ", MPA revision " + revision + ", CRC "
                + (crc ? "on" : "off") + ", markers " + (markersToPeer ? "to" : "not to") + " / "
                + (markersFromPeer ? "from" : "not from") + " the peer, IRD " + ird + ", ORD " + ord
                + (peerIrd >= 0 ? " (the peer's " + peerIrd + "/" + peerOrd + ")" : "")
                + (peerToPeer ? ", peer-to-peer with a " + rtr + " RTR" : "") + ", MULPDU " + mulpdu
                + ", " + peerPrivateData.length + " octets of private data from the peer";
    }
}
