package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.FrameFields;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapNgWriter;
import org.jiwarp.capture.pcap.PcapRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * jiwarp's own pcapng writer (what {@code --pcap x.pcapng} uses) against the captures there are:
 * every capture in {@code pcap-samples/} (made by jiwarp over loopback TCP), in
 * {@code $JIWARP_EXTERNAL_PCAPS} (the Wireshark wiki's and Linux siw's) and, when
 * {@code -Djiwarp.siw.captures=DIR} names the folder a siw interop run wrote its captures to, those
 * too, is read, written as pcapng and read again: the decode and the frame fields must be the same,
 * and tshark, reading the written file, must agree with jiwarp field by field.
 */
class PcapNgWriterRoundTripTest {

    @TempDir
    Path temp;

    @Test
    void everyCaptureWrittenAsPcapngDecodesTheSameAndTsharkAgrees() throws IOException {
        Path tshark = Tshark.required();
        List<Path> captures = captures();
        List<String> mismatches = new ArrayList<>();
        for (Path capture : captures) {
            PcapFile original = PcapFile.read(capture);
            Path written = temp.resolve(capture.getFileName() + ".pcapng");
            try (OutputStream out = Files.newOutputStream(written);
                 PcapNgWriter writer = new PcapNgWriter(out, original.linkType(), original.snapLength())) {
                for (PcapRecord record : original.records()) {
                    writer.writeCut(record.timestampNanos(), record.data(), record.data().length,
                            record.originalLength());
                }
            }
            PcapFile again = PcapFile.read(written);
            assertTrue(again.pcapng(), written.toString());
            CaptureDecode decode = IwarpStreamDecoder.decode(original);
            List<String> expected = PcapNgRoundTripTest.render(decode);
            assertFalse(expected.isEmpty(), capture + " decodes to nothing");
            assertEquals(expected, PcapNgRoundTripTest.render(IwarpStreamDecoder.decode(again)),
                    "the pcapng jiwarp wrote of " + capture);
            assertEquals(FrameFields.of(original), FrameFields.of(again), "frame fields of the pcapng of " + capture);
            List<String> theirs = FieldComparison.mismatches(tshark, written);
            if (decode.iwarpConversations() == 0) {
                // Neither finds iWARP in it: that is agreement.
                assertTrue(theirs.size() == 1 && theirs.get(0).endsWith("tshark shows no iWARP field at all"),
                        capture + ": " + theirs);
                continue;
            }
            for (String mismatch : theirs) {
                mismatches.add(capture.getFileName() + ": " + mismatch);
            }
        }
        assertEquals(List.of(), mismatches, mismatches.size() + " mismatch(es) with tshark on " + captures.size()
                + " written files");
    }

    private static List<Path> captures() throws IOException {
        List<Path> captures = PcapNgRoundTripTest.captures();
        String siw = System.getProperty("jiwarp.siw.captures");
        if (siw != null && !siw.isBlank()) {
            List<Path> made = ExternalPcaps.pcaps(Path.of(siw));
            assertFalse(made.isEmpty(), "no captures in " + siw + " (-Djiwarp.siw.captures)");
            captures.addAll(made);
        }
        return captures;
    }
}
