package org.jiwarp.capture.pcap;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Lifts the TCP segment out of a captured frame, through its link, IPv4 or IPv6 and TCP headers.
 *
 * <pre>
 *   ETHERNET    dst(6) src(6) [0x8100|0x88a8 TCI(2)]{0,2} EtherType(2) | IP ...
 *   LINUX_SLL   type(2) ARPHRD(2) addrlen(2) addr(8) protocol(2)       | IP ...
 *   LINUX_SLL2  protocol(2) rsvd(2) ifindex(4) ARPHRD(2) type(1) addrlen(1) addr(8) | IP ...
 *   RAW         IP ... (version nibble 4 or 6)
 *
 *   IPv4 (RFC 791)  ver/IHL(1) TOS(1) total length(2) id(2) flags/frag offset(2) TTL(1) proto(1) ...
 *   IPv6 (RFC 8200) ver/class/flow(4) payload length(2) next header(1) hop limit(1) src(16) dst(16)
 * </pre>
 *
 * <p>The parser is total: anything that is not a whole-datagram TCP segment gives {@code null}
 * (ARP, UDP, ICMP, IP fragments of either version, IPv6 ESP, headers cut short by the snap length,
 * nonsense lengths), never an exception. It checks no checksums: captures taken on the sending
 * host routinely carry unfilled, offloaded checksums.
 *
 * <p>The payload ends at the IP datagram's end, so Ethernet padding of short frames is not taken
 * for data, and at the captured bytes, so a frame cut at the snap length yields what was captured.
 * An IPv4 total length or IPv6 payload length of 0 (segmentation offload, jumbograms) is read as
 * "up to the end of the frame", as Wireshark does.
 */
public final class PacketParser {

    /** EtherType of IPv4. */
    public static final int ETHERTYPE_IPV4 = 0x0800;
    /** EtherType of IPv6. */
    public static final int ETHERTYPE_IPV6 = 0x86DD;
    /** EtherType of an IEEE 802.1Q VLAN tag. */
    public static final int ETHERTYPE_VLAN = 0x8100;
    /** EtherType of an IEEE 802.1ad service tag (QinQ outer tag). */
    public static final int ETHERTYPE_QINQ = 0x88A8;
    /** Pre-standard QinQ outer tag, still seen in the wild. */
    private static final int ETHERTYPE_QINQ_LEGACY = 0x9100;
    /** IP protocol number of TCP. */
    public static final int PROTOCOL_TCP = 6;

    private static final int ETHERNET_HEADER_LENGTH = 14;
    private static final int ETHERTYPE_OFFSET = 12;
    private static final int VLAN_TAG_LENGTH = 4;
    private static final int MAX_VLAN_TAGS = 2;
    private static final int SLL_HEADER_LENGTH = 16;
    private static final int SLL_PROTOCOL_OFFSET = 14;
    private static final int SLL2_HEADER_LENGTH = 20;
    private static final int SLL2_PROTOCOL_OFFSET = 0;

    private static final int IPV4_MIN_HEADER_LENGTH = 20;
    private static final int IPV4_TOTAL_LENGTH_OFFSET = 2;
    private static final int IPV4_FRAGMENT_OFFSET = 6;
    private static final int IPV4_PROTOCOL_OFFSET = 9;
    private static final int IPV4_SOURCE_OFFSET = 12;
    private static final int IPV4_DESTINATION_OFFSET = 16;
    /** The MF bit and the 13-bit fragment offset of the flags/fragment-offset field. */
    private static final int IPV4_MF_AND_OFFSET_MASK = 0x3FFF;

    private static final int IPV6_HEADER_LENGTH = 40;
    private static final int IPV6_PAYLOAD_LENGTH_OFFSET = 4;
    private static final int IPV6_NEXT_HEADER_OFFSET = 6;
    private static final int IPV6_SOURCE_OFFSET = 8;
    private static final int IPV6_DESTINATION_OFFSET = 24;
    private static final int IPV6_HOP_BY_HOP = 0;
    private static final int IPV6_ROUTING = 43;
    private static final int IPV6_FRAGMENT = 44;
    private static final int IPV6_AUTHENTICATION = 51;
    private static final int IPV6_DESTINATION_OPTIONS = 60;
    /** Bound on the extension-header walk, so a crafted chain cannot loop for long. */
    private static final int IPV6_MAX_EXTENSION_HEADERS = 16;

