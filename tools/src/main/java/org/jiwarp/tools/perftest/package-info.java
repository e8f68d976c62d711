/**
 * {@code jiwarp perftest}: linux-rdma perftest's bandwidth and latency tests over rdma_cm
 * ({@code -R}), spoken byte for byte so that jiwarp runs against {@code ib_write_bw},
 * {@code ib_read_bw}, {@code ib_send_bw} and {@code ib_write_lat} in both roles. The protocol
 * below is perftest 6.06's (Debian 12's package {@code perftest 4.5+0.17-1}, upstream tag
 * {@code v4.5-0.17}: {@code src/perftest_communication.c}, {@code perftest_resources.c},
 * {@code perftest_parameters.c}, {@code write_bw.c}, {@code read_bw.c}, {@code send_bw.c},
 * {@code write_lat.c}); this package is written from that description, not from its code.
 *
 * <h2>Two connections</h2>
 *
 * With {@code -R} perftest opens two rdma_cm (so MPA) connections to the same port, neither with
 * private data of its own:
 * <ol>
 *   <li>the <em>control</em> connection ({@code perftest_comm.rdma_ctx}, the "Data ex. method:
 *       rdma_cm" of its banner): one RC queue pair, one send and one receive of
 *       {@code sizeof(struct pingpong_dest)} = 56 octets, IRD = ORD = 0 in the MPA Request;
 *       the client posts its receive before connecting, the server before accepting, and the
 *       server closes its listener once it has accepted;</li>
 *   <li>the <em>test</em> connection ({@code create_rdma_cm_connection}), made after the version
 *       exchange: the server opens a new listener on the same port after the first handshake
 *       below, the client connects right after it and retries (every 100 ms, 10 times) while the
 *       listener is not there yet. IRD = ORD = 0, except ib_read_bw: both = {@code out_reads}
 *       (the device maximum: 128 on siw, {@code -o}).</li>
 * </ol>
 * Why two: the parameters, keys and reports travel on the control connection, so the test
 * connection carries nothing but the measured traffic.
 *
 * <h2>The control messages</h2>
 *
 * Every message is one Send, in lock step: in each exchange ({@code ctx_xchg_data},
 * {@code ctx_hand_shake}) the <b>client sends first</b> and then waits for the server's message;
 * the server waits, then sends; each side reposts its one receive before sending again. All
 * integers are big-endian. In order:
 * <pre>
 *   #   what                        octets  content
 *   1   version                       16    C string, NUL padded: "6.06"; a peer below 5.70 is refused.
 *                                             jiwarp puts its program, -n and -s after the NUL, where
 *                                             perftest never looks: two jiwarp ends that disagree both
 *                                             stop here and say so
 *   2   cycle buffer (page size)       4    int; both use the larger
 *   3   cache line size                4    int; both use the larger
 *   4   MTU                            2    "%d" of enum ibv_mtu, NUL ("3" = 1024; the smaller is used)
 *   5   handshake, zeros              56    struct pingpong_dest, all zero      )  around the test
 *       -- the test connection is set up --                                     )  connection's
 *   6   handshake, zeros              56                                        )  setup
 *   7.. key handshakes                56    struct pingpong_dest, see below
 * </pre>
 * {@code struct pingpong_dest} (LP64 layout, each field big-endian, {@link
 * org.jiwarp.wire.perftest.PingpongDest}): lid(4) out_reads(4) qpn(4) psn(4) rkey(4) pad(4)
 * vaddr(8) gid(16) srqn(4) gid_index(4). rkey/vaddr name the peer's target: the upper half of its
 * data buffer (see {@link org.jiwarp.tools.perftest.BufferLayout}), or, in ib_send_bw over iWARP,
 * its 4-octet credit word.
 *
 * <h2>Per test, after the two zero handshakes</h2>
 * <pre>
 *   ib_write_bw, ib_read_bw   3 key handshakes ("keys", "remote keys" printed, "after RTR")
 *                             client: runs; prints its report; handshake; report exchange;
 *                                     closing handshake
 *                             server: handshake (waits for the client's end); report exchange;
 *                                     prints the CLIENT's report; closing handshake
 *   ib_send_bw                3 key handshakes (keys are of the credit word); the server posts its
 *                             receives; a start handshake; the run; each prints its own report
 *                             (the server's without a peak); closing handshake
 *   ib_write_lat              4 key handshakes; the ping-pong; each prints its report; no more
 *                             messages
 * </pre>
 * The report exchange ({@code xchg_bw_reports}) is five exchanges of 8 octets, client first:
 * size (long), iterations (long, peer version 5.33 and up), peak, average (MB/s = 2^20 octets a
 * second) and message rate (Mpps) as big-endian IEEE doubles. The server's own fields are
 * uninitialised memory in perftest; jiwarp sends zeros.
 *
 * <h2>The runs</h2>
 * <ul>
 *   <li>Bandwidth client ({@code run_iter_bw}): {@code -n} iterations of {@code -s} octets,
 *       at most {@code -t} (128) outstanding; every {@code -Q}-th work request (100; 1 above
 *       8 KiB) and the last are signalled, the others not. The data buffer holds a send half and
 *       a receive half; while a message fits twice in the page, operation k uses slot
 *       k mod (page / INC(size, cache line)) on both sides. Writes and Reads address the peer's
 *       vaddr plus the slot offset; Reads land in the local send half.</li>
 *   <li>ib_send_bw server ({@code run_iter_bw_server}): posts {@code rx depth} receives
 *       (512, at most the iterations, rounded up to even), reposts while fewer than the iterations
 *       are posted. Over iWARP ({@code send_rcredit}), since a Send without a receive kills the
 *       stream, the server returns credit: after every {@code rx_depth / 3}-th receive it RDMA
 *       Writes its received count (a 32-bit word in the host's order: little-endian on x86) to
 *       the client's credit word; the client never has more than rx depth Sends beyond it.</li>
 *   <li>ib_write_lat ({@code run_iter_lat_write}): the <b>server writes first</b>. Each side
 *       Writes its whole message to the peer's vaddr, its last octet set to the iteration
 *       (mod 256), and spins until its own receive half's last message octet shows the peer's
 *       next iteration; every Write is signalled. Latency is half the gap between a side's
 *       successive posts.</li>
 * </ul>
 * perftest itself checks only work completions, never data.
 *
 * <h2>The end</h2>
 * After the closing handshake ({@code ctx_close_connection}, nothing more over rdma_cm) each
 * side destroys its resources: the client {@code rdma_disconnect}s the test connection and waits
 * for it to close; the server disconnects it at once; the control connection is torn down without
 * a disconnect when the process exits.
 *
 * <h2>Against siw (see the project's iWARP notes)</h2>
 * <ul>
 *   <li>siw's passive side sends its MPA Reply before it attaches its receive path; an FPDU that
 *       arrives in between sits unread until more data arrives. So a jiwarp client pauses
 *       ({@code --settle}, 200 ms) before its first control message, with {@code --p2p} too: there
 *       the RTR may be the FPDU that waits, and the first message frees it (seen here: a P2P client
 *       that did not pause hung with siw's server never seeing the version). ib_write_bw itself
 *       sleeps a second at that point; the others do not. The test connection needs no pause: its
 *       first FPDU follows a round trip on the control connection made after the accept.</li>
 *   <li>ib_write_lat's server writes first, which RFC 5044 section 7.1.2 forbids a responder that
 *       has not yet received an FPDU; siw does not enforce it; jiwarp's responder does, so its
 *       ib_write_lat server lifts that gate on the test connection.</li>
 *   <li>siw fails a work request whose last FPDU has already gone out if the peer's FIN arrives
 *       before siw has retired it (status 2, IBV_WC_LOC_QP_OP_ERR: "Bad wc status 2" in perftest).
 *       So the end that received the last message does not close that connection at once: a
 *       jiwarp client waits for the server to close the control connection (bandwidth tests) or
 *       the test connection (ib_write_lat); a jiwarp server waits up to a second for the client.</li>
 *   <li>siw clamps IRD/ORD to 128 and answers IRD/ORD 0 with 0: fine for all but ib_read_bw,
 *       which asks for 128 both ways.</li>
 *   <li>perftest times with the TSC and refuses to report when its TSC sample is not linear
 *       ("Can't produce a report", exit 1), as under QEMU TCG; {@code -F} makes it report anyway,
 *       with figures that may then be 0 or nan.</li>
 * </ul>
 *
 * <h2>What jiwarp checks</h2>
 * Every completion, its opcode and that the counts add up; every control message's length; that
 * the server's view of the client's report matches its own parameters. A Read client reads the
 * server's slots back once more and compares them with what its Reads placed; a Write or Send
 * server fills its receive half with a pattern first and checks that exactly the message slots
 * changed; ib_write_lat checks every iteration's octet. Each side reports a CRC-32C of the message
 * slots its data ended in, which two jiwarp ends can compare.
 */
package org.jiwarp.tools.perftest;
