package org.jiwarp.capture.pcap;

/**
 * The link-layer header types this package decodes, by their tcpdump.org {@code LINKTYPE_} code
 * (the {@code network} field of the pcap global header).
 *
 * <pre>
 *   code  LINKTYPE_           first bytes of every record
 *   ----  ------------------  ------------------------------------------------
 *      1  ETHERNET            dst MAC(6) src MAC(6) EtherType(2) [802.1Q tags]
 *    101  RAW                 IPv4 or IPv6 header; the version nibble decides
 *     12  (RAW on OpenBSD)    as RAW                          -&gt; {@link #RAW}
 *    228  IPV4                as RAW, always IPv4             -&gt; {@link #RAW}
 *    229  IPV6                as RAW, always IPv6             -&gt; {@link #RAW}
 *    113  LINUX_SLL           16-byte cooked header, protocol at offset 14
 *    276  LINUX_SLL2          20-byte cooked header, protocol at offset 0
 * </pre>
 *
 * <p>Codes 12, 228 and 229 are accepted on reading and folded onto {@link #RAW}: the parser takes
 * the IP version from the first nibble of the packet, so the distinction carries no information
 * it needs. {@link PcapFile#linkTypeCode()} keeps the code the file actually carried.
 */
public enum LinkType {

    /** {@code LINKTYPE_ETHERNET}: IEEE 802.3 Ethernet, optionally with 802.1Q / 802.1ad tags. */
    ETHERNET(1),
    /** {@code LINKTYPE_RAW}: the packet begins with an IPv4 or IPv6 header. */
    RAW(101),
    /** {@code LINKTYPE_LINUX_SLL}: Linux "cooked" capture, version 1 (tcpdump {@code -i any}). */
    LINUX_SLL(113),
    /** {@code LINKTYPE_LINUX_SLL2}: Linux "cooked" capture, version 2 (newer tcpdump {@code -i any}). */
    LINUX_SLL2(276);

    /** {@code LINKTYPE_RAW} as some BSDs number it ({@code DLT_RAW} = 12 on OpenBSD). */
    static final int RAW_BSD = 12;
    /** {@code LINKTYPE_IPV4}: raw IPv4. */
    static final int IPV4 = 228;
    /** {@code LINKTYPE_IPV6}: raw IPv6. */
    static final int IPV6 = 229;

    private final int code;

    LinkType(int code) {
        this.code = code;
    }

    /** The {@code LINKTYPE_} code written into a pcap global header for this type. */
    public int code() {
        return code;
    }

    /**
     * The link type for a {@code LINKTYPE_} code.
     *
     * @throws PcapFormatException when the code is not one this package decodes
     */
    public static LinkType fromCode(int code) throws PcapFormatException {
        switch (code) {
            case 1:
                return ETHERNET;
            case 101:
            case RAW_BSD:
            case IPV4:
            case IPV6:
                return RAW;
            case 113:
                return LINUX_SLL;
            case 276:
                return LINUX_SLL2;
            default:
                throw new PcapFormatException("unsupported link type " + code
                        + " (supported: 1 Ethernet, 101/12/228/229 raw IP, 113 Linux cooked, 276 Linux cooked v2)");
        }
    }
}