    private static final int TCP_MIN_HEADER_LENGTH = 20;
    private static final int TCP_SOURCE_PORT_OFFSET = 0;
    private static final int TCP_DESTINATION_PORT_OFFSET = 2;
    private static final int TCP_SEQUENCE_OFFSET = 4;
    private static final int TCP_ACKNOWLEDGMENT_OFFSET = 8;
    private static final int TCP_DATA_OFFSET_OFFSET = 12;
    private static final int TCP_FLAGS_OFFSET = 13;

    private PacketParser() {
    }

    /**
     * The TCP segment carried by {@code record}, or {@code null} when it carries none.
     *
     * @param linkType the link type of the file the record came from
     */
    public static TcpSegment parse(PcapRecord record, LinkType linkType) {
        byte[] frame = record.data();
        int end = frame.length;
        switch (linkType) {
            case ETHERNET:
                return ethernet(record, frame, end);
            case LINUX_SLL:
                if (end < SLL_HEADER_LENGTH) {
                    return null;
                }
                return byEtherType(record, frame, uint16(frame, SLL_PROTOCOL_OFFSET), SLL_HEADER_LENGTH, end, 0);
            case LINUX_SLL2:
                if (end < SLL2_HEADER_LENGTH) {
                    return null;
                }
                return byEtherType(record, frame, uint16(frame, SLL2_PROTOCOL_OFFSET), SLL2_HEADER_LENGTH, end, 0);
            case RAW:
                return ip(record, frame, 0, end);
            default:
                return null;
        }
    }

    /**
     * The source and destination of the outermost IPv4 or IPv6 header of {@code record}, whatever it
     * carries (TCP or not), or {@code null} when it has none: what tshark shows as {@code ip.src}
     * and {@code ip.dst} (or the {@code ipv6} ones).
     */
    public static InetAddress[] ipAddresses(PcapRecord record, LinkType linkType) {
        byte[] frame = record.data();
        int offset;
        int etherType;
        switch (linkType) {
            case ETHERNET -> {
                offset = ETHERNET_HEADER_LENGTH;
                etherType = frame.length < offset ? -1 : uint16(frame, ETHERTYPE_OFFSET);
            }
            case LINUX_SLL -> {
                offset = SLL_HEADER_LENGTH;
                etherType = frame.length < offset ? -1 : uint16(frame, SLL_PROTOCOL_OFFSET);
            }
            case LINUX_SLL2 -> {
                offset = SLL2_HEADER_LENGTH;
                etherType = frame.length < offset ? -1 : uint16(frame, SLL2_PROTOCOL_OFFSET);
            }
            default -> {
                offset = 0;
                int version = frame.length == 0 ? 0 : (frame[0] & 0xF0) >>> 4;
                etherType = version == 4 ? ETHERTYPE_IPV4 : version == 6 ? ETHERTYPE_IPV6 : -1;
            }
        }
        for (int tags = 0; tags < MAX_VLAN_TAGS && (etherType == ETHERTYPE_VLAN || etherType == ETHERTYPE_QINQ
                || etherType == ETHERTYPE_QINQ_LEGACY) && frame.length - offset >= VLAN_TAG_LENGTH; tags++) {
            etherType = uint16(frame, offset + 2);
            offset += VLAN_TAG_LENGTH;
        }
        if (etherType == ETHERTYPE_IPV4 && frame.length - offset >= IPV4_MIN_HEADER_LENGTH
                && (frame[offset] & 0xF0) == 0x40) {
            return new InetAddress[] {ipv4Address(frame, offset + IPV4_SOURCE_OFFSET),
                    ipv4Address(frame, offset + IPV4_DESTINATION_OFFSET)};
        }
        if (etherType == ETHERTYPE_IPV6 && frame.length - offset >= IPV6_HEADER_LENGTH
                && (frame[offset] & 0xF0) == 0x60) {
            return new InetAddress[] {ipv6Address(frame, offset + IPV6_SOURCE_OFFSET),
                    ipv6Address(frame, offset + IPV6_DESTINATION_OFFSET)};
        }
        return null;
    }

