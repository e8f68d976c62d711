package org.jiwarp.capture.decode;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The result of decoding a capture: the PDUs in frame order, and notes on conversations that could
 * not be decoded (not iWARP, gaps, truncation).
 */
public final class CaptureDecode {

    private final List<DecodedPdu> pdus;
    private final List<String> notes;
    private final int iwarpConversations;
    private final int tcpConversations;

    CaptureDecode(List<DecodedPdu> pdus, List<String> notes, int iwarpConversations, int tcpConversations) {
        this.pdus = Collections.unmodifiableList(pdus);
        this.notes = Collections.unmodifiableList(notes);
        this.iwarpConversations = iwarpConversations;
        this.tcpConversations = tcpConversations;
    }

    public List<DecodedPdu> pdus() {
        return pdus;
    }

    public List<String> notes() {
        return notes;
    }

    /** Conversations in which an MPA Request was found. */
    public int iwarpConversations() {
        return iwarpConversations;
    }

    public int tcpConversations() {
        return tcpConversations;
    }

    /**
     * The fields of every frame that carries iWARP PDUs, as {@code tshark -T fields} shows them: a
     * field that occurs in several PDUs of one frame has its values joined with commas, in order.
     */
    public Map<Integer, Map<String, String>> fieldsByFrame() {
        Map<Integer, Map<String, String>> frames = new TreeMap<>();
        for (DecodedPdu pdu : pdus) {
            Map<String, String> fields = frames.computeIfAbsent(pdu.frameNumber(), f -> new LinkedHashMap<>());
            for (Map.Entry<String, String> field : pdu.fields().entrySet()) {
                if (pdu.rpcRdmaUnshown() && field.getKey().startsWith("rpcordma.")) {
                    continue;
                }
                fields.merge(field.getKey(), field.getValue(), (a, b) -> a + "," + b);
            }
        }
        return frames;
    }

    /** The CRC verdicts of every frame with a checked CRC, joined with commas ("Good"/"Bad"). */
    public Map<Integer, String> crcVerdictsByFrame() {
        Map<Integer, String> frames = new TreeMap<>();
        for (DecodedPdu pdu : pdus) {
            if (pdu.crcGood() != null) {
                frames.merge(pdu.frameNumber(), pdu.crcGood() ? "Good" : "Bad", (a, b) -> a + "," + b);
            }
        }
        return frames;
    }
}
