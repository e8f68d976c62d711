package org.jiwarp.wire.rdmap;

/**
 * The Layer nibble of a Terminate control word (RFC 5040 section 4.8): which layer detected the
 * error.
 */
public enum TerminateLayer {
    /** 0x0: the RDMAP layer (RFC 5040 section 7.1). */
    RDMAP(0x0),
    /** 0x1: the DDP layer (RFC 5041 section 7.2). */
    DDP(0x1),
    /** 0x2: the lower layer protocol, MPA over TCP (RFC 5044 section 8, RFC 6581 section 3). */
    LLP(0x2);

    private static final TerminateLayer[] BY_CODE = new TerminateLayer[16];

    static {
        for (TerminateLayer layer : values()) {
            BY_CODE[layer.code] = layer;
        }
    }

    private final int code;

    TerminateLayer(int code) {
        this.code = code;
    }

    /** The 4-bit wire value. */
    public int code() {
        return code;
    }

    /** The layer for a 4-bit wire value, or {@code null} when the value names no layer. O(1). */
    public static TerminateLayer valueOf(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
