/**
 * The raw iWARP peer the conformance cases drive: a blocking socket pointed at a remote end to send
 * it whatever a case likes, right or wrong, and to record what comes back. Built only on
 * {@code wire-codecs}, so that {@code rnic}'s own tests can use it too.
 *
 * <ul>
 *   <li>{@link org.jiwarp.conform.peer.RawConnection}: a blocking socket that does MPA setup by hand
 *       (RFC 5044 section 7.1, RFC 6581 sections 6 and 9) with frames from
 *       {@link org.jiwarp.conform.peer.MpaBytes}, then frames and reads FPDUs itself (RFC 5044 sections
 *       4 to 6: markers, pad, CRC), checking every FPDU the remote end sends.</li>
 *   <li>{@link org.jiwarp.conform.peer.Ulpdus}: DDP segments (RFC 5041 section 4) with their RDMAP
 *       headers (RFC 5040 section 4), every field settable, and the classifiers (Terminate, Read
 *       Request, Read Response) the peers sort what they receive with.</li>
 * </ul>
 *
 * <p>Failures are plain {@link java.lang.AssertionError}s, so the peer needs no test framework.
 */
package org.jiwarp.conform.peer;
