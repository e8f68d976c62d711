package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapNgWriter;
import org.jiwarp.capture.pcap.PcapRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A capture of a real run over loopback TCP (bench, CRC and markers on) with frames taken out of
 * its middle, as a capture that dropped packets: {@code jiwarp decode} reports each gap, finds the
 * FPDUs after it again, and decodes every FPDU the capture still holds whole.
 */
class DecodeGapTest {

    @TempDir
    Path temp;

    @Test
    void aLoopbackCaptureWithDroppedFramesDecodesEveryWholeFpduAfterTheGaps() throws IOException {
        Path pcap = temp.resolve("bench.pcapng");
        DecodeCommandTest.Run bench = jiwarp("bench", "-n", "40", "-s", "3000", "--op", "write", "--crc", "--markers",
                "--warmup", "0", "--pcap", pcap);
        assertEquals(0, bench.exit(), bench.err());
        PcapFile original = PcapFile.read(pcap);
        CaptureDecode whole = IwarpStreamDecoder.decode(original);
        // Drop two frames that carry FPDUs, a third and two thirds of the way through.
        List<Integer> fpduFrames = new ArrayList<>();
        for (DecodedPdu pdu : whole.pdus()) {
            if (pdu.kind() == DecodedPdu.Kind.FPDU && !fpduFrames.contains(pdu.frameNumber())) {
                fpduFrames.add(pdu.frameNumber());
            }
        }
        assertTrue(fpduFrames.size() > 30, "only " + fpduFrames.size() + " frames with FPDUs");
        List<Integer> dropped = List.of(fpduFrames.get(fpduFrames.size() / 3), fpduFrames.get(2 * fpduFrames.size() / 3));
        Path gapped = temp.resolve("gapped.pcapng");
        try (OutputStream out = Files.newOutputStream(gapped);
             PcapNgWriter writer = new PcapNgWriter(out, original.linkType())) {
            for (PcapRecord record : original.records()) {
                if (!dropped.contains(record.frameNumber())) {
                    writer.write(record.timestampNanos(), record.data());
                }
            }
        }
        // What must come out: every PDU of frames whose segments the capture still holds whole.
        List<String> expected = new ArrayList<>();
        for (DecodedPdu pdu : whole.pdus()) {
            if (!dropped.contains(pdu.frameNumber()) && !pdu.summary().isEmpty()) {
                expected.add(pdu.summary());
            }
        }
        CaptureDecode after = IwarpStreamDecoder.decode(PcapFile.read(gapped));
        List<String> decoded = new ArrayList<>();
        for (DecodedPdu pdu : after.pdus()) {
            decoded.add(pdu.summary());
            assertTrue(pdu.problems().isEmpty(), pdu + " " + pdu.problems());
        }
        assertEquals(expected, decoded, after.notes().toString());
        DecodeCommandTest.Run run = jiwarp("decode", gapped);
        assertEquals(0, run.exit(), run.err());
        assertEquals(2, run.err().split("the capture misses", -1).length - 1, run.err());
        assertEquals(2, run.err().split("resynchronised at stream offset", -1).length - 1, run.err());
        assertTrue(run.err().contains("good CRCs") && run.err().contains("marker"), run.err());
    }
}
