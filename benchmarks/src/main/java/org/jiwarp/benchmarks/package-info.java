/**
 * JMH benchmarks: CRC-32C ({@link org.jiwarp.benchmarks.Crc32cBenchmark}, RFC 5044 section 6),
 * and, as the stack grows, header access, FPDU framing and deframing with markers, DDP placement
 * and end-to-end RDMA Write bandwidth beside a raw-TCP baseline. Benchmarks measure; tests never
 * time anything.
 */
package org.jiwarp.benchmarks;
