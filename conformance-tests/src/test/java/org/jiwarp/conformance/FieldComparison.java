package org.jiwarp.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
        return mismatches(tshark, capture, true);
    }

    /**
     * As {@link #mismatches(Path, Path)}; a connection that reuses an earlier one's addresses and
     * ports ({@link Tshark#reusedStreams}) is cut out and compared on its own, where tshark sees it
     * as new, and {@code requireIwarp} is off for it (it may be a MOUNT connection, say).
     */
    private static List<String> mismatches(Path tshark, Path capture, boolean requireIwarp) throws IOException {
        CaptureDecode ours = IwarpStreamDecoder.decode(PcapFile.read(capture));
        Map<Integer, Map<String, String>> jiwarp = ours.fieldsByFrame();
        Map<Integer, Map<String, String>> wireshark = Tshark.fields(tshark, capture);
        List<String> mismatches = new ArrayList<>();
        if (wireshark.isEmpty() && (requireIwarp || ours.iwarpConversations() > 0)) {
            mismatches.add(capture.getFileName() + ": tshark shows no iWARP field at all");
        }
        List<Integer> reused = Tshark.reusedStreams(tshark, capture);
        Set<Integer> cutOut = Tshark.framesOf(tshark, capture, reused);
        String file = capture.getFileName().toString();
        compare(file, jiwarp, wireshark, Tshark.FIELDS, cutOut, mismatches);
        // RPC-over-RDMA headers: where tshark's heuristic finds one, and only there, jiwarp does too.
        compare(file, jiwarp, Tshark.rpcOverRdmaFields(tshark, capture), RpcRdmaFields.NAMES, cutOut, mismatches);
        Map<Integer, String> ourCrc = ours.crcVerdictsByFrame();
        Map<Integer, String> theirCrc = Tshark.crcVerdicts(tshark, capture);
        TreeSet<Integer> crcFrames = new TreeSet<>(ourCrc.keySet());
        crcFrames.addAll(theirCrc.keySet());
        crcFrames.removeAll(cutOut);
        for (int frame : crcFrames) {
            String mine = ourCrc.get(frame);
            String theirs = theirCrc.get(frame);
            if (mine == null ? theirs != null : !mine.equals(theirs)) {
                mismatches.add(file + " frame " + frame + " CRC verdict: tshark=" + show(theirs) + " jiwarp="
                        + show(mine));
            }
        }
        for (int stream : reused) {
            Path alone = Files.createTempFile("jiwarp-stream-" + stream + "-", ".pcap");
            try {
                Tshark.cut(tshark, capture, stream, alone);
                for (String mismatch : mismatches(tshark, alone, false)) {
                    mismatches.add(file + " TCP stream " + stream + " (its addresses and ports reused, compared on "
                            + "its own): " + mismatch);
                }
            } finally {
                Files.deleteIfExists(alone);
            }
        }
        return mismatches;
    }

    /** Adds a mismatch for every field of {@code names} that differs in any frame of either decode, but those of {@code skip}. */
    private static void compare(String file, Map<Integer, Map<String, String>> jiwarp,
            Map<Integer, Map<String, String>> wireshark, List<String> names, Set<Integer> skip,
            List<String> mismatches) {
        TreeSet<Integer> frames = new TreeSet<>(jiwarp.keySet());
        frames.addAll(wireshark.keySet());
        frames.removeAll(skip);
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
