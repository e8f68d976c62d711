/**
 * rdma-core's rping messages ({@code librdmacm/examples/rping.c}): {@code struct rping_rdma_info}
 * and the ping pattern, octet for octet ({@link org.jiwarp.wire.rping.RpingMessages}). Not iWARP:
 * the Sends (RFC 5040 section 4.3) they travel in are. {@code jiwarp ping} and {@code jiwarp
 * conform}, which plays rping's other end, both speak it from here.
 */
package org.jiwarp.wire.rping;
