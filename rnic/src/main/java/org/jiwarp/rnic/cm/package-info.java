/**
 * The connection manager (Linux siw's {@code siw_cm.c}): the event loops and every connection's
 * channel, and the one place that builds a connection's pipeline
 * ({@link org.jiwarp.rnic.cm.ConnectionManager}); MPA connection setup itself (RFC 5044 section 7,
 * RFC 6581 section 3) is {@code org.jiwarp.mpa}'s. Also here: the cap on connections in setup
 * ({@link org.jiwarp.rnic.cm.SetupLimit}), the count of octets handed to TCP that frees IRD entries
 * (RFC 5040 section 5.2, {@link org.jiwarp.rnic.cm.OctetsToTcp}), how the LLP stream is closed, within
 * a bound, after a Terminate (RFC 5040 section 5.6) or a disconnect
 * ({@link org.jiwarp.rnic.cm.LlpClose}), and the capture option
 * ({@link org.jiwarp.rnic.cm.PcapCapture}).
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API.
 */
package org.jiwarp.rnic.cm;
