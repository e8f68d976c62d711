package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Captures that begin mid-connection, at every offset of the first two FPDUs: with no MPA frames to
 * go by, the decoder finds the first whole FPDU, says how many octets it skipped, and decodes every
 * FPDU from there on, with the CRC in use or not.
 */
class MidConnectionTest {

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void everyFpduAfterTheCutIsDecodedAtEveryCutOffset(boolean crc) throws IOException {
        SplittableRandom random = new SplittableRandom(14);
        FpduWriter writer = new FpduWriter(crc, false);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        List<Integer> starts = new ArrayList<>();
        for (int msn = 1; msn <= 8; msn++) {
            byte[] payload = new byte[1 + random.nextInt(200)];
            random.nextBytes(payload);
            ByteBuf ulpdu = Unpooled.buffer();
            DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
            ulpdu.writeBytes(payload);
            ByteBuf out = Unpooled.buffer();
            writer.write(ulpdu, out);
            starts.add(stream.size());
            stream.writeBytes(ByteBufUtil.getBytes(out));
            out.release();
            ulpdu.release();
        }
        byte[] bytes = stream.toByteArray();
        for (int cut = 0; cut <= starts.get(2); cut++) {
            int firstWhole = cut;
            int expectedMsn = 1;
            while (!starts.contains(firstWhole)) {
                firstWhole++;
            }
            expectedMsn = starts.indexOf(firstWhole) + 1;
            CaptureDecode decode = decode(Arrays.copyOfRange(bytes, cut, bytes.length));
            List<String> msns = new ArrayList<>();
            for (DecodedPdu pdu : decode.pdus()) {
                msns.add(pdu.fields().get("iwarp_ddp.msn"));
                assertTrue(pdu.problems().isEmpty(), "cut " + cut + ": " + pdu.problems());
            }
            List<String> expected = new ArrayList<>();
            for (int msn = expectedMsn; msn <= 8; msn++) {
                expected.add(Integer.toString(msn));
            }
            assertEquals(expected, msns, "cut at " + cut + " " + decode.notes());
            int skipped = firstWhole - cut;
            assertTrue(decode.notes().get(0).contains("after " + skipped + " octet"), decode.notes().toString());
            assertTrue(decode.notes().get(0).contains("CRC taken as " + (crc ? "on" : "off")), decode.notes().toString());
        }
    }

    @org.junit.jupiter.api.Test
    void payloadWordsThatLookLikeMarkersDoNotTurnMarkersOn() throws IOException {
        // rping's rping_rdma_info with size 32: in every FPDU the word 00 00 00 20 sits 32 octets
        // after the length field, just where a marker with FPDUPTR 32 would.
        FpduWriter writer = new FpduWriter(false, false);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int msn = 1; msn <= 60; msn++) {
            ByteBuf ulpdu = Unpooled.buffer();
            DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
            ulpdu.writeLong(0x7f00_0000_1000L).writeInt(0x1234).writeInt(32);
            ByteBuf out = Unpooled.buffer();
            writer.write(ulpdu, out);
            stream.writeBytes(ByteBufUtil.getBytes(out));
            out.release();
            ulpdu.release();
        }
        byte[] bytes = stream.toByteArray();
        for (int cut = 0; cut < 80; cut++) {
            CaptureDecode decode = decode(Arrays.copyOfRange(bytes, cut, bytes.length));
            assertTrue(decode.notes().get(0).contains("markers as off"), "cut " + cut + ": " + decode.notes());
            assertEquals(60 - (cut + 39) / 40, decode.pdus().size(), "cut " + cut + ": " + decode.notes());
        }
    }

    /** A capture of {@code clientBytes} sent without handshake, in segments of 300 octets. */
    static CaptureDecode decode(byte[] clientBytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(out, LinkType.ETHERNET, true);
        try (SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                new InetSocketAddress(InetAddress.getByName("10.2.0.1"), 5000),
                new InetSocketAddress(InetAddress.getByName("10.2.0.2"), 6000), 1000, 2000)) {
            // In segments of 300 octets, as a sender with a small MSS would write them.
            for (int at = 0; at < clientBytes.length; at += 300) {
                tcp.clientSends(Arrays.copyOfRange(clientBytes, at, Math.min(clientBytes.length, at + 300)));
            }
        }
        writer.close();
        return IwarpStreamDecoder.decode(PcapFile.read(out.toByteArray()));
    }
}
