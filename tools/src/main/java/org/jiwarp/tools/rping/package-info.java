/**
 * {@code jiwarp ping}: rdma-core's rping protocol over jiwarp, in both roles: buffer advertisements
 * by Send (RFC 5040 section 4.3), the server's RDMA Read of the client's buffer (section 4.4) and its
 * RDMA Write back (section 4.2), the client's check. Connections carry no private data, and ask for
 * IRD = ORD = 1 in the RFC 6581 enhanced setup, as rping does.
 */
package org.jiwarp.tools.rping;
