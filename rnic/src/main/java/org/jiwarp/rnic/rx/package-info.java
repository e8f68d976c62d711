/**
 * The receive side of a connection (Linux siw's {@code siw_qp_rx.c}): one path from the first FPDU
 * on. MPA's deframer hands every ULPDU to {@link org.jiwarp.rnic.rx.UlpduStream}, header first; the
 * RDMAP receiver checks it (RFC 5041 section 7, RFC 5040 section 7) and places the payload where it
 * names, from each TCP read or read by the socket straight into the validated target (Direct Data
 * Placement, RFC 5041 section 1); with CRC, only once the FPDU is verified (RFC 5044 section 8). A
 * failed check becomes one Terminate.
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API.
 */
package org.jiwarp.rnic.rx;
