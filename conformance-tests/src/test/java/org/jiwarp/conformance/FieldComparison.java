package org.jiwarp.conformance;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.decode.RpcRdmaFields;
import org.jiwarp.capture.pcap.PcapFile;

/**
 * Compares jiwarp's decode of a capture with tshark's, frame by frame and field by field: the
 * iWARP fields, the {@code rpcordma.*} fields (which must be absent where tshark finds no
 * RPC-over-RDMA header, as on rping and perftest traffic) and the CRC verdicts.
 */
public final class FieldComparison {

    private FieldComparison() {
    }

    /**
     * Every disagreement, each naming file, frame and field; empty when the two agree. A capture in
     * which tshark finds no iWARP field at all counts as a disagreement, so an empty comparison
     * can never pass by accident.
     */
    public static List<String> mismatches(Path tshark, Path capture) throws IOException {
        CaptureDecode ours = IwarpStreamDecoder.decode(PcapFile.read(capture));
        Map<Integer, Map<String, String>> jiwarp = ours.fieldsByFrame();
        Map<Integer, Map<String, String>> wireshark = Tshark.fields(tshark, capture);
        List<String> mismatches = new ArrayList<>();
        if (wireshark.isEmpty()) {
            mismatches.add(capture.getFileName() + ": tshark shows no iWARP field at all");
        }
        String file = capture.getFileName().toString();
        compare(file, jiwarp, wireshark, Tshark.FIELDS, mismatches);
        // RPC-over-RDMA headers: where tshark's heuristic finds one, and only there, jiwarp does too.
        compare(file, jiwarp, Tshark.rpcOverRdmaFields(tshark, capture), RpcRdmaFields.NAMES, mismatches);
        Map<Integer, String> ourCrc = ours.crcVerdictsByFrame();
        Map<Integer, String> theirCrc = Tshark.crcVerdicts(tshark, capture);
        TreeSet<Integer> crcFrames = new TreeSet<>(ourCrc.keySet());
        crcFrames.addAll(theirCrc.keySet());
        for (int frame : crcFrames) {
            String mine = ourCrc.get(frame);
            String theirs = theirCrc.get(frame);
            if (mine == null ? theirs != null : !mine.equals(theirs)) {
                mismatches.add(file + " frame " + frame + " CRC verdict: tshark=" + show(theirs) + " jiwarp="
                        + show(mine));
            }
        }
        return mismatches;
    }

    /** Adds a mismatch for every field of {@code names} that differs in any frame of either decode. */
    private static void compare(String file, Map<Integer, Map<String, String>> jiwarp,
            Map<Integer, Map<String, String>> wireshark, List<String> names, List<String> mismatches) {
        TreeSet<Integer> frames = new TreeSet<>(jiwarp.keySet());
        frames.addAll(wireshark.keySet());
        for (int frame : frames) {
            Map<String, String> a = jiwarp.getOrDefault(frame, Map.of());
            Map<String, String> b = wireshark.getOrDefault(frame, Map.of());
            for (String field : names) {
                String mine = a.get(field);
                String theirs = b.get(field);
                if (mine == null ? theirs != null : !mine.equals(theirs)) {
                    mismatches.add(file + " frame " + frame + " " + field + ": tshark=" + show(theirs)
                            + " jiwarp=" + show(mine));
                }
            }
        }
    }

    private static String show(String value) {
        return value == null ? "(absent)" : "'" + value + "'";
    }
}
