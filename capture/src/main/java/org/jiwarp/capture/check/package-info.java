/**
 * The passive RFC checker behind {@code jiwarp check}: reads a decoded capture (every connection,
 * both directions) and reports what the RFCs forbid, each {@link org.jiwarp.capture.check.Finding}
 * with its frames, connection, {@link org.jiwarp.capture.check.Rule} and RFC section:
 *
 * <ul>
 *   <li>MPA connection setup: revisions, reserved bits, private data length, CRC and markers per
 *       direction (RFC 5044 section 7.1); the enhanced setup's IRD/ORD and ready-to-receive
 *       choice (RFC 6581 section 3); in peer-to-peer mode the ready-to-receive message first
 *       (RFC 6581 section 3); ULPDUs within the MULPDU of the receiver's MSS (RFC 5044 section
 *       5.2).</li>
 *   <li>FPDUs: CRC (RFC 5044 section 6), markers (section 4.3), pad (section 4.1).</li>
 *   <li>DDP: version, reserved bits, queue numbers, MSN per queue, MO continuity and the Last flag
 *       (RFC 5041 sections 4 and 5).</li>
 *   <li>RDMAP: version and opcode per queue (RFC 5040 section 4), Read Responses against the
 *       outstanding Read Requests (sink STag, TO, length, order) and the negotiated IRD, the
 *       Invalidate STag field, traffic after a Terminate, and well-formed Terminates
 *       (RFC 5040 sections 4.8 and 5.6); Writes, Read Requests and Send with Invalidate against
 *       the STags the capture shows being advertised in rping's and perftest's Sends
 *       (RFC 5041 section 7.1, RFC 5040 section 5.3).</li>
 *   <li>RPC-over-RDMA (on connections whose MPA exchange carries RFC 8797 private data): RDMA
 *       Writes and Read Requests inside the chunks the other end advertised (RFC 8166 section
 *       3.4), a Send with Invalidate invalidating a handle of the call it answers, and calls in
 *       flight within the credits granted (RFC 8166 section 3.3.1).</li>
 * </ul>
 *
 * <p>Known implementation quirks are named as such (Linux siw 6.1's little-endian Terminate
 * bitfields; early implementations' drifting marker grid and little-endian FPDUPTR), so that a report on a real device's capture says what it is looking at.
 *
 * <p>{@link org.jiwarp.capture.check.CaptureChecker} takes PDUs one at a time in frame order, so a
 * capture of any size is checked as it is decoded. What it keeps grows with what the capture shows,
 * not with its length: per connection the next MSN and message offset of each queue, the
 * outstanding Read Requests and RPC-over-RDMA calls (bounded by IRD/ORD and credits), the STags
 * advertised (rping's and perftest's Sends, RPC-over-RDMA chunks), and the frames of each finding.
 */
package org.jiwarp.capture.check;
