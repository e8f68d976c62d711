package org.jiwarp.capture.decode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * One MPA or DDP/RDMAP PDU found in a capture: where it is (frame, conversation, direction), its
 * fields under Wireshark's names with tshark's formatting, and what was wrong with it.
 *
 * <p>A PDU belongs to the frame that carried its last octet, as in Wireshark's TCP reassembly.
 */
public final class DecodedPdu {

    /** What the PDU is. */
    public enum Kind {
        MPA_REQUEST, MPA_REPLY, FPDU
    }

    private final int frameNumber;
    private final int conversation;
    private final String source;
    private final String destination;
    private final Kind kind;
    private final Map<String, String> fields = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private String summary = "";
    private Boolean crcGood;
    private TerminateError terminateError;
    private byte[] octets = new byte[0];
    private byte[] pad = new byte[0];
    private boolean resynchronised;
    private int mulpdu = -1;
    private boolean rpcRdmaUnshown;

    DecodedPdu(int frameNumber, int conversation, String source, String destination, Kind kind) {
        this.frameNumber = frameNumber;
        this.conversation = conversation;
        this.source = source;
        this.destination = destination;
        this.kind = kind;
    }

    /**
     * {@code true} for the first FPDU decoded after a gap in the capture: what its direction sent
     * before it is partly unknown (MSNs, message offsets, Read Requests may be missing).
     */
    public boolean resynchronised() {
        return resynchronised;
    }

    void resynchronised(boolean resynchronised) {
        this.resynchronised = resynchronised;
    }

    /**
     * The MULPDU of the FPDU's direction (RFC 5044 section 5.2) from the MSS the receiver announced
     * in its SYN, taken as the EMSS (an upper bound: TCP options only lower it), or -1 when the
     * capture holds no MSS option.
     */
    public int mulpdu() {
        return mulpdu;
    }

    void mulpdu(int mulpdu) {
        this.mulpdu = mulpdu;
    }

    /**
     * {@code true} when this PDU carries an RPC-over-RDMA header that tshark does not show: Wireshark
     * 4.0 dissects only the first RPC-over-RDMA message of a frame (a later one in the same TCP
     * segment shows as "Reassembled PDU in frame" and nothing more). Its {@code rpcordma.*} fields
     * are in {@link #fields()} for the checker, and left out of {@link CaptureDecode#fieldsByFrame()}.
     */
    public boolean rpcRdmaUnshown() {
        return rpcRdmaUnshown;
    }

    void rpcRdmaUnshown(boolean unshown) {
        this.rpcRdmaUnshown = unshown;
    }

    public int frameNumber() {
        return frameNumber;
    }

    /** Index of the TCP conversation, as Wireshark's {@code tcp.stream}. */
    public int conversation() {
        return conversation;
    }

    /** {@code address:port} of the sender. */
    public String source() {
        return source;
    }

    public String destination() {
        return destination;
    }

    public Kind kind() {
        return kind;
    }

    /** Wireshark field name to tshark-formatted value, in dissection order. */
    public Map<String, String> fields() {
        return Collections.unmodifiableMap(fields);
    }

    /** What is malformed or suspicious about this PDU; empty when nothing is. */
    public List<String> problems() {
        return Collections.unmodifiableList(problems);
    }

    /** One line in the manner of tshark's Info column. */
    public String summary() {
        return summary;
    }

    /** The CRC verdict: {@code null} when CRC was not negotiated (or for Request/Reply frames). */
    public Boolean crcGood() {
        return crcGood;
    }

    /** The error a Terminate carries, or {@code null}. */
    public TerminateError terminateError() {
        return terminateError;
    }

    /**
     * The PDU's octets for checks beyond the fields: an MPA Request or Reply frame as captured
     * (header and private data), or an FPDU's ULPDU (the DDP segment, markers removed). Not a
     * copy; do not modify.
     */
    public byte[] octets() {
        return octets;
    }

    /** An FPDU's pad octets (0 to 3), not a copy; empty for MPA frames. */
    public byte[] pad() {
        return pad;
    }

    void octets(byte[] octets, byte[] pad) {
        this.octets = octets;
        this.pad = pad;
    }

    void put(String field, String value) {
        fields.put(field, value);
    }

    /** Adds a value to a field that occurs more than once, comma-joined as tshark joins them. */
    void append(String field, String value) {
        fields.merge(field, value, (before, after) -> before + "," + after);
    }

    void problem(String problem) {
        problems.add(problem);
    }

    void summary(String summary) {
        this.summary = summary;
    }

    void crcGood(Boolean crcGood) {
        this.crcGood = crcGood;
    }

    void terminateError(TerminateError error) {
        this.terminateError = error;
    }

    @Override
    public String toString() {
        return frameNumber + " " + source + " -> " + destination + " " + summary;
    }
}
