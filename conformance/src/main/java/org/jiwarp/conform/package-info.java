/**
 * The conformance suite behind {@code jiwarp conform}: black-box cases for any iWARP
 * implementation, applied through rdma-core's rping protocol, which every Linux iWARP device speaks
 * with stock tools. A raw peer ({@link org.jiwarp.conform.peer.RawConnection}) plays rping's other end and abuses it case by case:
 * MPA setup (RFC 5044 section 7.1, RFC 6581 sections 6 and 9), MPA framing and CRCs (RFC 5044
 * sections 4, 6 and 8), DDP tagged and untagged buffers (RFC 5041 sections 4, 5 and 7), RDMAP
 * messages, Read Requests and Read Responses (RFC 5040 sections 4, 5 and 7), and FPDUs cut into TCP
 * segments at every offset. Each case names the section and what it requires, records what the
 * target did (its Terminate decoded by RFC names, the close, any data it placed or returned) and
 * gives a verdict: PASS, FAIL or KNOWN (a documented deviation of that implementation).
 *
 * <p>With {@code --app ib_write_bw|ib_read_bw} it plays perftest's {@code -R} exchange instead
 * ({@link org.jiwarp.conform.PerftestExchange}), whose key handshake names the region perftest
 * registered, and the perftest group tests that region: base and bounds (RFC 5041 section 8.3.1,
 * RFC 5040 section 7.2), Tagged Offset wrap, access rights (RFC 5040 section 7.2, Remote Protection
 * Error 0x02) and whole-region Writes and Reads (RFC 5041 section 5.2, RFC 5040 sections 5.2.1 and
 * 5.2.2). Markers are negotiated (RFC 5044 sections 4.3 and 7.1.1) by the MPA group's marker cases.
 *
 * <p>Three groups test what breaks real stacks rather than one field ({@code HostileInputCases},
 * {@code ExhaustionCases}): one bit flipped under CRC, inputs that crashed real
 * stacks (invalid first FPDUs, Terminates whose headers lie about their length, broken MPA setups in
 * sequence), and peers that hold the target's resources (Read Responses never read, a bad frame sent
 * while not reading, idle connections, an MPA Request one octet a second), judged where the RFCs set
 * no bound by the resource rule every trusted stack keeps.
 */
package org.jiwarp.conform;
