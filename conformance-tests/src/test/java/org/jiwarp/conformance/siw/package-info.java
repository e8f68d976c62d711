/**
 * The Linux soft-iWARP (siw) peer for interoperability tests: Debian 12's kernel with an
 * out-of-tree {@code siw.ko} and rdma-core's tools, booted under QEMU from an image that
 * {@code conformance-tests/siw-peer/build-peer.sh} builds and caches outside the repository.
 *
 * <p>{@link org.jiwarp.conformance.siw.SiwPeerImage} finds or builds the image;
 * {@link org.jiwarp.conformance.siw.SiwPeer} boots it once and runs commands in it (rping, perftest's
 * {@code ib_*} programs, {@code rdma}), forwards host ports to guest ports, and records the guest's
 * traffic to a pcap. Tests that need it are tagged {@code siw}; they skip where
 * {@link org.jiwarp.conformance.siw.SiwPeerImage#whyUnavailable()} says the peer cannot exist, and
 * {@code JIWARP_SIW=skip} switches them off; under CI ({@code CI=true}) either fails them instead
 * ({@link org.jiwarp.testing.Prerequisites}).
 *
 * <p>What siw does on the wire (Rev 2 + Enhanced with IRD/ORD of at least 1, no markers, its
 * Terminate bit order, its accept race) is in the project's iWARP notes, "siw behaviour".
 *
 * <p>The interop suite: {@link org.jiwarp.conformance.siw.SiwRpingInteropTest} ({@code jiwarp ping}
 * against rping, both roles, every MPA revision x CRC x size cell) and
 * {@link org.jiwarp.conformance.siw.SiwErrorInteropTest} (Terminates and CRC errors both ways);
 * {@link org.jiwarp.conformance.siw.SiwSampleCapturesTest} holds the committed siw captures.
 * NFS over RDMA (RFC 8166, RFC 8267): {@link org.jiwarp.conformance.siw.SiwNfsInteropTest}
 * ({@code jiwarp nfs} against the kernel NFS server) and
 * {@link org.jiwarp.conformance.siw.SiwNfsTwoGuestsTest} (two guests on a private link, the kernel
 * client of one against the server of the other, beside {@code jiwarp nfs}), and
 * {@link org.jiwarp.conformance.siw.SiwNfsServeTest} (the kernel client against
 * {@code jiwarp nfs serve} on the host, over RDMA and over TCP).
 * {@link org.jiwarp.conformance.siw.SiwChannelStressTest} holds the command channel to its word: 2 000
 * commands to one guest beside a CPU hog, none lost or late.
 * {@code siw-peer/README.md} has the matrix they cover.
 */
package org.jiwarp.conformance.siw;
