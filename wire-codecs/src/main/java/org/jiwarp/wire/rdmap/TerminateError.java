package org.jiwarp.wire.rdmap;

/**
 * Every error a Terminate message can carry: layer, error type and error code, with the names the
 * RFCs give them (RFC 5040 section 7.2, RFC 5041 section 7.2, RFC 5044 section 8, RFC 6581
 * section 3).
 *
 * <p>The triple is unique; {@link #valueOf(int, int, int)} finds it in O(1) through a table indexed
 * by {@code layer << 12 | errorType << 8 | errorCode}.
 */
public enum TerminateError {

    // RFC 5040 section 7.2, Layer 0 (RDMAP).
    RDMAP_LOCAL_CATASTROPHIC(TerminateLayer.RDMAP, 0x0, 0x00, "Local Catastrophic Error"),
    RDMAP_INVALID_STAG(TerminateLayer.RDMAP, 0x1, 0x00, "Invalid STag"),
    RDMAP_BASE_OR_BOUNDS_VIOLATION(TerminateLayer.RDMAP, 0x1, 0x01, "Base or bounds violation"),
    RDMAP_ACCESS_RIGHTS_VIOLATION(TerminateLayer.RDMAP, 0x1, 0x02, "Access rights violation"),
    RDMAP_STAG_NOT_ASSOCIATED(TerminateLayer.RDMAP, 0x1, 0x03, "STag not associated with RDMAP Stream"),
    RDMAP_TO_WRAP(TerminateLayer.RDMAP, 0x1, 0x04, "TO wrap"),
    RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED(TerminateLayer.RDMAP, 0x1, 0x09, "STag cannot be invalidated"),
    RDMAP_PROTECTION_UNSPECIFIED(TerminateLayer.RDMAP, 0x1, 0xFF, "Unspecified Error"),
    RDMAP_INVALID_VERSION(TerminateLayer.RDMAP, 0x2, 0x05, "Invalid RDMAP version"),
    RDMAP_UNEXPECTED_OPCODE(TerminateLayer.RDMAP, 0x2, 0x06, "Unexpected OpCode"),
    RDMAP_CATASTROPHIC_LOCAL_TO_STREAM(TerminateLayer.RDMAP, 0x2, 0x07,
            "Catastrophic error, localized to RDMAP Stream"),
    RDMAP_CATASTROPHIC_GLOBAL(TerminateLayer.RDMAP, 0x2, 0x08, "Catastrophic error, global"),
    RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED(TerminateLayer.RDMAP, 0x2, 0x09, "STag cannot be invalidated"),
    RDMAP_OPERATION_UNSPECIFIED(TerminateLayer.RDMAP, 0x2, 0xFF, "Unspecified Error"),

    // RFC 5041 section 7.2, Layer 1 (DDP).
    DDP_LOCAL_CATASTROPHIC(TerminateLayer.DDP, 0x0, 0x00, "Local Catastrophic"),
    DDP_TAGGED_INVALID_STAG(TerminateLayer.DDP, 0x1, 0x00, "Invalid STag"),
    DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION(TerminateLayer.DDP, 0x1, 0x01, "Base or bounds violation"),
    DDP_TAGGED_STAG_NOT_ASSOCIATED(TerminateLayer.DDP, 0x1, 0x02, "STag not associated with DDP Stream"),
    DDP_TAGGED_TO_WRAP(TerminateLayer.DDP, 0x1, 0x03, "TO wrap"),
    DDP_TAGGED_INVALID_VERSION(TerminateLayer.DDP, 0x1, 0x04, "Invalid DDP version"),
    DDP_UNTAGGED_INVALID_QN(TerminateLayer.DDP, 0x2, 0x01, "Invalid QN"),
    DDP_UNTAGGED_INVALID_MSN_NO_BUFFER(TerminateLayer.DDP, 0x2, 0x02, "Invalid MSN - no buffer available"),
    DDP_UNTAGGED_INVALID_MSN_RANGE(TerminateLayer.DDP, 0x2, 0x03, "Invalid MSN - MSN range is not valid"),
    DDP_UNTAGGED_INVALID_MO(TerminateLayer.DDP, 0x2, 0x04, "Invalid MO"),
    DDP_UNTAGGED_MESSAGE_TOO_LONG(TerminateLayer.DDP, 0x2, 0x05, "DDP Message too long for available buffer"),
    DDP_UNTAGGED_INVALID_VERSION(TerminateLayer.DDP, 0x2, 0x06, "Invalid DDP version"),

