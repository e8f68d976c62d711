package org.jiwarp.conform;

/** The groups {@code --group} selects, by the layer a case abuses. */
public enum Group {
    /** MPA connection setup: Request and Reply frames (RFC 5044 section 7.1, RFC 6581). */
    MPA,
    /** DDP headers, queues, MSN and MO, tagged buffers (RFC 5041). */
    DDP,
    /** RDMAP headers, opcodes, Read Requests and Read Responses (RFC 5040). */
    RDMAP,
    /** MPA CRCs, pad and FPDU framing (RFC 5044 sections 4 and 6). */
    CRC,
    /** FPDUs and DDP messages cut at every offset (RFC 5044 section 4, RFC 5041 section 5). */
    SEGMENTATION,
    /** One bit flipped in one header field under CRC: the CRC error, not the field's (RFC 5044 sections 6, 8). */
    CORRUPTION,
    /**
     * Inputs that crashed real stacks: invalid headers as a connection's first FPDU (CVE-2026-23242),
     * Terminates whose attached headers lie about their length, broken MPA setups in sequence.
     */
    CRASH,
    /**
     * Peers that hold the target's resources: Read Responses never read, a bad frame sent while not
     * reading, idle connections, an MPA Request one octet a second (RFC 5044 section 7.1.2, RFC 5040
     * section 5.2.1; where the RFCs set no bound, the resource rule every trusted stack keeps).
     */
    EXHAUSTION,
    /**
     * The buffer perftest {@code -R} advertises (RFC 5040 section 7.2, RFC 5041 section 8.3.1): its
     * bounds, TO wrap, access rights, Read sources, Writes and Reads of its whole length.
     */
    PERFTEST
}
