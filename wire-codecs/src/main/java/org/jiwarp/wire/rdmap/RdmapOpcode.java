package org.jiwarp.wire.rdmap;

import org.jiwarp.wire.ddp.DdpHeaders;

/**
 * RDMAP opcodes (RFC 5040 section 4.2, with the RFC 7306 section 4.1 additions), each with the
 * DDP buffer model and untagged queue it travels on (RFC 5040 section 4.5, RFC 7306 section 5.4).
 */
public enum RdmapOpcode {
    RDMA_WRITE(0x0, true, -1, "Write"),
    RDMA_READ_REQUEST(0x1, false, DdpHeaders.QN_READ_REQUEST, "Read Request"),
    RDMA_READ_RESPONSE(0x2, true, -1, "Read Response"),
    SEND(0x3, false, DdpHeaders.QN_SEND, "Send"),
    SEND_WITH_INVALIDATE(0x4, false, DdpHeaders.QN_SEND, "Send with Invalidate"),
    SEND_WITH_SE(0x5, false, DdpHeaders.QN_SEND, "Send with SE"),
    SEND_WITH_SE_AND_INVALIDATE(0x6, false, DdpHeaders.QN_SEND, "Send with SE and Invalidate"),
    TERMINATE(0x7, false, DdpHeaders.QN_TERMINATE, "Terminate"),
    /** RFC 7306 section 4.1. */
    IMMEDIATE_DATA(0x8, false, DdpHeaders.QN_SEND, "Immediate Data"),
    /** RFC 7306 section 4.1. */
    IMMEDIATE_DATA_WITH_SE(0x9, false, DdpHeaders.QN_SEND, "Immediate Data with SE"),
    /** RFC 7306 section 4.1: travels on the Read Request queue, within the IRD/ORD limits. */
    ATOMIC_REQUEST(0xA, false, DdpHeaders.QN_READ_REQUEST, "Atomic Request"),
    /** RFC 7306 section 4.1: travels on queue 3. */
    ATOMIC_RESPONSE(0xB, false, DdpHeaders.QN_ATOMIC_RESPONSE, "Atomic Response");

    /** RFC 7306 section 6.3: an Immediate Data message carries exactly 8 octets of ULP data. */
    public static final int IMMEDIATE_DATA_LENGTH = 8;

    private static final RdmapOpcode[] BY_CODE = new RdmapOpcode[16];

    static {
        for (RdmapOpcode opcode : values()) {
            BY_CODE[opcode.code] = opcode;
        }
    }

    private final int code;
    private final boolean tagged;
    private final int queueNumber;
    private final String displayName;

    RdmapOpcode(int code, boolean tagged, int queueNumber, String displayName) {
        this.code = code;
        this.tagged = tagged;
        this.queueNumber = queueNumber;
        this.displayName = displayName;
    }

    /** The 4-bit wire value. */
    public int code() {
        return code;
    }

    /** {@code true} for the tagged buffer model (Write, Read Response). */
    public boolean tagged() {
        return tagged;
    }

    /** The DDP queue number an untagged message of this opcode uses; -1 for tagged ones. */
    public int queueNumber() {
        return queueNumber;
    }

    /** {@code true} when the message asks for a Solicited Event at the Data Sink. */
    public boolean solicitedEvent() {
        return this == SEND_WITH_SE || this == SEND_WITH_SE_AND_INVALIDATE || this == IMMEDIATE_DATA_WITH_SE;
    }

    /** {@code true} when the header carries an STag for the Data Sink to invalidate. */
    public boolean invalidates() {
        return this == SEND_WITH_INVALIDATE || this == SEND_WITH_SE_AND_INVALIDATE;
    }

    /** {@code true} for Immediate Data and Immediate Data with SE (RFC 7306 section 6.3). */
    public boolean immediateData() {
        return this == IMMEDIATE_DATA || this == IMMEDIATE_DATA_WITH_SE;
    }

    /** The name Wireshark shows for the opcode. */
    public String displayName() {
        return displayName;
    }

    /** The opcode for a 4-bit value, or {@code null} for the reserved values 0xC..0xF. O(1). */
    public static RdmapOpcode valueOf(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