    private static TcpSegment ethernet(PcapRecord record, byte[] frame, int end) {
        if (end < ETHERNET_HEADER_LENGTH) {
            return null;
        }
        return byEtherType(record, frame, uint16(frame, ETHERTYPE_OFFSET), ETHERNET_HEADER_LENGTH, end, 0);
    }

    /** Dispatches on an EtherType whose two bytes end just before {@code offset}. */
    private static TcpSegment byEtherType(PcapRecord record, byte[] frame, int etherType, int offset, int end,
                                          int tags) {
        switch (etherType) {
            case ETHERTYPE_IPV4:
                return ipv4(record, frame, offset, end);
            case ETHERTYPE_IPV6:
                return ipv6(record, frame, offset, end);
            case ETHERTYPE_VLAN:
            case ETHERTYPE_QINQ:
            case ETHERTYPE_QINQ_LEGACY:
                // tag: TCI(2) then the next EtherType(2)
                if (tags == MAX_VLAN_TAGS || end - offset < VLAN_TAG_LENGTH) {
                    return null;
                }
                return byEtherType(record, frame, uint16(frame, offset + 2), offset + VLAN_TAG_LENGTH, end, tags + 1);
            default:
                return null;
        }
    }

    private static TcpSegment ip(PcapRecord record, byte[] frame, int offset, int end) {
        if (offset >= end) {
            return null;
        }
        int version = (frame[offset] & 0xF0) >>> 4;
        if (version == 4) {
            return ipv4(record, frame, offset, end);
        }
        if (version == 6) {
            return ipv6(record, frame, offset, end);
        }
        return null;
    }

    private static TcpSegment ipv4(PcapRecord record, byte[] frame, int offset, int end) {
        if (end - offset < IPV4_MIN_HEADER_LENGTH || (frame[offset] & 0xF0) != 0x40) {
            return null;
        }
        int headerLength = (frame[offset] & 0x0F) * 4;
        if (headerLength < IPV4_MIN_HEADER_LENGTH || headerLength > end - offset) {
            return null;
        }
        int totalLength = uint16(frame, offset + IPV4_TOTAL_LENGTH_OFFSET);
        int datagramEnd;
        if (totalLength == 0) {
            datagramEnd = end; // TSO: length left for the NIC to fill in
        } else if (totalLength < headerLength) {
            return null;
        } else {
            datagramEnd = Math.min(end, offset + totalLength);
        }
        if ((uint16(frame, offset + IPV4_FRAGMENT_OFFSET) & IPV4_MF_AND_OFFSET_MASK) != 0) {
            return null; // a fragment (first or later): this parser does not reassemble IP
        }
        if ((frame[offset + IPV4_PROTOCOL_OFFSET] & 0xFF) != PROTOCOL_TCP) {
            return null;
        }
        InetAddress source = ipv4Address(frame, offset + IPV4_SOURCE_OFFSET);
        InetAddress destination = ipv4Address(frame, offset + IPV4_DESTINATION_OFFSET);
        return tcp(record, frame, offset + headerLength, datagramEnd, source, destination);
    }

