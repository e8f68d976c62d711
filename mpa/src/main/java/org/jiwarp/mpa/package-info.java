/**
 * MPA on Netty (RFC 5044, RFC 6581): connection setup, FPDU framing with markers and CRC-32C.
 *
 * <ul>
 *   <li><b>Connection setup</b>, one handler per role: {@link org.jiwarp.mpa.MpaInitiatorHandler}
 *       sends the Request and waits for the Reply (RFC 5044 section 7.1.1);
 *       {@link org.jiwarp.mpa.MpaResponderHandler} waits for the Request, hands it to the
 *       application's {@link org.jiwarp.mpa.MpaAcceptor} and sends the Reply, accepting or
 *       rejecting (section 7.1.2). Revisions 1 and 2; the RFC 6581 section 3 enhanced setup with
 *       IRD/ORD negotiation, peer-to-peer mode and ready-to-receive frames
 *       ({@link org.jiwarp.mpa.RtrType}). Policies for CRC and markers
 *       ({@link org.jiwarp.mpa.CrcPolicy}, {@link org.jiwarp.mpa.MarkerPolicy}), limits and
 *       timeouts live in {@link org.jiwarp.mpa.MpaSettings}.</li>
 *   <li><b>Full operation</b>: once set up, the handler installs the connection's
 *       {@link org.jiwarp.mpa.FpduCodec} behind itself, {@link org.jiwarp.mpa.FpduDeframer} and
 *       {@link org.jiwarp.mpa.FpduFramer} (RFC 5044 sections 4.1-4.4, 6), which also hold a
 *       responder's FPDUs until the initiator's first has arrived (section 7.1.2) and run the RTR
 *       exchange in peer-to-peer mode (RFC 6581 section 3); it removes itself and fires an
 *       {@link org.jiwarp.mpa.MpaEstablishedEvent} with the codec and the negotiated
 *       {@link org.jiwarp.mpa.MpaParameters} (MULPDU included, section 5.2). From then on each
 *       {@code ByteBuf} written is one ULPDU. Inbound, the layer above gives the deframer its
 *       {@link org.jiwarp.mpa.UlpduSink} ({@link org.jiwarp.mpa.FpduDeframer#deliverTo}) and gets
 *       every ULPDU in one pass over the TCP reads: header first, then the payload straight from the
 *       reads, or read by the socket straight into the memory the sink names
 *       ({@link org.jiwarp.mpa.FpduReads}, Direct Data Placement's one copy); with CRC, only once
 *       the FPDU's CRC is verified (section 8). Without a sink, each ULPDU goes up the pipeline as a
 *       {@code ByteBuf} the receiver must release.</li>
 *   <li><b>Errors</b> surface as {@link org.jiwarp.mpa.MpaException} carrying the LLP Terminate
 *       error of RFC 5044 section 8 and RFC 6581 section 3: during setup the connection is closed;
 *       in full operation the ULP sends its Terminate and closes (section 8); a peer's
 *       rejection is an {@link org.jiwarp.mpa.MpaRejectedException}.</li>
 * </ul>
 *
 * <p>The wire formats are shared with the pcap decoder in {@code org.jiwarp.wire.mpa}.
 */
package org.jiwarp.mpa;
