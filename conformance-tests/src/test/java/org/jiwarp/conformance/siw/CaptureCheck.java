package org.jiwarp.conformance.siw;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.conformance.FieldComparison;
import org.jiwarp.conformance.Tshark;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;

/**
 * One capture of an interop run, decoded by jiwarp and by tshark: what jiwarp's decoder finds wrong
 * in its PDUs (a CRC verdict other than expected among them), and where tshark disagrees with it
 * (a malformed frame, any field of any frame: {@link FieldComparison}).
 *
 * @param decode         jiwarp's decode
 * @param problems       what the decoder says is wrong, each naming file and frame (a bad CRC, a
 *                       Terminate only siw's bit layout makes sense of); its notes on whole
 *                       conversations, such as a rejected setup, are in {@link #notes()}
 * @param disagreements  where tshark differs from jiwarp; empty when the two agree
 */
record CaptureCheck(CaptureDecode decode, List<String> problems, List<String> disagreements) {

    /**
     * Checks {@code capture}.
     *
     * @param crc {@code TRUE}: every FPDU has a good CRC; {@code FALSE}: none carries one (no
     *     verdict); {@code null}: whatever the capture holds, as long as jiwarp and tshark agree
     */
    static CaptureCheck of(Path capture, Boolean crc) throws IOException {
        String file = capture.getFileName().toString();
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(capture));
        List<String> problems = new ArrayList<>();
        for (DecodedPdu pdu : decode.pdus()) {
            for (String problem : pdu.problems()) {
                problems.add(file + " frame " + pdu.frameNumber() + ": " + problem + " (" + pdu.summary() + ")");
            }
            if (pdu.kind() == DecodedPdu.Kind.FPDU && crc != null && pdu.crcGood() != (crc ? Boolean.TRUE : null)) {
                problems.add(file + " frame " + pdu.frameNumber() + ": CRC verdict " + pdu.crcGood() + ", expected "
                        + (crc ? "good" : "none") + " (" + pdu.summary() + ")");
            }
        }
        List<String> disagreements = new ArrayList<>();
        // Never without tshark: a missing one skips the test, or under CI fails it.
        Path tshark = Tshark.required();
        for (int frame : Tshark.malformedFrames(tshark, capture)) {
            disagreements.add(file + " frame " + frame + ": tshark says malformed");
        }
        disagreements.addAll(FieldComparison.mismatches(tshark, capture));
        return new CaptureCheck(decode, problems, disagreements);
    }

    /** The decoder's notes on the capture's conversations (say, "the responder rejected the connection"). */
    List<String> notes() {
        return decode.notes();
    }

    /** PDUs whose one-line summary contains {@code text} (say " Read Request [last DDP segment]"). */
    long count(String text) {
        return decode.pdus().stream().filter(p -> p.summary().contains(text)).count();
    }

    /** The first PDU of {@code kind}, or {@code null}. */
    DecodedPdu first(DecodedPdu.Kind kind) {
        return decode.pdus().stream().filter(p -> p.kind() == kind).findFirst().orElse(null);
    }

    long fpdus() {
        return decode.pdus().stream().filter(p -> p.kind() == DecodedPdu.Kind.FPDU).count();
    }
}
