/**
 * The iWARP stream decoder over captured TCP (the pcap side of the stack): finds the MPA Request
 * and Reply (RFC 5044 section 7.1, RFC 6581 section 3), applies the negotiated CRC and markers,
 * reads FPDUs (RFC 5044 sections 4.1-4.4) and decodes DDP (RFC 5041 section 4) and RDMAP (RFC 5040
 * section 4) headers into Wireshark's field names ({@code iwarp_mpa.*}, {@code iwarp_ddp.*},
 * {@code iwarp_rdma.*}) with tshark's value formatting, so that the two can be compared field by
 * field. It reads headers through the same accessors the live stack uses.
 * {@link org.jiwarp.capture.decode.FrameFields} gives the common frame, IP and TCP fields
 * ({@code frame.*}, {@code ip.*}, {@code ipv6.*}, {@code tcp.*}) with tshark's formatting.
 *
 * <p>Where a capture misses something it finds its way back: after a gap in a direction's TCP
 * stream, and in a capture that begins mid-connection, the next FPDU boundary is searched for by
 * CRC, markers or plausible DDP/RDMAP headers ({@link org.jiwarp.capture.decode.FpduBoundarySearch});
 * markers are also located by their content ({@link org.jiwarp.capture.decode.ContentMarkers}), so
 * that a sender whose marker grid is not RFC 5044 section 4.3's (drifting, FPDUPTR little-endian)
 * still decodes.
 *
 * <p>{@link org.jiwarp.capture.decode.StreamingDecode} decodes a capture of any size as its records
 * are read, in memory bounded by a window of reassembled octets, handing each PDU on in frame
 * order; {@link org.jiwarp.capture.decode.IwarpStreamDecoder#decode(org.jiwarp.capture.pcap.PcapFile)}
 * is the same decoding of a capture held in memory, with a window as large as the capture.
 */
package org.jiwarp.capture.decode;
