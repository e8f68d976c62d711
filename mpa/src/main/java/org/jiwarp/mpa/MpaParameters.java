package org.jiwarp.mpa;

/**
 * What an MPA connection setup negotiated, as the layers above need it.
 *
 * @param initiator       {@code true} on the endpoint that sent the Request
 * @param revision        the revision in use (1 or 2)
 * @param enhanced        whether the RFC 6581 enhanced setup took place
 * @param crc             CRCs in both directions (RFC 5044 section 7.1: either side set C)
 * @param markersToPeer   this endpoint inserts markers in what it sends
 * @param markersFromPeer the peer inserts markers in what it sends
 * @param ird             inbound Read Requests this endpoint must accept (its IRD)
 * @param ord             outbound Read Requests this endpoint may have outstanding (its ORD)
 * @param peerIrd         the IRD the peer's RFC 6581 words carried (0x3FFF: no automatic negotiation), or
 *                        -1 without the enhanced setup; RFC 6581 section 9.1 passes it to the ULP
 * @param peerOrd         the ORD the peer's RFC 6581 words carried, or -1 without the enhanced setup
 * @param peerToPeer      peer-to-peer mode was negotiated
 * @param rtr             the ready-to-receive frame exchanged in peer-to-peer mode, or {@code null};
 *                        a {@link RtrType#SEND} RTR used MSN 1 of queue 0 and a {@link RtrType#READ}
 *                        RTR MSN 1 of queue 1, so DDP's counters start at 2 there
 * @param mulpdu          the largest ULPDU to put in one outbound FPDU (RFC 5044 section 5.2)
 * @param maxInboundUlpdu the largest inbound ULPDU accepted
 * @param peerPrivateData the peer's private data, without the RFC 6581 words
 */
public record MpaParameters(boolean initiator, int revision, boolean enhanced, boolean crc, boolean markersToPeer,
        boolean markersFromPeer, int ird, int ord, int peerIrd, int peerOrd, boolean peerToPeer, RtrType rtr, int mulpdu, int maxInboundUlpdu,
        byte[] peerPrivateData) {

    public MpaParameters {
        peerPrivateData = peerPrivateData.clone();
    }

    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    @Override
    public String toString() {
        return "MpaParameters{" + (initiator ? "initiator" : "responder") + ", rev=" + revision
                + (enhanced ? " enhanced" : "") + ", crc=" + crc + ", markers to/from peer=" + markersToPeer + "/"
                + markersFromPeer + ", ird=" + ird + ", ord=" + ord + (peerIrd >= 0 ? ", peer ird/ord=" + peerIrd + "/" + peerOrd : "") + (peerToPeer ? ", p2p rtr=" + rtr : "")
                + ", mulpdu=" + mulpdu + ", peer private data=" + peerPrivateData.length + " octets}";
    }
}
