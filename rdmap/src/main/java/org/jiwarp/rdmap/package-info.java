/**
 * RDMAP (RFC 5040) as its own layer over DDP, one object per stream, free of Netty handlers
 * (siw's {@code siw_qp_rx.c} and {@code siw_qp_tx.c} above DDP):
 *
 * <ul>
 *   <li><b>Receive</b>: {@link org.jiwarp.rdmap.RdmapReceiver} takes each ULPDU, has DDP check its
 *       header, checks the RDMAP version and opcode (section 7.2) and hands it to one method per
 *       opcode: RDMA Write (section 4.3), Read Response matched by
 *       {@link org.jiwarp.rdmap.OutboundReads} (sections 4.5, 5.2), the Send family with Solicited
 *       Event and Invalidate (sections 4.1, 5.3), Read Request to
 *       {@link org.jiwarp.rdmap.ReadResponder} (sections 4.4, 5.2, bounded by the IRD), Terminate
 *       (sections 4.8, 5.6). What completes goes up through {@link org.jiwarp.rdmap.RdmapListener}.
 *       Streamed, a tagged segment or a Send is checked from its header alone
 *       ({@link org.jiwarp.rdmap.RdmapReceiver#begin}), its payload placed piece by piece as MPA
 *       passes it on, and its completion reported once MPA has checked the FPDU.</li>
 *   <li><b>Transmit</b>: {@link org.jiwarp.rdmap.RdmapTransmitter} builds Send, Write, Read Request,
 *       Read Response and Terminate messages onto DDP's segmenter and a
 *       {@link org.jiwarp.rdmap.SegmentOutput}, with the MSNs of queues 0, 1 and 2 (section 5.1).</li>
 *   <li><b>Tagged access</b>: {@link org.jiwarp.rdmap.TaggedAccess} adds RDMAP's access check to
 *       DDP's tagged checks, checks a Read's Data Source at RDMAP through one DDP-to-RDMAP error
 *       table, and invalidates STags for Send with Invalidate (sections 5.2, 5.3, 7.2).</li>
 *   <li><b>Terminate</b>: {@link org.jiwarp.rdmap.TerminateMessages} builds and reads Terminates with
 *       HdrCt M/D/R and the carried headers (sections 4.8, 5.6). Errors travel as
 *       {@code org.jiwarp.wire.rdmap.TerminateException}, shared with DDP.</li>
 * </ul>
 *
 * <p>Not thread-safe: a stream's objects belong to its connection's thread. The RNIC in
 * {@code org.jiwarp.rnic} drives them; the wire formats are in {@code org.jiwarp.wire.rdmap}.
 */
package org.jiwarp.rdmap;
