/**
 * The software RNIC and its verbs API, shaped after libibverbs and librdmacm (and DiSNI), over the
 * RDMAP layer of {@code org.jiwarp.rdmap}:
 *
 * <ul>
 *   <li>{@link org.jiwarp.rnic.Rnic}: the device context; owns the event loops (native epoll when
 *       present, else NIO) and the STag table; listens and connects ({@code rdma_listen},
 *       {@code rdma_connect}, {@code rdma_accept}/{@code rdma_reject} through
 *       {@link org.jiwarp.rnic.ConnectRequest}), with IRD/ORD negotiated by the MPA enhanced setup
 *       (RFC 6581 section 3) and reported in {@link org.jiwarp.rnic.ConnectionParameters}.</li>
 *   <li>{@link org.jiwarp.rnic.ProtectionDomain} and {@link org.jiwarp.rnic.MemoryRegion}: regions
 *       over direct {@code ByteBuffer}s or {@code ByteBuf}s, STag = 24-bit index and 8-bit key,
 *       access flags, local and remote invalidation (RFC 5040 sections 2.1, 5.1; RFC 5041 section
 *       3.2).</li>
 *   <li>{@link org.jiwarp.rnic.CompletionQueue}: poll into a caller's array, blocking take,
 *       notification (all or solicited only), completion listener.</li>
 *   <li>{@link org.jiwarp.rnic.QueuePair}: send and receive queues with depths, scatter/gather
 *       lists, signalled and unsignalled work, fences, ORD/IRD (RFC 5040 sections 5.2, 5.5).</li>
 *   <li>{@link org.jiwarp.rnic.SharedReceiveQueue} ({@code ibv_srq}): one pool of receives for the
 *       queue pairs created with it ({@link org.jiwarp.rnic.QpConfig#srq}), bounded by
 *       {@code maxWr}, taken oldest first as each Send starts, with a limit that fires
 *       {@code SRQ_LIMIT_REACHED} once; a queue pair on it that enters ERROR flushes only the
 *       receive it was filling and fires {@code QP_LAST_WQE_REACHED}.</li>
 * </ul>
 *
 * <h2>The queue pair state machine</h2>
 *
 * <p>Every state change goes through {@link org.jiwarp.rnic.qp.QpStateMachine#apply}, one table of
 * allowed (state, {@link org.jiwarp.rnic.qp.QpEvent event}) pairs applied atomically (RFC 5040 section
 * 6 and the verbs; siw's {@code siw_qp_modify()}):
 *
 * <pre>
 *           ESTABLISHED            MODIFY_TO_CLOSING
 *   IDLE -----------------> RTS ------------------------> CLOSING
 *    |                       |                              |
 *    |                       | TERMINATE_SENT,              | TERMINATE_SENT,
 *    |                       | TERMINATE_RECEIVED           | TERMINATE_RECEIVED
 *    |                       v                              v
 *    |                   TERMINATE <--------------------------
 *    |                       |
 *    |   CONNECTION_CLOSED, MODIFY_TO_ERROR, CQ_ERROR (from every state)
 *    +---------------------> ERROR  (final: outstanding work flushed exactly once)
 * </pre>
 *
 * <p>Entering ERROR flushes every outstanding work request in flush error, once; work posted in
 * ERROR completes at once in flush error, receives included. A queue pair on a shared receive queue
 * holds only the receive it is filling: the queue's others stay for its other queue pairs.
 *
 * <h2>The engine, room by room</h2>
 *
 * <p>Below the verbs, the RNIC's engine is split by concern as Linux siw's is, one package each
 * (public for the verbs' sake, not an API):
 *
 * <pre>
 *   org.jiwarp.rnic        verbs: Rnic, ProtectionDomain, MemoryRegion, CompletionQueue, QueuePair ...
 *      |
 *      +-- cm   connection manager: event loops, the one pipeline assembler, bounded closes (siw_cm.c)
 *      +-- qp   state machine and its side effects: Terminate, flush once, close, events (siw_qp.c)
 *      +-- rx   receive: one path from the first FPDU, placement straight from the socket (siw_qp_rx.c)
 *      +-- tx   transmit: send queue, doorbell, segment output and write bound (siw_qp_tx.c)
 *      +-- cq   completions, in posting order, into the completion queues' sinks
 *      +-- mem  local access checks of scatter/gather entries (siw_mem.c)
 * </pre>
 *
 * <p>Calls go one way: {@code QueuePair} to the engine's {@code QpConnection}, which drives the
 * send queue and RDMAP; what happens below comes back through listeners
 * ({@link org.jiwarp.rdmap.RdmapListener}, the completion queues' sinks, the listeners a
 * {@code QpConnection} is built with), never as a call into the caller.
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li>Thread-safe, from any thread: {@code postSend}, {@code postReceive} (of a queue pair or a
 *       shared receive queue), {@code modifyLimit}, {@code disconnect},
 *       {@code modifyToError}, {@code destroy}, {@code state}, every {@code CompletionQueue}
 *       method, registration and deregistration, {@code Rnic.connect}/{@code listen}.</li>
 *   <li>Each connection is served by one event-loop thread: completion listeners, CQ
 *       notification listeners, {@code onTerminate} and the futures of {@code connect} and
 *       {@code accept} run there. Do not block in them; {@link org.jiwarp.rnic.QueuePair#execute}
 *       runs a task on that thread later.</li>
 *   <li>Work posted from one thread goes out in the order it was posted; posts from several threads
 *       interleave as they reach the event loop.</li>
 * </ul>
 */
package org.jiwarp.rnic;
