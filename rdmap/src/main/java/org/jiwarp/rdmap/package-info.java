/**
 * RDMAP (RFC 5040): what this module owns.
 *
 * <ul>
 *   <li>Send, Send with Invalidate, Send with Solicited Event (and both), RDMA Write, RDMA Read
 *       Request and Read Response, Terminate (RFC 5040 sections 4.3-4.8, 5).</li>
 *   <li>Reads bounded by ORD outbound and IRD inbound, answered in request order, with responses
 *       matched to their requests (section 5.2); RFC 7306 atomics and immediate data later.</li>
 *   <li>Terminate generation and reception: HdrCt M/D/R, the DDP segment length and the carried
 *       headers (sections 4.8, 7).</li>
 *   <li>The ordering and completion rules of section 5.5: placement before completion, fences.</li>
 * </ul>
 *
 * <p>Opcodes, headers and error codes live in {@code org.jiwarp.wire.rdmap} (wire-codecs). Filled by
 * the RNIC issue.
 */
package org.jiwarp.rdmap;
