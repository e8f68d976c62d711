package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/** The stream decoder on captures built here: negotiation, CRC verdicts, markers, bad input. */
class IwarpStreamDecoderTest {

    /** Builds a one-connection capture: MPA setup with the given flags, then raw segments. */
    private static final class Capture {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PcapWriter writer;
        final SyntheticTcpCapture tcp;
        FpduWriter toServer;
        FpduWriter toClient;

        Capture(int requestFlags, int replyFlags) throws IOException {
            writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
            tcp = new SyntheticTcpCapture(writer, new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                    new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 6000), 77, 0xFFFF_FFF0L);
            tcp.handshake();
            tcp.clientSends(frame(false, requestFlags));
            tcp.serverSends(frame(true, replyFlags));
            boolean crc = ((requestFlags | replyFlags) & MpaFrames.CRC_FLAG) != 0;
            toServer = new FpduWriter(crc, (replyFlags & MpaFrames.MARKER_FLAG) != 0);
            toClient = new FpduWriter(crc, (requestFlags & MpaFrames.MARKER_FLAG) != 0);
        }

        static byte[] frame(boolean reply, int flags) {
            ByteBuf out = Unpooled.buffer();
            try {
                MpaFrames.write(out, reply, flags, 1, null);
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
            }
        }

        byte[] fpdu(FpduWriter writer, ByteBuf ulpdu) {
            ByteBuf out = Unpooled.buffer();
            try {
                writer.write(ulpdu, out);
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
                ulpdu.release();
            }
        }