    // RFC 5044 section 8 and RFC 6581 section 3, Layer 2 (LLP: MPA), error type 0.
    LLP_CONNECTION_LOST(TerminateLayer.LLP, 0x0, 0x01, "TCP connection closed, terminated or lost"),
    LLP_CRC_ERROR(TerminateLayer.LLP, 0x0, 0x02, "MPA CRC Error"),
    LLP_MARKER_ULPDU_LENGTH_MISMATCH(TerminateLayer.LLP, 0x0, 0x03,
            "MPA Marker and ULPDU Length field mismatch"),
    LLP_INVALID_REQUEST_REPLY(TerminateLayer.LLP, 0x0, 0x04, "Invalid MPA Request/Reply Frame"),
    LLP_LOCAL_CATASTROPHIC(TerminateLayer.LLP, 0x0, 0x05, "Local Catastrophic Error"),
    LLP_INSUFFICIENT_IRD(TerminateLayer.LLP, 0x0, 0x06, "Insufficient IRD resources"),
    LLP_NO_MATCHING_RTR(TerminateLayer.LLP, 0x0, 0x07, "No matching RTR model");

    private static final TerminateError[] BY_KEY = new TerminateError[3 << 12];

    static {
        for (TerminateError error : values()) {
            BY_KEY[key(error.layer.code(), error.errorType, error.errorCode)] = error;
        }
    }

    private final TerminateLayer layer;
    private final int errorType;
    private final int errorCode;
    private final String rfcName;

    TerminateError(TerminateLayer layer, int errorType, int errorCode, String rfcName) {
        this.layer = layer;
        this.errorType = errorType;
        this.errorCode = errorCode;
        this.rfcName = rfcName;
    }

    /** The layer that detected the error. */
    public TerminateLayer layer() {
        return layer;
    }

    /** The 4-bit error type (EType). */
    public int errorType() {
        return errorType;
    }

    /** The 8-bit error code. */
    public int errorCode() {
        return errorCode;
    }

    /** The error's name in its RFC. */
    public String rfcName() {
        return rfcName;
    }

    /** The name of this error's error type in its RFC. */
    public String errorTypeName() {
        return errorTypeName(layer.code(), errorType);
    }

    /** "Layer / error type / error name", as logs and the CLI print it. */
    public String describe() {
        return layer + " / " + errorTypeName() + " / " + rfcName;
    }

    /** The error for a wire triple, or {@code null} when the RFCs define none. O(1). */
    public static TerminateError valueOf(int layer, int errorType, int errorCode) {
        if (layer < 0 || layer > 2 || errorType < 0 || errorType > 0xF || errorCode < 0 || errorCode > 0xFF) {
            return null;
        }
        return BY_KEY[key(layer, errorType, errorCode)];
    }

    /** The RFC name of an error type, or {@code "Unknown"}. */
    public static String errorTypeName(int layer, int errorType) {
        switch (layer) {
            case 0:
                switch (errorType) {
                    case 0: return "Local Catastrophic Error";
                    case 1: return "Remote Protection Error";
                    case 2: return "Remote Operation Error";
                    default: return "Unknown";
                }
            case 1:
                switch (errorType) {
                    case 0: return "Local Catastrophic Error";
                    case 1: return "Tagged Buffer Error";
                    case 2: return "Untagged Buffer Error";
                    case 3: return "Reserved for the use by the LLP";
                    default: return "Unknown";
                }
            case 2:
                return errorType == 0 ? "MPA Error" : "Unknown";
            default:
                return "Unknown";
        }
    }

    private static int key(int layer, int errorType, int errorCode) {
        return layer << 12 | errorType << 8 | errorCode;
    }
}
