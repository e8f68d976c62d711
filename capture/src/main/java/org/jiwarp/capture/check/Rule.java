package org.jiwarp.capture.check;

/** The rules {@link CaptureChecker} applies, each with its name in reports and the RFC section it checks. */
public enum Rule {

    MPA_REVISION("mpa-revision", "RFC 5044 section 7.1, RFC 6581 section 3"),
    MPA_RESERVED("mpa-reserved", "RFC 5044 section 7.1"),
    MPA_PRIVATE_DATA("mpa-private-data", "RFC 5044 section 7.1"),
    MPA_ENHANCED("mpa-enhanced", "RFC 6581 section 3"),
    MPA_RTR("mpa-rtr", "RFC 6581 section 3"),
    MPA_CRC("mpa-crc", "RFC 5044 section 6"),
    MPA_MARKERS("mpa-markers", "RFC 5044 section 4.3"),
    MPA_PAD("mpa-pad", "RFC 5044 section 4.1"),
    MPA_MULPDU("mpa-mulpdu", "RFC 5044 section 5.2"),
    DDP_VERSION("ddp-version", "RFC 5041 section 4.1"),
    DDP_RESERVED("ddp-reserved", "RFC 5041 section 4.2"),
    DDP_QUEUE("ddp-queue", "RFC 5041 section 4.3, RFC 5040 section 5"),
    DDP_MSN("ddp-msn", "RFC 5041 section 5.3"),
    DDP_MO("ddp-mo", "RFC 5041 section 5.3"),
    DDP_LAST("ddp-last", "RFC 5041 section 5.3"),
    DDP_TAGGED_BOUNDS("ddp-tagged-bounds", "RFC 5041 section 7.1"),
    RDMAP_VERSION("rdmap-version", "RFC 5040 section 4.2"),
    RDMAP_OPCODE("rdmap-opcode", "RFC 5040 section 4.2"),
    RDMAP_INVALIDATE_STAG("rdmap-invalidate-stag", "RFC 5040 section 4.1"),
    RDMAP_READ_RESPONSE("rdmap-read-response", "RFC 5040 section 4.4"),
    RDMAP_IRD("rdmap-ird", "RFC 6581 section 3, RFC 5040 section 6.1"),
    RDMAP_AFTER_TERMINATE("rdmap-after-terminate", "RFC 5040 section 5.6"),
    RDMAP_TERMINATE("rdmap-terminate", "RFC 5040 section 4.8"),
    RPCRDMA_CHUNK("rpcrdma-chunk", "RFC 8166 section 3.4"),
    RPCRDMA_INVALIDATE("rpcrdma-invalidate", "RFC 8797 section 4.1, RFC 8166 section 3.4"),
    RPCRDMA_CREDITS("rpcrdma-credits", "RFC 8166 section 3.3.1");

    private final String id;
    private final String section;

    Rule(String id, String section) {
        this.id = id;
        this.section = section;
    }

    /** The rule's name in reports, for example {@code ddp-msn}. */
    public String id() {
        return id;
    }

    /** The RFC section(s) the rule checks. */
    public String section() {
        return section;
    }
}