    private static TcpSegment ipv6(PcapRecord record, byte[] frame, int offset, int end) {
        if (end - offset < IPV6_HEADER_LENGTH || (frame[offset] & 0xF0) != 0x60) {
            return null;
        }
        int payloadLength = uint16(frame, offset + IPV6_PAYLOAD_LENGTH_OFFSET);
        int datagramEnd = payloadLength == 0 ? end : Math.min(end, offset + IPV6_HEADER_LENGTH + payloadLength);
        int nextHeader = frame[offset + IPV6_NEXT_HEADER_OFFSET] & 0xFF;
        int position = offset + IPV6_HEADER_LENGTH;
        for (int i = 0; nextHeader != PROTOCOL_TCP; i++) {
            if (i == IPV6_MAX_EXTENSION_HEADERS || datagramEnd - position < 8) {
                return null;
            }
            int length;
            switch (nextHeader) {
                case IPV6_HOP_BY_HOP:
                case IPV6_ROUTING:
                case IPV6_DESTINATION_OPTIONS:
                    // RFC 8200 section 4: Hdr Ext Len in 8-octet units, not counting the first 8
                    length = ((frame[position + 1] & 0xFF) + 1) * 8;
                    break;
                case IPV6_AUTHENTICATION:
                    // RFC 4302 section 2.2: Payload Len in 4-octet units, minus 2
                    length = ((frame[position + 1] & 0xFF) + 2) * 4;
                    break;
                case IPV6_FRAGMENT:
                default:
                    return null; // fragments, ESP, no-next-header, other protocols
            }
            nextHeader = frame[position] & 0xFF;
            position += length;
        }
        if (position > datagramEnd) {
            return null;
        }
        InetAddress source = ipv6Address(frame, offset + IPV6_SOURCE_OFFSET);
        InetAddress destination = ipv6Address(frame, offset + IPV6_DESTINATION_OFFSET);
        return tcp(record, frame, position, datagramEnd, source, destination);
    }

    private static TcpSegment tcp(PcapRecord record, byte[] frame, int offset, int end,
                                  InetAddress source, InetAddress destination) {
        if (end - offset < TCP_MIN_HEADER_LENGTH) {
            return null;
        }
        int headerLength = ((frame[offset + TCP_DATA_OFFSET_OFFSET] & 0xF0) >>> 4) * 4;
        if (headerLength < TCP_MIN_HEADER_LENGTH || headerLength > end - offset) {
            return null;
        }
        int payloadStart = offset + headerLength;
        byte[] payload = new byte[end - payloadStart];
        System.arraycopy(frame, payloadStart, payload, 0, payload.length);
        return new TcpSegment(record.frameNumber(), record.timestampNanos(),
                source, uint16(frame, offset + TCP_SOURCE_PORT_OFFSET),
                destination, uint16(frame, offset + TCP_DESTINATION_PORT_OFFSET),
                uint32(frame, offset + TCP_SEQUENCE_OFFSET), uint32(frame, offset + TCP_ACKNOWLEDGMENT_OFFSET),
                frame[offset + TCP_FLAGS_OFFSET] & 0xFF, payload, mssOption(frame, offset + TCP_MIN_HEADER_LENGTH,
                        offset + headerLength));
    }

    /** The value of the MSS option among the TCP options in {@code frame[from, to)}, or 0 (RFC 9293 section 3.2). */
    private static int mssOption(byte[] frame, int from, int to) {
        int at = from;
        while (at < to) {
            int kind = frame[at] & 0xFF;
            if (kind == 0) {
                return 0; // end of option list
            }
            if (kind == 1) {
                at++; // no-operation
                continue;
            }
            if (at + 1 >= to) {
                return 0;
            }
            int length = frame[at + 1] & 0xFF;
            if (length < 2 || at + length > to) {
                return 0;
            }
            if (kind == TcpSegment.MSS_OPTION_KIND && length == 4) {
                return uint16(frame, at + 2);
            }
            at += length;
        }
        return 0;
    }

    private static InetAddress ipv4Address(byte[] frame, int offset) {
        byte[] address = new byte[4];
        System.arraycopy(frame, offset, address, 0, 4);
        try {
            return Inet4Address.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // only for a wrong array length
        }
    }

    private static InetAddress ipv6Address(byte[] frame, int offset) {
        byte[] address = new byte[16];
        System.arraycopy(frame, offset, address, 0, 16);
        try {
            // not InetAddress.getByAddress: that turns ::ffff:a.b.c.d into an Inet4Address
            return Inet6Address.getByAddress(null, address, -1);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // only for a wrong array length
        }
    }

    static int uint16(byte[] b, int offset) {
        return (b[offset] & 0xFF) << 8 | (b[offset + 1] & 0xFF);
    }

    static long uint32(byte[] b, int offset) {
        return ((long) (b[offset] & 0xFF) << 24 | (b[offset + 1] & 0xFF) << 16
                | (b[offset + 2] & 0xFF) << 8 | (b[offset + 3] & 0xFF)) & 0xFFFF_FFFFL;
    }
}
