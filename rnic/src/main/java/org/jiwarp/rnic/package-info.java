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
 *
 * <p>End to end, the passive side listens and accepts onto a queue pair; the active side connects,
 * then writes into the region the passive side advertised and sends it a message:
 * <pre>{@code
 * // Passive side.
 * QueuePair serverQp = server.createQp(new QpConfig(serverPd, serverCq, serverCq));
 * serverQp.postReceive(new ReceiveWorkRequest(1, Sge.of(serverMr)));
 * server.listen(new InetSocketAddress(7174), request -> request.accept(serverQp, new byte[0]));
 *
 * // Active side.
 * QueuePair qp = client.createQp(new QpConfig(pd, cq, cq));
 * client.connect(qp, new InetSocketAddress("server", 7174), new byte[0]).get();
 * qp.postSend(SendWorkRequest.write(1, serverMrAddress, serverMrRkey, new Sge(mr, 0, 4096)));
 * qp.postSend(SendWorkRequest.send(2, new Sge(mr, 0, 64)));   // arrives after the Write is placed
 * WorkCompletion wc = cq.take(5, TimeUnit.SECONDS);
 * }</pre>
 */
package org.jiwarp.rnic;
