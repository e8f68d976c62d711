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
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.capture.check.CaptureChecker;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.capture.pcap.TcpSegment;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Captures that miss a stretch of one direction (lost segments, a capture drop), at every offset
 * across the first FPDUs and with gaps of several lengths: the decoder reports the gap, finds the
 * first FPDU that begins after it again (by CRC, by markers or by plausible headers, as negotiated)
 * and decodes every FPDU from there, and the checker finds nothing to report in what it decoded.
 */
class CaptureGapTest {

    private static final int[] GAP_LENGTHS = {1, 3, 4, 150, 513, 1400};

    /** One direction's stream of Sends after an MPA negotiation, and where each FPDU starts. */
    static final class MarkedStream {
        final byte[] request;
        final byte[] reply;
        final byte[] fpdus;
        final List<Integer> starts = new ArrayList<>();
        /** Where each FPDU's length field is: after the marker when one leads the FPDU. */
        final List<Integer> headers = new ArrayList<>();
        final boolean crc;

        MarkedStream(boolean crc, boolean markers, int count, long seed) {
            this.crc = crc;
            int flags = crc ? MpaFrames.CRC_FLAG : 0;
            request = frame(false, flags);
            reply = frame(true, flags | (markers ? MpaFrames.MARKER_FLAG : 0));
            SplittableRandom random = new SplittableRandom(seed);
            FpduWriter writer = new FpduWriter(crc, markers);
            ByteBuf out = Unpooled.buffer();
            for (int msn = 1; msn <= count; msn++) {
                byte[] payload = new byte[1 + random.nextInt(700)];
                random.nextBytes(payload);
                ByteBuf ulpdu = Unpooled.buffer();
                DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
                ulpdu.writeBytes(payload);
                starts.add(out.writerIndex());
                headers.add(out.writerIndex() + (markers && out.writerIndex() % 512 == 0 ? 4 : 0));
                writer.write(ulpdu, out);
                ulpdu.release();
            }
            starts.add(out.writerIndex());
            fpdus = ByteBufUtil.getBytes(out);
            out.release();
        }

        static byte[] frame(boolean reply, int flags) {
            ByteBuf out = Unpooled.buffer();
            MpaFrames.write(out, reply, flags, 1, null);
            byte[] bytes = ByteBufUtil.getBytes(out);
            out.release();
            return bytes;
        }

        /**
         * Where the first FPDU after a gap ending at {@code to} can be found again: the first that
         * starts after the gap or, without CRC, whose leading marker alone the gap took (the CRC
         * covers that marker).
         */
        int resumesAt(int to) {
            for (int i = 0; i < headers.size(); i++) {
                if (starts.get(i) >= to || (!crc && headers.get(i) >= to)) {
                    return starts.get(i) >= to ? starts.get(i) : headers.get(i);
                }
            }
            throw new AssertionError("no FPDU after " + to);
        }

        /** The MSNs of the FPDUs wholly before {@code from} or found again after {@code to}. */
        List<String> msnsOutside(int from, int to) {
            List<String> msns = new ArrayList<>();
            int resumed = resumesAt(to);
            for (int i = 0; i + 1 < starts.size(); i++) {
                if (starts.get(i + 1) <= from || starts.get(i) >= resumed || headers.get(i) == resumed) {
                    msns.add(Integer.toString(i + 1));
                }
            }
            return msns;
        }

        /** A capture of the negotiation and the FPDUs, in segments of 200 octets, without {@code [from, to)}. */
        byte[] capture(int from, int to) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
            SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                    new InetSocketAddress(InetAddress.getByName("10.3.0.1"), 5000),
                    new InetSocketAddress(InetAddress.getByName("10.3.0.2"), 6000), 0xFFFF_0000L, 4000);
            tcp.handshake();
            tcp.clientSends(request);
            tcp.serverSends(reply);
            long base = tcp.clientNextSequence();
            for (int at = 0; at < fpdus.length; at += 200) {
                int end = Math.min(fpdus.length, at + 200);
                int[][] pieces = {{at, Math.min(end, from)}, {Math.max(at, to), end}};
                for (int[] piece : pieces) {
                    if (piece[1] > piece[0]) {
                        tcp.writeSegment(true, (base + piece[0]) & 0xFFFF_FFFFL, tcp.serverNextSequence(),
                                TcpSegment.PSH | TcpSegment.ACK, fpdus, piece[0], piece[1] - piece[0]);
                    }
                }
            }
            writer.close();
            return bytes.toByteArray();
        }
    }

    @ParameterizedTest(name = "crc={0} markers={1}")
    @CsvSource({"true,false", "false,false", "true,true", "false,true"})
    void everyFpduAfterAGapIsDecodedAtEveryGapOffset(boolean crc, boolean markers) throws IOException {
        MarkedStream stream = new MarkedStream(crc, markers, 14, 14);
        for (int from = 0; from <= stream.starts.get(4); from++) {
            int length = GAP_LENGTHS[from % GAP_LENGTHS.length];
            int to = from + length;
            CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(stream.capture(from, to)));
            List<String> msns = new ArrayList<>();
            for (DecodedPdu pdu : decode.pdus()) {
                if (pdu.kind() == DecodedPdu.Kind.FPDU) {
                    msns.add(pdu.fields().get("iwarp_ddp.msn"));
                    assertTrue(pdu.problems().isEmpty(), "gap " + from + "+" + length + ": " + pdu.problems());
                }
            }
            String where = "gap of " + length + " at " + from + ": " + decode.notes();
            assertEquals(stream.msnsOutside(from, to), msns, where);
            int resumed = stream.resumesAt(to);
            long resumedOffset = stream.request.length + resumed;
            String note = decode.notes().stream().filter(n -> n.contains("the capture misses")).findFirst()
                    .orElseThrow(() -> new AssertionError(where));
            assertTrue(note.contains("misses " + length + " octet"), note);
            assertTrue(note.contains("resynchronised at stream offset " + resumedOffset), note);
            assertTrue(note.contains(crc ? "good CRCs" : "plausible DDP/RDMAP headers"), note);
            assertEquals(List.of(), CaptureChecker.check(decode), where);
        }
    }
}
