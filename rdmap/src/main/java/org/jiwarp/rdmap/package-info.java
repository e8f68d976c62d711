/**
 * RDMAP (RFC 5040) protocol state, free of Netty handlers: the Read Requests sent and bounded by
 * ORD, matched to their responses in order ({@link org.jiwarp.rdmap.OutboundReads}, sections 4.4,
 * 4.5, 5.2); the inbound Read Requests bounded by IRD and answered in order
 * ({@link org.jiwarp.rdmap.InboundReads}, section 5.2); Terminate building and reading with HdrCt
 * M/D/R and the carried headers ({@link org.jiwarp.rdmap.TerminateMessages}, sections 4.8, 5.6);
 * and RDMAP's error type ({@link org.jiwarp.rdmap.TerminateException}, section 7.2). The RNIC engine in
 * {@code org.jiwarp.rnic} drives them; the wire formats are in {@code org.jiwarp.wire.rdmap}.
 */
package org.jiwarp.rdmap;
