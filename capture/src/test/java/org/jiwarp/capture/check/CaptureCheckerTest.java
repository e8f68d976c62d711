package org.jiwarp.capture.check;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.junit.jupiter.api.Test;

/**
 * The passive checker on synthetic captures: a clean connection has no finding, and each rule has
 * a capture that breaks it and nothing else, so its finding must name exactly that rule.
 */
class CaptureCheckerTest {

    private static final int ENHANCED = MpaFrames.ENHANCED_FLAG;

    /** One connection, written as it goes: MPA setup, then FPDUs either way. */
    static final class Connection {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PcapWriter writer;
        final SyntheticTcpCapture tcp;
        final FpduWriter toServer;
        final FpduWriter toClient;

        Connection(byte[] request, byte[] reply) throws IOException {
            this(request, reply, 0, 0);
        }

        /** With MSS options in the SYNs (0: none). */
        Connection(byte[] request, byte[] reply, int clientMss, int serverMss) throws IOException {
            writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
            tcp = new SyntheticTcpCapture(writer, new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                    new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 6000), 77, 1000);
            tcp.announceMss(clientMss, serverMss);
            tcp.handshake();
            if (request == null) {
                // A capture that begins after the MPA exchange: FPDUs with CRCs, found by their CRC.
                toServer = new FpduWriter(true, false);
                toClient = new FpduWriter(true, false);
                return;
            }
            tcp.clientSends(request);
            tcp.serverSends(reply);
            boolean crc = ((request[16] | reply[16]) & MpaFrames.CRC_FLAG) != 0;
            toServer = new FpduWriter(crc, (reply[16] & MpaFrames.MARKER_FLAG) != 0);
            toClient = new FpduWriter(crc, (request[16] & MpaFrames.MARKER_FLAG) != 0);
        }

        Connection() throws IOException {
            this(mpa(false, 0, 1, new byte[0]), mpa(true, 0, 1, new byte[0]));
        }

        Connection client(byte[] ulpdu) throws IOException {
            return client(ulpdu, fpdu -> { });
        }

        Connection client(byte[] ulpdu, Consumer<byte[]> damage) throws IOException {
            byte[] fpdu = fpdu(toServer, ulpdu);
            damage.accept(fpdu);
            tcp.clientSends(fpdu);
            return this;
        }

        Connection server(byte[] ulpdu) throws IOException {
            tcp.serverSends(fpdu(toClient, ulpdu));
            return this;
        }

        /** The clean exchange every test starts from: Sends, a Read and its Response, a two-segment Write. */
        Connection cleanExchange() throws IOException {
            client(send(1, "hello"));
            client(readRequest(1, 0x100, 0x1000, 8));
            server(tagged(2, true, 0x100, 0x1000, "12345678"));
            server(send(1, "world"));
            client(tagged(0, false, 0x200, 0, "abcd"));
            client(tagged(0, true, 0x200, 4, "efgh"));
            return this;
        }

