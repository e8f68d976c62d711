/**
 * The wire formats of iWARP, shared by the live stack, the pcap decoder and the tests.
 *
 * <p>Each sub-package owns the headers of one protocol layer as static accessors over a
 * {@link io.netty.buffer.ByteBuf} and an offset, with one {@code *_OFFSET} constant per field (in
 * the manner of Agrona's flyweights): nothing is allocated per header on the read path.
 *
 * <ul>
 *   <li>{@link org.jiwarp.wire.crc}: CRC-32C (RFC 5044 section 6, RFC 3385).</li>
 *   <li>{@link org.jiwarp.wire.mpa}: MPA Request/Reply frames, FPDUs and markers (RFC 5044
 *       sections 4, 6, 7), the enhanced connection setup words (RFC 6581 section 3).</li>
 *   <li>{@link org.jiwarp.wire.ddp}: DDP tagged and untagged headers (RFC 5041 section 4).</li>
 *   <li>{@link org.jiwarp.wire.rdmap}: the RDMAP control byte, opcodes, Read Request, Send with
 *       Invalidate and Terminate headers (RFC 5040 section 4, RFC 7306 opcodes), and every
 *       Terminate error code of RFC 5040 section 7, RFC 5041 section 7 and RFC 5044 section 8.</li>
 * </ul>
 *
 * <p>Capture files, TCP reassembly and the capture decoder are tooling, not runtime: they live in
 * the {@code capture} module ({@code org.jiwarp.capture.pcap}, {@code org.jiwarp.capture.decode}).
 */
package org.jiwarp.wire;
