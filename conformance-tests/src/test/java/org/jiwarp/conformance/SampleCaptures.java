package org.jiwarp.conformance;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.AtomicResponseHeader;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * Writes the captures committed under {@code pcap-samples/}: jiwarp's own encoders framing every
 * opcode, CRC on and off, markers on and off, a Terminate of each layer, an enhanced (RFC 6581)
 * setup, a rejected setup, a corrupted CRC, and a TCP stream that is not iWARP.
 *
 * <p>Deterministic (fixed ISNs, addresses and clock), so {@link SampleCapturesTest} can hold the
 * committed files to exactly these bytes. Regenerate with
 * {@code mvn -pl conformance-tests -am test -Dtest=SampleCapturesTest -Djiwarp.regenerateSamples=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
final class SampleCaptures {

    /** 2026-01-01T00:00:00Z: every sample starts its clock here. */
    private static final long EPOCH_NANOS = 1_767_225_600_000_000_000L;

    private SampleCaptures() {
    }

    /** Writes every sample into {@code directory}; returns the file names written, with descriptions. */
    static Map<String, String> writeAll(Path directory) throws IOException {
        Map<String, String> written = new LinkedHashMap<>();
        write(directory, "jiwarp-opcodes.pcap", written, "every RDMAP opcode (RFC 5040, RFC 7306), no CRC, no markers",
                SampleCaptures::allOpcodes);
        write(directory, "jiwarp-crc.pcap", written, "CRC-32C negotiated; two FPDUs in one TCP segment; "
                + "a Write split over segments", SampleCaptures::crc);
        write(directory, "jiwarp-markers-crc.pcap", written, "markers both ways and CRC; FPDUs longer than 512 "
                + "octets so markers fall inside FPDUs", out -> markers(out, true));
        write(directory, "jiwarp-markers.pcap", written, "markers both ways, no CRC", out -> markers(out, false));
        write(directory, "jiwarp-terminates.pcap", written, "a Terminate of each layer (RDMAP, DDP, LLP), with "
                + "HdrCt M/D/R and carried headers, one connection each", SampleCaptures::terminates);
        write(directory, "jiwarp-enhanced.pcap", written, "RFC 6581 enhanced setup: Rev 2, IRD/ORD, P2P, "
                + "a zero-length Write as ready-to-receive", SampleCaptures::enhanced);
        write(directory, "jiwarp-reject.pcap", written, "the responder rejects the connection (R bit)",
                SampleCaptures::reject);
        write(directory, "jiwarp-bad-crc.pcap", written, "CRC negotiated; the second FPDU has a corrupted CRC",
                SampleCaptures::badCrc);
        write(directory, "jiwarp-ipv6.pcap", written, "Send and Read over IPv6 with CRC", SampleCaptures::ipv6);
        write(directory, "not-iwarp.pcap", written, "a TCP conversation without an MPA handshake",
                SampleCaptures::notIwarp);
        return written;
    }

    private interface Body {
        void write(PcapWriter out) throws IOException;
    }

    private static void write(Path directory, String name, Map<String, String> written, String description,
            Body body) throws IOException {
        try (OutputStream file = Files.newOutputStream(directory.resolve(name));
                PcapWriter out = new PcapWriter(file, LinkType.ETHERNET, false)) {
            body.write(out);
        }
        written.put(name, description);
    }

    // ---------------------------------------------------------------------------------------------

    private static void allOpcodes(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "10.0.0.1", 40001, "10.0.0.2", 4791, 0x1000_0000L, 0x2000_0000L)) {
            c.setup(0, 0, MpaFrames.REVISION_1, ascii("jiwarp-initiator"), ascii("jiwarp-responder"));
            c.client(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("hello from the initiator")));
            c.server(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("hello back")));
            c.client(write(false, 0x00012301, 0x7f00_1000_0000L, pattern(64, 1)));
            c.client(write(true, 0x00012301, 0x7f00_1000_0040L, pattern(40, 2)));
            c.client(readRequest(1, 0x00045601, 0x5500_0000_2000L, 96, 0x00abcd02, 0x7f00_1000_0000L));
            c.server(readResponse(true, 0x00045601, 0x5500_0000_2000L, pattern(96, 3)));
            c.client(send(RdmapOpcode.SEND_WITH_INVALIDATE, true, 0x00012301, 2, 0, ascii("invalidate 0x12301")));
            c.client(send(RdmapOpcode.SEND_WITH_SE, true, 0, 3, 0, ascii("solicited")));
            c.client(send(RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE, true, 0x00045601, 4, 0, ascii("se+inv")));
            c.client(send(RdmapOpcode.SEND, false, 0, 5, 0, pattern(30, 4)));
            c.client(send(RdmapOpcode.SEND, true, 0, 5, 30, pattern(10, 5)));
            c.server(send(RdmapOpcode.IMMEDIATE_DATA, true, 0, 2, 0, pattern(8, 6)));
            c.server(send(RdmapOpcode.IMMEDIATE_DATA_WITH_SE, true, 0, 3, 0, pattern(8, 7)));
            // RFC 7306 section 5.4: Atomic Requests share queue 1's MSNs with the Read Request above.
            c.client(atomicRequest(2, 0, 7, 0x00012301, 0x7f00_1000_0008L, 5, 0, 0, 0));
            c.server(atomicResponse(1, 7, 42));
            // A masked swap: CmpSwap with Compare Mask 0 (RFC 7306 reserves subcode 1).
            c.client(atomicRequest(3, 2, 8, 0x00012301, 0x7f00_1000_0010L, 0xABCDL, 0xFFFFL, 0, 0));
            c.server(atomicResponse(2, 8, 47));
            c.client(atomicRequest(4, 2, 9, 0x00012301, 0x7f00_1000_0018L, 99, -1L, 41, 0xFFL));
            c.server(atomicResponse(3, 9, 41));
            c.client(send(RdmapOpcode.SEND, true, 0, 6, 0, new byte[0]));
        }
    }

    private static void crc(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "10.0.0.1", 40002, "10.0.0.2", 4791, 0x3000_0000L, 0xFFFF_FF00L)) {
            c.setup(MpaFrames.CRC_FLAG, MpaFrames.CRC_FLAG, MpaFrames.REVISION_1, ascii("crc please"), null);
            c.client(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("with CRC-32C, little-endian")));
            c.server(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("pad?")));
            c.clientTogether(send(RdmapOpcode.SEND, true, 0, 2, 0, ascii("two FPDUs")),
                    send(RdmapOpcode.SEND_WITH_SE, true, 0, 3, 0, ascii("in one segment")));
            c.clientSplit(write(true, 0x0000_0100, 0x1000L, pattern(1400, 8)), 700);
            c.server(readRequest(1, 0x0000_0200, 0x2000L, 3000, 0x0000_0100, 0x1000L));
        }
    }

    private static void markers(PcapWriter out, boolean crc) throws IOException {
        int flags = MpaFrames.MARKER_FLAG | (crc ? MpaFrames.CRC_FLAG : 0);
        try (Connection c = new Connection(out, "10.0.0.1", crc ? 40003 : 40004, "10.0.0.2", 4791, 0x4000_0000L,
                0x5000_0000L)) {
            c.setup(flags, flags, MpaFrames.REVISION_1, ascii("markers"), ascii("markers too"));
            c.client(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("first FPDU: a marker leads it")));
            c.server(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("reply")));
            c.client(write(true, 0x0000_0300, 0x10_0000L, pattern(1200, 9)));
            c.server(write(true, 0x0000_0400, 0x20_0000L, pattern(700, 10)));
            c.client(send(RdmapOpcode.SEND, true, 0, 2, 0, pattern(33, 11)));
            c.client(write(true, 0x0000_0300, 0x10_0800L, pattern(2000, 12)));
            c.server(send(RdmapOpcode.SEND, true, 0, 2, 0, pattern(1, 13)));
        }
    }

    private static void terminates(PcapWriter out) throws IOException {
        // RDMAP layer: a Write to an invalid STag; the Terminate carries the offending tagged header.
        try (Connection c = new Connection(out, "10.0.0.1", 40005, "10.0.0.2", 4791, 0x100L, 0x200L)) {
            c.setup(0, 0, MpaFrames.REVISION_1, null, null);
            ByteBuf bad = write(true, 0x00DE_AD01, 0x1000L, pattern(32, 14));
            ByteBuf header = bad.retainedSlice(0, DdpHeaders.TAGGED_HEADER_LENGTH);
            c.client(bad);
            c.server(terminate(1, TerminateError.RDMAP_INVALID_STAG, 46, header, null));
        }
        // RDMAP layer, remote operation: a Read Request with an unexpected opcode version; carries R.
        try (Connection c = new Connection(out, "10.0.0.1", 40006, "10.0.0.2", 4791, 0x300L, 0x400L)) {
            c.setup(MpaFrames.CRC_FLAG, 0, MpaFrames.REVISION_1, null, null);
            ByteBuf request = readRequest(1, 0x0000_0500, 0, 64, 0x0000_0600, 0);
            ByteBuf ddp = request.retainedSlice(0, DdpHeaders.UNTAGGED_HEADER_LENGTH);
            ByteBuf rdma = request.retainedSlice(DdpHeaders.UNTAGGED_HEADER_LENGTH, ReadRequestHeader.LENGTH);
            c.client(request);
            c.server(terminate(1, TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM, 46, ddp, rdma));
        }
        // DDP layer: a Send with no receive posted (RFC 5041: untagged, invalid MSN - no buffer).
        try (Connection c = new Connection(out, "10.0.0.1", 40007, "10.0.0.2", 4791, 0x500L, 0x600L)) {
            c.setup(0, 0, MpaFrames.REVISION_1, null, null);
            ByteBuf send = send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("nobody is listening"));
            ByteBuf header = send.retainedSlice(0, DdpHeaders.UNTAGGED_HEADER_LENGTH);
            c.client(send);
            c.server(terminate(1, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, 37, header, null));
        }
        // DDP layer, tagged: base or bounds violation.
        try (Connection c = new Connection(out, "10.0.0.1", 40008, "10.0.0.2", 4791, 0x700L, 0x800L)) {
            c.setup(0, 0, MpaFrames.REVISION_1, null, null);
            ByteBuf bad = write(true, 0x0000_0701, 0xFFFF_FFFF_FFFF_FFF0L, pattern(64, 15));
            ByteBuf header = bad.retainedSlice(0, DdpHeaders.TAGGED_HEADER_LENGTH);
            c.client(bad);
            c.server(terminate(1, TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, 78, header, null));
        }
        // LLP layer: CRC error; nothing of the damaged FPDU is trusted, so no headers are carried.
        try (Connection c = new Connection(out, "10.0.0.1", 40009, "10.0.0.2", 4791, 0x900L, 0xA00L)) {
            c.setup(MpaFrames.CRC_FLAG, MpaFrames.CRC_FLAG, MpaFrames.REVISION_1, null, null);
            c.clientCorrupted(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("damaged in flight")));
            c.server(terminate(1, TerminateError.LLP_CRC_ERROR, -1, null, null));
        }
    }

    private static void enhanced(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "10.0.0.1", 40010, "10.0.0.2", 4791, 0xA000L, 0xB000L)) {
            ByteBuf request = Unpooled.buffer();
            MpaEnhanced.write(request, 16, 16, true, false, true, true);
            request.writeBytes(ascii("ulp data"));
            ByteBuf reply = Unpooled.buffer();
            MpaEnhanced.write(reply, 16, 8, true, false, true, false);
            c.setup(MpaFrames.ENHANCED_FLAG, MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, request, reply);
            // RFC 6581 section 3: the initiator's ready-to-receive frame, a zero-length RDMA Write.
            c.client(write(true, 0, 0, new byte[0]));
            c.server(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("after RTR")));
        }
    }

    private static void reject(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "10.0.0.1", 40011, "10.0.0.2", 4791, 0xC000L, 0xD000L)) {
            c.setup(MpaFrames.MARKER_FLAG, MpaFrames.REJECT_FLAG, MpaFrames.REVISION_1, ascii("let me in"),
                    ascii("no markers here"));
        }
    }

    private static void badCrc(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "10.0.0.1", 40012, "10.0.0.2", 4791, 0xE000L, 0xF000L)) {
            c.setup(MpaFrames.CRC_FLAG, 0, MpaFrames.REVISION_1, null, null);
            c.client(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("good")));
            c.clientCorrupted(send(RdmapOpcode.SEND, true, 0, 2, 0, ascii("this one is damaged")));
        }
    }

    private static void ipv6(PcapWriter out) throws IOException {
        try (Connection c = new Connection(out, "fd00::1", 40013, "fd00::2", 4791, 0x1_0000L, 0x2_0000L)) {
            c.setup(MpaFrames.CRC_FLAG, MpaFrames.CRC_FLAG, MpaFrames.REVISION_1, ascii("v6"), ascii("v6"));
            c.client(send(RdmapOpcode.SEND, true, 0, 1, 0, ascii("over IPv6")));
            c.client(readRequest(1, 0x0000_0900, 0x9000L, 128, 0x0000_0A00, 0xA000L));
            c.server(readResponse(true, 0x0000_0900, 0x9000L, pattern(128, 16)));
        }
    }

    private static void notIwarp(PcapWriter out) throws IOException {
        try (SyntheticTcpCapture tcp = new SyntheticTcpCapture(out, address("10.0.0.1", 40014),
                address("10.0.0.2", 80), 0x1234L, 0x5678L)) {
            tcp.timestampNanos(EPOCH_NANOS);
            tcp.handshake();
            tcp.clientSends(ascii("GET / HTTP/1.1\r\nHost: example\r\n\r\n"));
            tcp.serverSends(ascii("HTTP/1.1 204 No Content\r\n\r\n"));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // ULPDU builders over the shared header encoders.

    static ByteBuf send(RdmapOpcode opcode, boolean last, int invalidateStag, long msn, long mo, byte[] payload) {
        ByteBuf ulpdu = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + payload.length);
        DdpHeaders.writeUntagged(ulpdu, last, RdmapHeaders.controlByte(opcode), invalidateStag, opcode.queueNumber(),
                msn, mo);
        return ulpdu.writeBytes(payload);
    }

    static ByteBuf write(boolean last, int stag, long taggedOffset, byte[] payload) {
        return tagged(RdmapOpcode.RDMA_WRITE, last, stag, taggedOffset, payload);
    }

    static ByteBuf readResponse(boolean last, int stag, long taggedOffset, byte[] payload) {
        return tagged(RdmapOpcode.RDMA_READ_RESPONSE, last, stag, taggedOffset, payload);
    }

    private static ByteBuf tagged(RdmapOpcode opcode, boolean last, int stag, long taggedOffset, byte[] payload) {
        ByteBuf ulpdu = Unpooled.buffer(DdpHeaders.TAGGED_HEADER_LENGTH + payload.length);
        DdpHeaders.writeTagged(ulpdu, last, RdmapHeaders.controlByte(opcode), stag, taggedOffset);
        return ulpdu.writeBytes(payload);
    }

    static ByteBuf readRequest(long msn, int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo) {
        ByteBuf ulpdu = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, msn, 0);
        ReadRequestHeader.write(ulpdu, sinkStag, sinkTo, size, sourceStag, sourceTo);
        return ulpdu;
    }

    /** A Terminate on queue 2; {@code ddpHeader} and {@code rdmaHeader} are released here. */
    static ByteBuf terminate(long msn, TerminateError error, int segmentLength, ByteBuf ddpHeader,
            ByteBuf rdmaHeader) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, msn, 0);
        try {
            TerminateHeader.write(ulpdu, error, segmentLength, ddpHeader, rdmaHeader);
        } finally {
            if (ddpHeader != null) {
                ddpHeader.release();
            }
            if (rdmaHeader != null) {
                rdmaHeader.release();
            }
        }
        return ulpdu;
    }

    /** RFC 7306 section 5.2.1: Atomic Request (0 FetchAdd, 1 Swap, 2 CmpSwap). */
    static ByteBuf atomicRequest(long msn, int atomicOpcode, int requestId, int stag, long taggedOffset, long data,
            long dataMask, long compare, long compareMask) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.ATOMIC_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, msn, 0);
        AtomicRequestHeader.write(ulpdu, atomicOpcode, requestId, stag, taggedOffset, data, dataMask, compare,
                compareMask);
        return ulpdu;
    }

    /** RFC 7306 section 5.2.2: Atomic Response. */
    static ByteBuf atomicResponse(long msn, int requestId, long original) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.ATOMIC_RESPONSE), 0,
                DdpHeaders.QN_ATOMIC_RESPONSE, msn, 0);
        AtomicResponseHeader.write(ulpdu, requestId, original);
        return ulpdu;
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] pattern(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 31 + i * 7);
        }
        return bytes;
    }

    private static InetSocketAddress address(String host, int port) throws IOException {
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    /** One iWARP connection in a capture: TCP handshake, MPA setup, then FPDUs, one per segment. */
    private static final class Connection implements AutoCloseable {
        private final SyntheticTcpCapture tcp;
        private FpduWriter toServer;
        private FpduWriter toClient;

        Connection(PcapWriter out, String client, int clientPort, String server, int serverPort, long clientIsn,
                long serverIsn) throws IOException {
            tcp = new SyntheticTcpCapture(out, address(client, clientPort), address(server, serverPort), clientIsn,
                    serverIsn);
            tcp.timestampNanos(EPOCH_NANOS);
            tcp.handshake();
        }

        void setup(int requestFlags, int replyFlags, int revision, Object requestData, Object replyData)
                throws IOException {
            tcp.clientSends(frame(false, requestFlags, revision, requestData));
            tcp.serverSends(frame(true, replyFlags, revision, replyData));
            // RFC 5044 section 7.1: CRC both ways if either asks; M asks the peer for markers.
            boolean crc = ((requestFlags | replyFlags) & MpaFrames.CRC_FLAG) != 0;
            toServer = new FpduWriter(crc, (replyFlags & MpaFrames.MARKER_FLAG) != 0);
            toClient = new FpduWriter(crc, (requestFlags & MpaFrames.MARKER_FLAG) != 0);
        }

        private static byte[] frame(boolean reply, int flags, int revision, Object privateData) {
            ByteBuf data = privateData == null ? null
                    : privateData instanceof ByteBuf ? (ByteBuf) privateData : Unpooled.wrappedBuffer((byte[]) privateData);
            ByteBuf frame = Unpooled.buffer();
            try {
                MpaFrames.write(frame, reply, flags, revision, data);
                return ByteBufUtil.getBytes(frame);
            } finally {
                frame.release();
                if (data != null) {
                    data.release();
                }
            }
        }

        void client(ByteBuf ulpdu) throws IOException {
            tcp.clientSends(fpdus(toServer, ulpdu));
        }

        void server(ByteBuf ulpdu) throws IOException {
            tcp.serverSends(fpdus(toClient, ulpdu));
        }

        void clientTogether(ByteBuf... ulpdus) throws IOException {
            tcp.clientSends(fpdus(toServer, ulpdus));
        }

        /** One FPDU sent in two TCP segments, cut {@code at} octets in. */
        void clientSplit(ByteBuf ulpdu, int at) throws IOException {
            byte[] bytes = fpdus(toServer, ulpdu);
            tcp.clientSends(java.util.Arrays.copyOfRange(bytes, 0, at));
            tcp.clientSends(java.util.Arrays.copyOfRange(bytes, at, bytes.length));
        }

        /** One FPDU whose CRC field is damaged after framing. */
        void clientCorrupted(ByteBuf ulpdu) throws IOException {
            byte[] bytes = fpdus(toServer, ulpdu);
            bytes[bytes.length - 2] ^= 0x5A;
            tcp.clientSends(bytes);
        }

        private static byte[] fpdus(FpduWriter writer, ByteBuf... ulpdus) {
            ByteBuf out = Unpooled.buffer();
            try {
                for (ByteBuf ulpdu : ulpdus) {
                    try {
                        writer.write(ulpdu, out);
                    } finally {
                        ulpdu.release();
                    }
                }
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
            }
        }

        @Override
        public void close() throws IOException {
            tcp.close();
        }
    }
}
