/**
 * The software RNIC: what this module owns.
 *
 * <ul>
 *   <li>A verbs API a libibverbs or DiSNI user recognises: {@code Rnic} (owning Netty event loops,
 *       NIO or native epoll), protection domains, memory regions with STags (24-bit index, 8-bit
 *       key) and access flags, completion queues (poll, blocking take, notification, listener),
 *       queue pairs with send/receive queues, ORD/IRD and the QP state machine IDLE, RTS, CLOSING or
 *       TERMINATE, ERROR (RFC 5040 section 6, RFC 5041 section 8).</li>
 *   <li>A connection manager: listen, accept or reject with private data, connect, IRD/ORD through
 *       MPA enhanced setup (RFC 6581), graceful disconnect (RFC 5040 section 6.2).</li>
 *   <li>The transport gluing MPA, DDP and RDMAP pipelines to the verbs, and capture to pcap.</li>
 * </ul>
 *
 * <p>Filled by the RNIC issue.
 */
package org.jiwarp.rnic;