        CaptureDecode decode() throws IOException {
            tcp.close();
            writer.close();
            return IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
        }
    }

    static ByteBuf send(long msn, byte[] payload) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
        return ulpdu.writeBytes(payload);
    }

    @Test
    void crcIsUsedBothWaysWhenEitherSideAsks() throws IOException {
        Capture capture = new Capture(0, MpaFrames.CRC_FLAG);
        capture.tcp.clientSends(capture.fpdu(capture.toServer, send(1, new byte[] {1, 2, 3})));
        capture.tcp.serverSends(capture.fpdu(capture.toClient, send(1, new byte[] {4})));
        CaptureDecode decode = capture.decode();
        List<DecodedPdu> pdus = decode.pdus();
        assertEquals(4, pdus.size());
        assertEquals(Boolean.TRUE, pdus.get(2).crcGood());
        assertEquals(Boolean.TRUE, pdus.get(3).crcGood());
        assertTrue(pdus.get(2).fields().containsKey("iwarp_mpa.crc_check"));
        assertEquals("0x03", pdus.get(2).fields().get("iwarp_rdma.opcode"));
        assertEquals("1", pdus.get(3).fields().get("iwarp_ddp.msn"));
    }

    @Test
    void corruptedCrcIsReportedBadAndDecodingGoesOn() throws IOException {
        Capture capture = new Capture(MpaFrames.CRC_FLAG, MpaFrames.CRC_FLAG);
        byte[] damaged = capture.fpdu(capture.toServer, send(1, "payload".getBytes()));
        damaged[damaged.length - 1] ^= 1;
        capture.tcp.clientSends(damaged);
        capture.tcp.clientSends(capture.fpdu(capture.toServer, send(2, "next".getBytes())));
        List<DecodedPdu> pdus = capture.decode().pdus();
        assertEquals(Boolean.FALSE, pdus.get(2).crcGood());
        assertTrue(pdus.get(2).problems().get(0).startsWith("bad CRC32"), pdus.get(2).problems().toString());
        assertEquals(Boolean.TRUE, pdus.get(3).crcGood());
    }

    @Test
    void withoutCrcTheFieldIsShownButNotJudged() throws IOException {
        Capture capture = new Capture(0, 0);
        capture.tcp.clientSends(capture.fpdu(capture.toServer, send(1, new byte[5])));
        DecodedPdu pdu = capture.decode().pdus().get(2);
        assertNull(pdu.crcGood());
        assertEquals("0x00000000", pdu.fields().get("iwarp_mpa.crc"));
        assertEquals("000000", pdu.fields().get("iwarp_mpa.pad"));
    }

    @Test
    void markersAreStrippedPerDirectionAndTheirPointersChecked() throws IOException {
        // Initiator asks for markers (M in the Request), responder does not: only server-to-client carries them.
        Capture capture = new Capture(MpaFrames.MARKER_FLAG, 0);
        byte[] big = new byte[1500];
        Arrays.fill(big, (byte) 0x5A);
        capture.tcp.serverSends(capture.fpdu(capture.toClient, send(1, big)));
        capture.tcp.clientSends(capture.fpdu(capture.toServer, send(1, big)));
        List<DecodedPdu> pdus = capture.decode().pdus();
        DecodedPdu toClient = pdus.stream().filter(p -> p.source().endsWith(":6000") && p.kind() == DecodedPdu.Kind.FPDU)
                .findFirst().orElseThrow();
        DecodedPdu toServer = pdus.stream().filter(p -> p.source().endsWith(":5000") && p.kind() == DecodedPdu.Kind.FPDU)
                .findFirst().orElseThrow();
        assertEquals("0,508,1020", toClient.fields().get("iwarp_mpa.marker_fpduptr"));
        assertEquals(List.of(), toClient.problems());
        assertFalse(toServer.fields().containsKey("iwarp_mpa.marker_fpduptr"));
        assertEquals("1518", toClient.fields().get("iwarp_mpa.ulpdulength"));
    }

    @Test
    void aStreamWithoutMpaIsNotIwarp() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, false);
                SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                        new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                        new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 22), 1, 2)) {
            tcp.handshake();
            tcp.clientSends("SSH-2.0-OpenSSH_9.2\r\n".getBytes());
        }
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
        assertEquals(0, decode.iwarpConversations());
        assertEquals(1, decode.tcpConversations());
        assertTrue(decode.notes().get(0).contains("not iWARP"), decode.notes().toString());
    }

    /**
     * A Request or Reply that announces more than 512 octets of private data is invalid and starts
     * no FPDUs: the decode notes it and stops, instead of reading FPDUs from where the announced
     * length ends, past what was captured (found by fuzzing: a Reply announcing 2048 octets).
     */
    @Test
    void aFrameAnnouncingMoreThan512OctetsOfPrivateDataEndsTheConversationWithANote() throws IOException {
        for (boolean inReply : new boolean[] {false, true}) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, false);
                    SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                            new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                            new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 6000), 1, 2)) {
                tcp.handshake();
                byte[] request = Capture.frame(false, 0);
                byte[] reply = Capture.frame(true, 0);
                byte[] invalid = Arrays.copyOf(inReply ? reply : request, MpaFrames.HEADER_LENGTH + 4);
                invalid[MpaFrames.PRIVATE_DATA_LENGTH_OFFSET] = 0x08; // private data length 2048, four octets of it sent
                tcp.clientSends(inReply ? request : invalid);
                tcp.serverSends(inReply ? invalid : reply);
                tcp.clientSends(new byte[] {0, 4, 1, 2, 3, 4, 5, 6, 7, 8});
            }
            CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
            String which = inReply ? "Reply" : "Request";
            assertTrue(decode.pdus().stream().noneMatch(pdu -> pdu.kind() == DecodedPdu.Kind.FPDU), which);
            DecodedPdu frame = decode.pdus().get(decode.pdus().size() - 1);
            assertEquals(inReply ? DecodedPdu.Kind.MPA_REPLY : DecodedPdu.Kind.MPA_REQUEST, frame.kind());
            assertEquals(List.of("private data length 2048 exceeds 512"), frame.problems());
            assertEquals(List.of("conversation 0: the MPA " + which + " announces 2048 octets of private data, more "
                    + "than the 512 of RFC 5044 section 7.1; no FPDUs are decoded after an invalid " + which),
                    decode.notes());
        }
    }

    @Test
    void siwStyleTerminateIsFlagged() throws IOException {
        Capture capture = new Capture(0, 0);
        ByteBuf terminate = Unpooled.buffer();
        DdpHeaders.writeUntagged(terminate, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, 1, 0);
        terminate.writeBytes(new byte[] {0x02, 0x02, 0x00, 0x00}); // siw's CRC error: layer in the low nibble
        capture.tcp.serverSends(capture.fpdu(capture.toClient, terminate));
        DecodedPdu pdu = capture.decode().pdus().get(2);
        assertNull(pdu.terminateError());
        assertTrue(pdu.problems().stream().anyMatch(p -> p.contains("siw")), pdu.problems().toString());
    }

    @Test
    void rfcTerminateNamesItsError() throws IOException {
        Capture capture = new Capture(0, 0);
        ByteBuf terminate = Unpooled.buffer();
        DdpHeaders.writeUntagged(terminate, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, 1, 0);
        terminate.writeInt(org.jiwarp.wire.rdmap.TerminateHeader.controlWord(TerminateError.LLP_CRC_ERROR, 0));
        capture.tcp.serverSends(capture.fpdu(capture.toClient, terminate));
        DecodedPdu pdu = capture.decode().pdus().get(2);
        assertEquals(TerminateError.LLP_CRC_ERROR, pdu.terminateError());
        assertEquals("0x02", pdu.fields().get("iwarp_rdma.term_layer"));
        assertEquals("0x02", pdu.fields().get("iwarp_rdma.term_errcode_llp"));
    }

    @Test
    void anyByteSplitOfTheStreamDecodesTheSame() throws IOException {
        Capture reference = new Capture(MpaFrames.CRC_FLAG | MpaFrames.MARKER_FLAG, MpaFrames.MARKER_FLAG);
        byte[] stream = concat(
                reference.fpdu(reference.toServer, send(1, new byte[700])),
                reference.fpdu(reference.toServer, send(2, new byte[3])),
                reference.fpdu(reference.toServer, send(3, new byte[1200])));
        Property.forAll("decoder split-anywhere", 200, random -> {
            try {
                Capture capture = new Capture(MpaFrames.CRC_FLAG | MpaFrames.MARKER_FLAG, MpaFrames.MARKER_FLAG);
                int at = 0;
                for (int chunk : Property.split(random, stream.length, 600)) {
                    capture.tcp.clientSends(Arrays.copyOfRange(stream, at, at + chunk));
                    at += chunk;
                }
                List<DecodedPdu> pdus = capture.decode().pdus();
                assertEquals(5, pdus.size());
                for (int i = 2; i < 5; i++) {
                    assertEquals(Boolean.TRUE, pdus.get(i).crcGood());
                    assertEquals(List.of(), pdus.get(i).problems());
                    assertEquals(Integer.toString(i - 1), pdus.get(i).fields().get("iwarp_ddp.msn"));
                }
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
    }

    private static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }
}
