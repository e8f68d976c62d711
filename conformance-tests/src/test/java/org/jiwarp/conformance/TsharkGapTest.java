package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where tshark loses the stream: a capture that misses 300 octets of a direction whose FPDUs do not
 * line up with its segments. tshark decodes the FPDUs before the gap and none after it; jiwarp
 * agrees with tshark field by field on every frame tshark decodes, and decodes every FPDU after
 * the gap that the capture holds whole.
 */
class TsharkGapTest {

    private static final int FPDUS = 14;

    @TempDir
    Path temp;

    @Test
    void jiwarpAgreesWhereTsharkDecodesAndGoesOnAfterTheGap() throws IOException {
        Path tshark = Tshark.required();
        SplittableRandom random = new SplittableRandom(14);
        FpduWriter framer = new FpduWriter(true, false);
        ByteBuf out = Unpooled.buffer();
        List<Integer> starts = new ArrayList<>();
        for (int msn = 1; msn <= FPDUS; msn++) {
            byte[] payload = new byte[1 + random.nextInt(700)];
            random.nextBytes(payload);
            ByteBuf ulpdu = Unpooled.buffer();
            DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
            starts.add(out.writerIndex());
            framer.write(ulpdu.writeBytes(payload), out);
            ulpdu.release();
        }
        starts.add(out.writerIndex());
        byte[] fpdus = ByteBufUtil.getBytes(out);
        out.release();
        int from = 2000;
        int to = 2300;
        Path capture = temp.resolve("gap.pcap");
        try (OutputStream file = Files.newOutputStream(capture);
             PcapWriter writer = new PcapWriter(file, LinkType.ETHERNET, true)) {
            SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                    new InetSocketAddress(InetAddress.getByName("10.5.0.1"), 40_000),
                    new InetSocketAddress(InetAddress.getByName("10.5.0.2"), 4791), 100, 200);
            tcp.handshake();
            tcp.clientSends(mpa(false));
            tcp.serverSends(mpa(true));
            long base = tcp.clientNextSequence();
            for (int at = 0; at < fpdus.length; at += 200) {
                int end = Math.min(fpdus.length, at + 200);
                for (int[] piece : new int[][] {{at, Math.min(end, from)}, {Math.max(at, to), end}}) {
                    if (piece[1] > piece[0]) {
                        tcp.writeSegment(true, base + piece[0], tcp.serverNextSequence(), TcpSegment.PSH | TcpSegment.ACK,
                                fpdus, piece[0], piece[1] - piece[0]);
                    }
                }
            }
        }
        CaptureDecode ours = IwarpStreamDecoder.decode(PcapFile.read(capture));
        Map<Integer, Map<String, String>> jiwarp = ours.fieldsByFrame();
        Map<Integer, Map<String, String>> wireshark = Tshark.fields(tshark, capture);
        List<String> mismatches = new ArrayList<>();
        for (Map.Entry<Integer, Map<String, String>> frame : wireshark.entrySet()) {
            for (String field : Tshark.FIELDS) {
                String theirs = frame.getValue().get(field);
                String mine = jiwarp.getOrDefault(frame.getKey(), Map.of()).get(field);
                if (theirs != null && !theirs.equals(mine)) {
                    mismatches.add("frame " + frame.getKey() + " " + field + ": tshark=" + theirs + " jiwarp=" + mine);
                }
            }
        }
        assertEquals(List.of(), mismatches, "where tshark decodes, jiwarp must agree");
        List<String> msns = new ArrayList<>();
        for (DecodedPdu pdu : ours.pdus()) {
            if (pdu.kind() == DecodedPdu.Kind.FPDU) {
                msns.add(pdu.fields().get("iwarp_ddp.msn"));
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < FPDUS; i++) {
            if (starts.get(i + 1) <= from || starts.get(i) >= to) {
                expected.add(Integer.toString(i + 1));
            }
        }
        assertEquals(expected, msns, ours.notes().toString());
        long theirFpdus = wireshark.values().stream().filter(f -> f.containsKey("iwarp_ddp.msn"))
                .mapToLong(f -> f.get("iwarp_ddp.msn").split(",").length).sum();
        long before = expected.stream().filter(m -> starts.get(Integer.parseInt(m)) <= from).count();
        assertTrue(theirFpdus <= before && msns.size() > theirFpdus, "tshark decoded " + theirFpdus + " FPDUs, "
                + before + " of them before the gap; jiwarp " + msns.size());
    }

    private static byte[] mpa(boolean reply) {
        ByteBuf frame = Unpooled.buffer();
        MpaFrames.write(frame, reply, MpaFrames.CRC_FLAG, 1, null);
        byte[] bytes = ByteBufUtil.getBytes(frame);
        frame.release();
        return bytes;
    }
}
