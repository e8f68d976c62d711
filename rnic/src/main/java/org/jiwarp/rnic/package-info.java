/**
 * The software RNIC and its verbs API, shaped after libibverbs and librdmacm (and DiSNI):
 *
 * <ul>
 *   <li>{@link org.jiwarp.rnic.Rnic}: the device context; owns the event loops (native epoll when
 *       present, else NIO) and the STag table; listens and connects ({@code rdma_listen},
 *       {@code rdma_connect}, {@code rdma_accept}/{@code rdma_reject} through
 *       {@link org.jiwarp.rnic.ConnectRequest}), with IRD/ORD negotiated by the MPA enhanced setup
 *       (RFC 6581 section 3).</li>
 *   <li>{@link org.jiwarp.rnic.ProtectionDomain} and {@link org.jiwarp.rnic.MemoryRegion}: regions
 *       over direct {@code ByteBuffer}s or {@code ByteBuf}s, STag = 24-bit index and 8-bit key,
 *       access flags ({@link org.jiwarp.ddp.Access}), local and remote invalidation (RFC 5040
 *       sections 2.1, 5.1; RFC 5041 section 3.2).</li>
 *   <li>{@link org.jiwarp.rnic.CompletionQueue}: poll into a caller's array, blocking take,
 *       notification (all or solicited only), completion listener.</li>
 *   <li>{@link org.jiwarp.rnic.QueuePair}: send and receive queues with depths, scatter/gather
 *       lists, signalled and unsignalled work, fences, ORD/IRD (RFC 5040 sections 5.2, 5.5), and the
 *       state machine of {@link org.jiwarp.rnic.QpState} with flush-in-error on the way down
 *       (RFC 5040 section 6).</li>
 *   <li>The engine ({@code QpEngine}): DDP segmentation and placement (RFC 5041 sections 5, 7, 8),
 *       RDMAP Send, Write, Read and Terminate (RFC 5040 sections 4, 5, 7).</li>
 * </ul>
 */
package org.jiwarp.rnic;
