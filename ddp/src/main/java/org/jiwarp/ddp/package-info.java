/**
 * DDP (RFC 5041): the layer RDMAP drives, plain Java without Netty handlers.
 *
 * <ul>
 *   <li><b>Segmentation</b>: {@link org.jiwarp.ddp.DdpSegmenter} cuts tagged and untagged messages
 *       into ULPDUs of at most MULPDU octets, each a composite of a header and a retained slice of
 *       the message, never a copy (sections 4.2, 4.3, 5.2).</li>
 *   <li><b>Tagged buffers</b>: {@link org.jiwarp.ddp.StagTable} holds the registered regions
 *       ({@link org.jiwarp.ddp.TaggedBuffer}) under 24-bit index / 8-bit key STags with O(1)
 *       lock-free lookup (section 3.2). {@link org.jiwarp.ddp.TaggedPlacement} checks an inbound
 *       segment's STag (valid, associated with the stream) and range (TO wrap, base and bounds;
 *       section 7.1, error codes of section 7.2) and places it with the one copy into registered
 *       memory; RDMAP checks access between the two steps.</li>
 *   <li><b>Untagged buffers</b>: {@link org.jiwarp.ddp.UntaggedQueue} places Sends into posted
 *       {@link org.jiwarp.ddp.ReceiveBuffer} scatter lists by MSN and MO and completes them on L
 *       (sections 3.3, 4.3, 5.3, 7.1), or into one taken from {@link org.jiwarp.ddp.SharedReceives}
 *       when a message starts on it empty (the verbs' shared receive queue); {@link org.jiwarp.ddp.MsnCounter} tracks the MSN of queues 1
 *       and 2, which have no posted buffers, and {@link org.jiwarp.ddp.SingleSegmentQueue} checks
 *       queue 1's one-segment messages against its buffers (the IRD).
 *       {@link org.jiwarp.ddp.DdpHeaderChecks} checks the DDP header, its version and the queue
 *       number.</li>
 *   <li><b>Errors</b>: every failed check throws a {@code org.jiwarp.wire.rdmap.TerminateException}
 *       carrying a DDP-layer Terminate error (layer 1, error type, code); this package reports no
 *       other layer's errors.</li>
 * </ul>
 *
 * <p>Header accessors live in {@code org.jiwarp.wire.ddp.DdpHeaders} (wire-codecs) and serve this
 * package, the capture decoder and the tests alike.
 */
package org.jiwarp.ddp;
