/**
 * {@code jiwarp bench}: perftest-style bandwidth and latency of RDMA Write, RDMA Read and Send
 * (RFC 5040 sections 4.2-4.4) over jiwarp, and the same transfer patterns over plain TCP
 * ({@link org.jiwarp.cli.bench.TcpBaseline}) so that one run shows the cost of MPA, DDP and RDMAP.
 *
 * <p>Both stacks share the patterns ({@link org.jiwarp.cli.bench.StreamPattern} for bandwidth,
 * {@link org.jiwarp.cli.bench.PingPongPattern} for latency): the same queue depth, the same one in
 * {@code cqMod} signaled, the same batching (one flush per batch of posts), the same closing round
 * trip, the same buffers and event loop threads. The client's parameters travel to the server in
 * the MPA Request's private data (RFC 5044 section 7.1), the server's buffer in the Reply's.
 */
package org.jiwarp.cli.bench;