        List<Finding> check() throws IOException {
            tcp.close();
            writer.close();
            return CaptureChecker.check(IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray())));
        }

        private static byte[] fpdu(FpduWriter writer, byte[] ulpdu) {
            ByteBuf out = Unpooled.buffer();
            ByteBuf in = Unpooled.wrappedBuffer(ulpdu);
            try {
                writer.write(in, out);
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
                in.release();
            }
        }
    }

    // ---- PDUs, written byte by byte so that any field can be wrong ---------------------------

    static byte[] mpa(boolean reply, int flags, int revision, byte[] privateData) {
        ByteBuffer frame = ByteBuffer.allocate(20 + privateData.length);
        frame.put((reply ? "MPA ID Rep Frame" : "MPA ID Req Frame").getBytes(StandardCharsets.US_ASCII));
        frame.put((byte) flags).put((byte) revision).putShort((short) privateData.length).put(privateData);
        return frame.array();
    }

    static byte[] enhancedWords(int ird, int ord, int irdFlags, int ordFlags) {
        return ByteBuffer.allocate(4).putShort((short) (ird | irdFlags)).putShort((short) (ord | ordFlags)).array();
    }

    static byte[] untagged(int ddpControl, int rdmapControl, int invalidateStag, long qn, long msn, long mo,
            byte[] payload) {
        ByteBuffer u = ByteBuffer.allocate(18 + payload.length);
        u.put((byte) ddpControl).put((byte) rdmapControl).putInt(invalidateStag).putInt((int) qn).putInt((int) msn)
                .putInt((int) mo).put(payload);
        return u.array();
    }

    static byte[] send(long msn, String payload) {
        return untagged(0x41, 0x43, 0, 0, msn, 0, payload.getBytes(StandardCharsets.US_ASCII));
    }

    static byte[] readRequest(long msn, int sinkStag, long sinkTo, int size) {
        byte[] body = ByteBuffer.allocate(28).putInt(sinkStag).putLong(sinkTo).putInt(size).putInt(0x900)
                .putLong(0x9000).array();
        return untagged(0x41, 0x41, 0, 1, msn, 0, body);
    }

    static byte[] tagged(int opcode, boolean last, int stag, long to, String payload) {
        byte[] data = payload.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(14 + data.length).put((byte) (last ? 0xC1 : 0x81)).put((byte) (0x40 | opcode))
                .putInt(stag).putLong(to).put(data).array();
    }

    static byte[] terminate(long msn, int byte0, int code, int hdrct, byte[] carried) {
        byte[] body = ByteBuffer.allocate(4 + carried.length).put((byte) byte0).put((byte) code).put((byte) hdrct)
                .put((byte) 0).put(carried).array();
        return untagged(0x41, 0x47, 0, 2, msn, 0, body);
    }

    private static Set<Rule> rules(List<Finding> findings) {
        return findings.stream().map(Finding::rule).collect(Collectors.toCollection(() -> EnumSet.noneOf(Rule.class)));
    }

    /** The capture's findings name exactly {@code rule}; returns its finding. */
    private static Finding only(Rule rule, Connection connection) throws IOException {
        List<Finding> findings = connection.check();
        assertEquals(EnumSet.of(rule), rules(findings), findings.toString());
        Finding finding = findings.get(0);
        assertTrue(finding.toString().contains("[" + rule.id() + "] " + rule.section() + ": "), finding.toString());
        assertTrue(finding.frames().size() >= 1 && finding.frames().get(0) > 0, finding.toString());
        return finding;
    }

    @Test
    void aCleanConnectionHasNoFinding() throws IOException {
        assertEquals(List.of(), new Connection().cleanExchange().check());
        byte[] words = enhancedWords(4, 4, 0, 0);
        assertEquals(List.of(), new Connection(mpa(false, ENHANCED | MpaFrames.CRC_FLAG, 2, words),
                mpa(true, ENHANCED | MpaFrames.CRC_FLAG | MpaFrames.MARKER_FLAG, 2, words)).cleanExchange().check());
    }

    @Test
    void mpaRevision() throws IOException {
        only(Rule.MPA_REVISION, new Connection(mpa(false, 0, 3, new byte[0]), mpa(true, 0, 1, new byte[0]))
                .cleanExchange());
    }

    @Test
    void mpaReserved() throws IOException {
        only(Rule.MPA_RESERVED, new Connection(mpa(false, 0x02, 1, new byte[0]), mpa(true, 0, 1, new byte[0]))
                .cleanExchange());
    }

    @Test
    void mpaPrivateData() throws IOException {
        only(Rule.MPA_PRIVATE_DATA, new Connection(mpa(false, 0, 1, new byte[600]), mpa(true, 0, 1, new byte[0]))
                .cleanExchange());
    }

    @Test
    void mpaEnhanced() throws IOException {
        // The initiator offers a zero-length Write as ready-to-receive; the responder picks a Read.
        Finding finding = only(Rule.MPA_ENHANCED, new Connection(
                mpa(false, ENHANCED, 2, enhancedWords(4, 4, 0, 0x8000)),
                mpa(true, ENHANCED, 2, enhancedWords(4, 4, 0, 0x4000))).cleanExchange());
        assertTrue(finding.sentence().contains("zero-length Read"), finding.sentence());
    }

    @Test
    void mpaCrc() throws IOException {
        Connection c = new Connection(mpa(false, MpaFrames.CRC_FLAG, 1, new byte[0]), mpa(true, 0, 1, new byte[0]))
                .cleanExchange();
        c.client(send(2, "bad"), fpdu -> fpdu[fpdu.length - 1] ^= 0x10);
        assertEquals(List.of(12), only(Rule.MPA_CRC, c).frames()); // 3 handshake, 2 MPA, 6 clean, then this one
    }

    @Test
    void mpaMarkers() throws IOException {
        // Markers toward the server: the one before the first FPDU must say FPDUPTR 0.
        Connection c = new Connection(mpa(false, 0, 1, new byte[0]), mpa(true, MpaFrames.MARKER_FLAG, 1, new byte[0]));
        c.client(send(1, "x".repeat(600)), fpdu -> fpdu[3] = 8);
        only(Rule.MPA_MARKERS, c);
    }

    @Test
    void mpaPad() throws IOException {
        // 2 + 18 + 1 octets: 3 pad octets follow the ULPDU.
        Connection c = new Connection().cleanExchange();
        c.client(send(2, "p"), fpdu -> fpdu[21] = 7);
        only(Rule.MPA_PAD, c);
    }

    @Test
    void ddpVersion() throws IOException {
        only(Rule.DDP_VERSION, new Connection().cleanExchange().client(untagged(0x42, 0x43, 0, 0, 2, 0, new byte[4])));
    }

    @Test
    void ddpReserved() throws IOException {
        only(Rule.DDP_RESERVED, new Connection().cleanExchange().client(untagged(0x45, 0x43, 0, 0, 2, 0, new byte[4])));
    }

    @Test
    void ddpQueue() throws IOException {
        // A Send on the Read Request queue, with that queue's next MSN.
        only(Rule.DDP_QUEUE, new Connection().cleanExchange().client(untagged(0x41, 0x43, 0, 1, 2, 0, new byte[4])));
    }

    @Test
    void ddpMsn() throws IOException {
        Finding finding = only(Rule.DDP_MSN, new Connection().cleanExchange().client(send(5, "skipped")));
        assertTrue(finding.sentence().contains("MSN 5 where MSN 2 was due"), finding.sentence());
    }

    @Test
    void ddpMo() throws IOException {
        only(Rule.DDP_MO, new Connection().cleanExchange()
                .client(untagged(0x01, 0x43, 0, 0, 2, 0, new byte[4]))
                .client(untagged(0x41, 0x43, 0, 0, 2, 10, new byte[4])));
    }

    @Test
    void ddpLast() throws IOException {
        only(Rule.DDP_LAST, new Connection().cleanExchange()
                .client(untagged(0x01, 0x43, 0, 0, 2, 0, new byte[4]))
                .client(untagged(0x41, 0x43, 0, 0, 3, 0, new byte[4])));
    }

    @Test
    void rdmapVersion() throws IOException {
        only(Rule.RDMAP_VERSION, new Connection().cleanExchange().client(untagged(0x41, 0x83, 0, 0, 2, 0, new byte[4])));
    }

    @Test
    void rdmapOpcode() throws IOException {
        only(Rule.RDMAP_OPCODE, new Connection().cleanExchange().client(untagged(0x41, 0x4C, 0, 0, 2, 0, new byte[4])));
    }

    @Test
    void rdmapInvalidateStag() throws IOException {
        only(Rule.RDMAP_INVALIDATE_STAG, new Connection().cleanExchange()
                .client(untagged(0x41, 0x43, 0x1234, 0, 2, 0, new byte[4])));
    }

    @Test
    void rdmapReadResponse() throws IOException {
        // A second Read Response: nothing is outstanding any more.
        only(Rule.RDMAP_READ_RESPONSE, new Connection().cleanExchange().server(tagged(2, true, 0x100, 0x1008, "more")));
        // A Read Response to the wrong STag.
        only(Rule.RDMAP_READ_RESPONSE, new Connection().client(readRequest(1, 0x100, 0x1000, 4))
                .server(tagged(2, true, 0x101, 0x1000, "abcd")));
    }

    @Test
    void rdmapIrd() throws IOException {
        byte[] words = enhancedWords(1, 1, 0, 0);
        only(Rule.RDMAP_IRD, new Connection(mpa(false, ENHANCED, 2, words), mpa(true, ENHANCED, 2, words))
                .client(readRequest(1, 0x100, 0x1000, 4)).client(readRequest(2, 0x100, 0x2000, 4))
                .server(tagged(2, true, 0x100, 0x1000, "abcd")).server(tagged(2, true, 0x100, 0x2000, "efgh")));
    }

    @Test
    void rdmapAfterTerminate() throws IOException {
        only(Rule.RDMAP_AFTER_TERMINATE, new Connection().cleanExchange()
                .client(terminate(1, 0x12, 0x01, 0, new byte[0])).client(send(2, "late")));
    }

    @Test
    void rdmapTerminate() throws IOException {
        // D set in HdrCt, but no DDP segment length or header follows.
        Finding finding = only(Rule.RDMAP_TERMINATE, new Connection().cleanExchange()
                .client(terminate(1, 0x12, 0x01, 0x40, new byte[0])));
        assertNull(finding.quirk());
    }

    @Test
    void siwsLittleEndianTerminateIsNamedAsAQuirk() throws IOException {
        // DDP / untagged buffer / invalid QN (RFC: byte 0 = 0x12) as Linux siw 6.1 writes it.
        Finding finding = only(Rule.RDMAP_TERMINATE, new Connection().cleanExchange()
                .client(terminate(1, 0x21, 0x01, 0, new byte[0])));
        assertNotNull(finding.quirk());
        assertTrue(finding.toString().contains("Known quirk: Linux siw 6.1"), finding.toString());
    }

    /**
     * Linux siw's Terminate for a Read Response longer than rping's buffer (a shared capture of siw
     * against rping): {@code 11 01 03 00}, then a DDP Segment Length and the 14-octet tagged header.
     * In the RFC's layout reserved bits are set and HdrCt says nothing follows; in siw's
     * little-endian bitfields it says M and D, as what follows does.
     */
    @Test
    void siwsTerminateWhoseHeaderControlSitsInItsReservedBitsIsNamed() throws IOException {
        byte[] carried = ByteBuffer.allocate(16).putShort((short) 1454).put(tagged(1, false, 0x100, 0x2000, ""))
                .array();
        Finding finding = only(Rule.RDMAP_TERMINATE, new Connection().cleanExchange()
                .client(terminateControl(1, 0x11, 0x01, 0x03, 0x00, carried)));
        assertNotNull(finding.quirk(), finding.toString());
        assertTrue(finding.toString().contains("a Terminate's control word reads 11 01 03 00: reserved bits set (0x0300) "
                + "and HdrCt M=0 D=0 R=0, which accounts for 4 octets of the Terminate, yet it has 20; read as Linux siw's little-endian "
                + "bitfields it says M=1 D=1 R=0 with nothing reserved, which what follows agrees with."),
                finding.toString());
    }

    /** Reserved bits set in the RFC's layout, the HdrCt right: a finding, and no siw quirk to name. */
    @Test
    void terminateWithReservedBitsSet() throws IOException {
        byte[] carried = ByteBuffer.allocate(20).putShort((short) 22).put(send(7, "")).array();
        Finding finding = only(Rule.RDMAP_TERMINATE, new Connection().cleanExchange()
                .client(terminateControl(1, 0x12, 0x01, 0xC0, 0x01, carried)));
        assertNull(finding.quirk(), finding.toString());
        assertTrue(finding.toString().contains("reads 12 01 c0 01: reserved bits set (0x0001), HdrCt M=1 D=1 R=0, "
                + "which accounts for all 24 octets of the Terminate."), finding.toString());
    }

    /** The RFC's own encoding of the same Terminate: nothing to find. */
    @Test
    void terminateCarryingTheHeaderItsHeaderControlNamesIsClean() throws IOException {
        byte[] carried = ByteBuffer.allocate(16).putShort((short) 1454).put(tagged(1, false, 0x100, 0x2000, ""))
                .array();
        assertEquals(List.of(), new Connection().cleanExchange()
                .client(terminateControl(1, 0x11, 0x01, 0xC0, 0x00, carried)).check());
    }

    static byte[] terminateControl(long msn, int byte0, int code, int byte2, int byte3, byte[] carried) {
        byte[] body = ByteBuffer.allocate(4 + carried.length).put((byte) byte0).put((byte) code).put((byte) byte2)
                .put((byte) byte3).put(carried).array();
        return untagged(0x41, 0x47, 0, 2, msn, 0, body);
    }

    /** rping's {@code struct rping_rdma_info}: buf, rkey, size, big-endian, in a Send. */
    static byte[] rpingInfo(long msn, long buf, int rkey, int size) {
        return untagged(0x41, 0x43, 0, 0, msn, 0, ByteBuffer.allocate(16).putLong(buf).putInt(rkey).putInt(size).array());
    }

    /** perftest's {@code struct pingpong_dest} with the rkey and vaddr, in a Send. */
    static byte[] pingpongDest(long msn, int rkey, long vaddr) {
        return untagged(0x41, 0x43, 0, 0, msn, 0, ByteBuffer.allocate(56).putInt(4, 1).putInt(8, 0x11)
                .putInt(16, rkey).putLong(24, vaddr).array());
    }

    static byte[] sendWithInvalidate(long msn, int stag) {
        return untagged(0x41, 0x44, stag, 0, msn, 0, new byte[4]);
    }

    private static Connection peerToPeer(int ordRtr) throws IOException {
        return new Connection(mpa(false, ENHANCED, 2, enhancedWords(4, 4, 0x8000, 0xC000)),
                mpa(true, ENHANCED, 2, enhancedWords(4, 4, 0, ordRtr)));
    }

    @Test
    void mpaRtr() throws IOException {
        // Peer to peer with a zero-length Write as ready-to-receive: clean when it comes first.
        assertEquals(List.of(), peerToPeer(0x8000).client(tagged(0, true, 1, 0, "")).cleanExchange().check());
        assertEquals(List.of(), peerToPeer(0x4000).client(readRequest(1, 1, 0, 0)).client(send(1, "after"))
                .server(tagged(2, true, 1, 0, "")).check());
        // The initiator opens with a Send instead.
        Finding finding = only(Rule.MPA_RTR, peerToPeer(0x8000).cleanExchange());
        assertTrue(finding.sentence().contains("zero-length Write"), finding.sentence());
        // The responder speaks first.
        finding = only(Rule.MPA_RTR, peerToPeer(0x8000).server(send(1, "early")).client(tagged(0, true, 1, 0, "")));
        assertTrue(finding.sentence().contains("before the initiator's ready-to-receive"), finding.sentence());
    }

    @Test
    void ddpTaggedBoundsAgainstAnAdvertisedBuffer() throws IOException {
        // The server advertises 16 octets at 0x5000 under STag 0x77 as rping does; writes inside are fine.
        assertEquals(List.of(), new Connection().cleanExchange().server(rpingInfo(2, 0x5000, 0x77, 16))
                .client(tagged(0, true, 0x77, 0x5008, "12345678")).check());
        Finding finding = only(Rule.DDP_TAGGED_BOUNDS, new Connection().cleanExchange()
                .server(rpingInfo(2, 0x5000, 0x77, 16)).client(tagged(0, true, 0x77, 0x500C, "12345678")));
        assertTrue(finding.sentence().contains("rping"), finding.sentence());
        // A Read Request for more than the advertised source buffer holds.
        byte[] body = ByteBuffer.allocate(28).putInt(0x100).putLong(0x1000).putInt(32).putInt(0x77).putLong(0x5000)
                .array();
        only(Rule.DDP_TAGGED_BOUNDS, new Connection().cleanExchange().server(rpingInfo(2, 0x5000, 0x77, 16))
                .client(untagged(0x41, 0x41, 0, 1, 2, 0, body)));
    }

    @Test
    void sendWithInvalidateOfAnStagTheReceiverNeverAdvertised() throws IOException {
        // The server advertised STag 0x77 (perftest's exchange); invalidating it is fine, 0x88 is not.
        assertEquals(List.of(), new Connection().cleanExchange().server(pingpongDest(2, 0x77, 0x5000))
                .client(sendWithInvalidate(2, 0x77)).check());
        Finding finding = only(Rule.RDMAP_INVALIDATE_STAG, new Connection().cleanExchange()
                .server(pingpongDest(2, 0x77, 0x5000)).client(sendWithInvalidate(2, 0x88)));
        assertTrue(finding.sentence().contains("0x00000088") && finding.sentence().contains("perftest"),
                finding.sentence());
    }

    @Test
    void mpaMulpdu() throws IOException {
        // The server announces an MSS of 536: the client's ULPDUs are at most 536 - 6 = 530 octets.
        byte[] request = mpa(false, 0, 1, new byte[0]);
        byte[] reply = mpa(true, 0, 1, new byte[0]);
        assertEquals(List.of(), new Connection(request, reply, 1460, 536).cleanExchange()
                .client(send(2, "x".repeat(530 - 18))).check());
        Finding finding = only(Rule.MPA_MULPDU, new Connection(request, reply, 1460, 536).cleanExchange()
                .client(send(2, "x".repeat(531 - 18))));
        assertTrue(finding.sentence().contains("531 octets") && finding.sentence().contains("MULPDU of 530"),
                finding.sentence());
    }

    @Test
    void repeatedFindingsOfOneRuleAreGatheredWithEveryFrame() throws IOException {
        List<Finding> findings = new Connection().cleanExchange().client(send(5, "a")).client(send(9, "b")).check();
        assertEquals(1, findings.size(), findings.toString());
        assertEquals(2, findings.get(0).frames().size());
        assertTrue(findings.get(0).sentence().endsWith("(2 times in all)"), findings.get(0).sentence());
    }

    /** An RDMA_MSG call: a Read chunk of 16 octets at 0x8000 (handle 0x400), a Write chunk of 8 at 0x7000 (0x300). */
    static byte[] rpcOverRdmaCall(long msn) {
        byte[] header = ByteBuffer.allocate(84).putInt(5).putInt(1).putInt(32).putInt(0)
                .putInt(1).putInt(0).putInt(0x400).putInt(16).putLong(0x8000).putInt(0)
                .putInt(1).putInt(1).putInt(0x300).putInt(8).putLong(0x7000).putInt(0)
                .putInt(0).putInt(5).putInt(0).array();
        return untagged(0x41, 0x43, 0, 0, msn, 0, header);
    }

    /** A connection whose MPA Request and Reply carry RFC 8797 private data (magic, version 1, 4 KiB). */
    private static Connection rpcOverRdma() throws IOException {
        byte[] privateData = {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 0, 3, 3};
        return new Connection(mpa(false, 0, 1, privateData), mpa(true, 0, 1, privateData));
    }

    @Test
    void rpcOverRdmaWritesAndReadsStayInTheAdvertisedChunks() throws IOException {
        byte[] read16 = ByteBuffer.allocate(28).putInt(0x100).putLong(0x1000).putInt(16).putInt(0x400).putLong(0x8000)
                .array();
        assertEquals(List.of(), rpcOverRdma().client(rpcOverRdmaCall(1)).server(untagged(0x41, 0x41, 0, 1, 1, 0,
                read16)).server(tagged(0, true, 0x300, 0x7000, "12345678")).check());
        Finding unknown = only(Rule.RPCRDMA_CHUNK, rpcOverRdma().client(rpcOverRdmaCall(1))
                .server(tagged(0, true, 0x301, 0x7000, "12345678")));
        assertTrue(unknown.sentence().contains("handle 0x00000301"), unknown.sentence());
        Finding outside = only(Rule.RPCRDMA_CHUNK, rpcOverRdma().client(rpcOverRdmaCall(1))
                .server(tagged(0, true, 0x300, 0x7004, "12345678")));
        assertTrue(outside.sentence().contains("RPC-over-RDMA chunk"), outside.sentence());
        byte[] read32 = ByteBuffer.allocate(28).putInt(0x100).putLong(0x1000).putInt(32).putInt(0x400).putLong(0x8000)
                .array();
        only(Rule.RPCRDMA_CHUNK, rpcOverRdma().client(rpcOverRdmaCall(1)).server(untagged(0x41, 0x41, 0, 1, 1, 0,
                read32)));
        // Without RFC 8797 private data in the MPA exchange the connection is not taken for RPC-over-RDMA.
        assertEquals(List.of(), new Connection().client(rpcOverRdmaCall(1))
                .server(tagged(0, true, 0x301, 0x7000, "12345678")).check());
    }

    /** An RDMA_MSG call with {@code xid} and a Write chunk of 8 octets under {@code handle}. */
    static byte[] rpcCall(long msn, int xid, int handle) {
        byte[] header = ByteBuffer.allocate(56).putInt(xid).putInt(1).putInt(32).putInt(0).putInt(0)
                .putInt(1).putInt(1).putInt(handle).putInt(8).putLong(0x7000).putInt(0)
                .putInt(0).putInt(xid).array();
        return untagged(0x41, 0x43, 0, 0, msn, 0, header);
    }

    /** An RDMA_MSG reply to {@code xid} granting {@code credits}, with RDMAP control {@code rdmap} and Invalidate STag. */
    static byte[] rpcReply(long msn, int xid, int credits, int rdmap, int invalidateStag) {
        byte[] header = ByteBuffer.allocate(32).putInt(xid).putInt(1).putInt(credits).putInt(0).putInt(0).putInt(0)
                .putInt(0).putInt(xid).array();
        return untagged(0x41, rdmap, invalidateStag, 0, msn, 0, header);
    }

    private static final int SEND = 0x43;
    private static final int SEND_WITH_INVALIDATE = 0x44;
    private static final int SEND_WITH_SE_AND_INVALIDATE = 0x46;

    @Test
    void rpcOverRdmaRepliesInvalidateAHandleOfTheCallTheyAnswer() throws IOException {
        assertEquals(List.of(), rpcOverRdma().client(rpcCall(1, 7, 0x300)).server(rpcReply(1, 7, 4, SEND_WITH_INVALIDATE,
                0x300)).client(rpcCall(2, 8, 0x310)).server(rpcReply(2, 8, 4, SEND_WITH_SE_AND_INVALIDATE, 0x310))
                .check());
        // Another call's handle: still advertised by the requester, but not by the call this reply answers.
        Finding other = only(Rule.RPCRDMA_INVALIDATE, rpcOverRdma().client(rpcCall(1, 7, 0x300))
                .server(rpcReply(1, 7, 4, SEND, 0)).client(rpcCall(2, 8, 0x310))
                .server(rpcReply(2, 8, 4, SEND_WITH_INVALIDATE, 0x300)));
        assertTrue(other.sentence().contains("XID 0x00000008 invalidates STag 0x00000300")
                && other.sentence().contains("advertised 0x00000310"), other.sentence());
        Finding solicited = only(Rule.RPCRDMA_INVALIDATE, rpcOverRdma().client(rpcCall(1, 7, 0x300))
                .server(rpcReply(1, 7, 4, SEND_WITH_SE_AND_INVALIDATE, 0x301)));
        assertTrue(solicited.sentence().startsWith("a Send with SE and Invalidate answering XID 0x00000007"),
                solicited.sentence());
        Finding unknown = only(Rule.RPCRDMA_INVALIDATE, rpcOverRdma().client(rpcCall(1, 7, 0x300))
                .server(rpcReply(1, 9, 4, SEND_WITH_INVALIDATE, 0x300)));
        assertTrue(unknown.sentence().contains("XID 0x00000009, which no call"), unknown.sentence());
        // Without RFC 8797 private data the connection is not RPC-over-RDMA, and the rule stays quiet.
        assertEquals(List.of(), new Connection().client(rpcCall(1, 7, 0x300))
                .server(rpcReply(1, 7, 4, SEND_WITH_INVALIDATE, 0x301)).check());
    }

    @Test
    void rpcOverRdmaCallsInFlightStayWithinTheCreditsGranted() throws IOException {
        // One call before the first reply, then up to the two credits the reply grants.
        assertEquals(List.of(), rpcOverRdma().client(rpcCall(1, 1, 0x301)).server(rpcReply(1, 1, 2, SEND, 0))
                .client(rpcCall(2, 2, 0x302)).client(rpcCall(3, 3, 0x303)).server(rpcReply(2, 2, 2, SEND, 0))
                .client(rpcCall(4, 4, 0x304)).server(rpcReply(3, 3, 2, SEND, 0)).server(rpcReply(4, 4, 2, SEND, 0))
                .check());
        Finding first = only(Rule.RPCRDMA_CREDITS, rpcOverRdma().client(rpcCall(1, 1, 0x301))
                .client(rpcCall(2, 2, 0x302)));
        assertTrue(first.sentence().contains("2 calls in flight, more than the 1 credit the responder granted (before "
                + "the first reply"), first.sentence());
        Finding third = only(Rule.RPCRDMA_CREDITS, rpcOverRdma().client(rpcCall(1, 1, 0x301))
                .server(rpcReply(1, 1, 2, SEND, 0)).client(rpcCall(2, 2, 0x302)).client(rpcCall(3, 3, 0x303))
                .client(rpcCall(4, 4, 0x304)));
        assertEquals(1, third.frames().size(), third.toString());
        assertTrue(third.sentence().contains("XID 0x00000004 makes 3 calls in flight, more than the 2 credits"),
                third.sentence());
        // A grant of zero counts as one.
        Finding zero = only(Rule.RPCRDMA_CREDITS, rpcOverRdma().client(rpcCall(1, 1, 0x301))
                .server(rpcReply(1, 1, 0, SEND, 0)).client(rpcCall(2, 2, 0x302)).client(rpcCall(3, 3, 0x303)));
        assertTrue(zero.sentence().endsWith("the 1 credit the responder granted."), zero.sentence());
        assertEquals(List.of(), rpcOverRdma().client(rpcCall(1, 1, 0x301)).server(rpcReply(1, 1, 0, SEND, 0))
                .client(rpcCall(2, 2, 0x302)).check());
    }

    @Test
    void rpcOverRdmaCreditsAndUnknownXidsAreNotJudgedWithoutTheMpaExchange() throws IOException {
        // Without the MPA exchange a reply may answer a call the capture missed: calls in flight and
        // unknown xids cannot be told. A handle outside the call the capture shows is still wrong.
        Connection midStream = new Connection(null, null, 0, 0);
        assertEquals(List.of(), midStream.client(rpcCall(1, 1, 0x301)).client(rpcCall(2, 2, 0x302))
                .client(rpcCall(3, 3, 0x303)).server(rpcReply(1, 9, 4, SEND_WITH_INVALIDATE, 0x300)).check());
        only(Rule.RPCRDMA_INVALIDATE, new Connection(null, null, 0, 0).client(rpcCall(1, 1, 0x301))
                .server(rpcReply(1, 1, 4, SEND_WITH_INVALIDATE, 0x300)));
    }

    @Test
    void rpcOverRdmaCreditsAreNotJudgedAfterAGapInTheCapture() throws IOException {
        // The capture misses the segment with call 2 (and so the reply to call 1 may be missing too).
        byte[] privateData = {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 0, 3, 3};
        Connection afterGap = new Connection(mpa(false, MpaFrames.CRC_FLAG, 1, privateData),
                mpa(true, MpaFrames.CRC_FLAG, 1, privateData)).client(rpcCall(1, 1, 0x301));
        byte[] missed = Connection.fpdu(afterGap.toServer, rpcCall(2, 2, 0x302));
        byte[] seen = Connection.fpdu(afterGap.toServer, rpcCall(3, 3, 0x303));
        afterGap.tcp.writeSegment(true, afterGap.tcp.clientNextSequence() + missed.length,
                afterGap.tcp.serverNextSequence(), 0x18, seen, 0, seen.length);
        assertEquals(List.of(), afterGap.check());
    }
}
