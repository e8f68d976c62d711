/**
 * JMH benchmarks: CRC-32C ({@link org.jiwarp.benchmarks.Crc32cBenchmark}, RFC 5044 section 6),
 * and, as the stack grows, header access, FPDU framing and deframing with markers, DDP placement
 * and end-to-end RDMA Write bandwidth beside a raw-TCP baseline. Benchmarks measure; tests never
 * time anything. {@link org.jiwarp.benchmarks.NfsTransports} is a plain main class, not JMH: NFSv3
 * (RFC 1813) over RPC-over-RDMA (RFC 8166, RFC 8267) against NFSv3 over TCP (RFC 5531 section 11)
 * on one {@code jiwarp nfs serve}, in steady state.
 */
package org.jiwarp.benchmarks;
