/**
 * MPA on Netty (RFC 5044, RFC 6581): what this module owns.
 *
 * <ul>
 *   <li>Connection setup as pipeline handlers in both roles: the Request, Reply and reject
 *       exchange with private data and timeouts (RFC 5044 section 7.1, 7.2), the enhanced setup with
 *       IRD/ORD negotiation, peer-to-peer mode and ready-to-receive frames (RFC 6581 section 3), and
 *       the rule that a responder sends no FPDU before the initiator's first (RFC 5044 section 7.1.2).</li>
 *   <li>The FPDU framer and deframer: length, pad, markers every 512 octets and CRC-32C
 *       (RFC 5044 sections 4.1-4.4, 6), correct under any TCP segmentation and without copying
 *       payload; MULPDU from the effective MSS (section 5.2).</li>
 *   <li>MPA's errors, reported upward with their LLP Terminate codes (RFC 5044 section 8).</li>
 * </ul>
 *
 * <p>The wire formats themselves live in {@code org.jiwarp.wire.mpa} (wire-codecs), shared with the
 * pcap decoder. Filled by the MPA issue.
 */
package org.jiwarp.mpa;
