package org.jiwarp.capture.decode;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PacketParser;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.TcpConversation;
import org.jiwarp.capture.pcap.TcpConversations;
import org.jiwarp.capture.pcap.TcpDirection;
import org.jiwarp.capture.pcap.TcpSegment;

/**
 * The common non-iWARP fields of every frame that users pair with the iWARP ones in
 * {@code tshark -T fields -e ...}, formatted as tshark 4.0 formats them:
 *
 * <pre>
 *   frame.number         1, 2, 3, ...
 *   frame.time_relative  seconds since the first frame, 9 decimals      0.000018000
 *   frame.time_epoch     seconds since 1970, 9 decimals                   1206634986.234568000
 *   ip.src, ip.dst       dotted quad (TCP frames)                         10.0.0.19
 *   ipv6.src, ipv6.dst   RFC 5952 text (TCP frames)                       fd00::1
 *   tcp.srcport, tcp.dstport, tcp.stream   decimal
 *   tcp.seq              relative: the SYN is 0; without a captured SYN the first segment each
 *                        way is 1 (tshark's default "relative sequence numbers")
 * </pre>
 *
 * <p>IP fields come from the outermost IP header of any frame; TCP fields from frames carrying TCP.
 */
public final class FrameFields {

    /** The non-iWARP field names this class fills in. */
    public static final Set<String> NAMES = Set.of("frame.number", "frame.time_relative", "frame.time_epoch",
            "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport", "tcp.stream", "tcp.seq");

    /** Every iWARP field name the decoder writes (Wireshark's names). */
    public static final Set<String> IWARP_NAMES = Set.of("iwarp_ddp.dv", "iwarp_ddp.last_flag", "iwarp_ddp.mo",
            "iwarp_ddp.msn", "iwarp_ddp.qn", "iwarp_ddp.rsvd", "iwarp_ddp.rsvdulp", "iwarp_ddp.stag",
            "iwarp_ddp.tagged_flag", "iwarp_ddp.tagged_offset", "iwarp_mpa.crc", "iwarp_mpa.crc_check",
            "iwarp_mpa.crc_flag", "iwarp_mpa.key.rep", "iwarp_mpa.key.req", "iwarp_mpa.marker_flag",
            "iwarp_mpa.marker_fpduptr", "iwarp_mpa.marker_res", "iwarp_mpa.pad", "iwarp_mpa.pdlength",
            "iwarp_mpa.privatedata", "iwarp_mpa.rej_flag", "iwarp_mpa.res", "iwarp_mpa.rev",
            "iwarp_mpa.ulpdulength", "iwarp_rdma.atomic.add_data", "iwarp_rdma.atomic.add_mask",
            "iwarp_rdma.atomic.compare_data", "iwarp_rdma.atomic.compare_mask", "iwarp_rdma.atomic.opcode",
            "iwarp_rdma.atomic.original_remote_data_value", "iwarp_rdma.atomic.original_request_identifier",
            "iwarp_rdma.atomic.remote_stag", "iwarp_rdma.atomic.remote_tagged_offset",
            "iwarp_rdma.atomic.request_identifier", "iwarp_rdma.atomic.reserved", "iwarp_rdma.atomic.swap_data",
            "iwarp_rdma.atomic.swap_mask", "iwarp_rdma.hdrct_d", "iwarp_rdma.hdrct_r", "iwarp_rdma.inval_stag",
            "iwarp_rdma.opcode", "iwarp_rdma.rdmardsz", "iwarp_rdma.reserved", "iwarp_rdma.rsv",
            "iwarp_rdma.sinkstag", "iwarp_rdma.sinkto", "iwarp_rdma.srcstag", "iwarp_rdma.srcto",
            "iwarp_rdma.term_ddp_h", "iwarp_rdma.term_ddp_seg_len", "iwarp_rdma.term_errcode",
            "iwarp_rdma.term_errcode_ddp_tagged", "iwarp_rdma.term_errcode_ddp_untagged",
            "iwarp_rdma.term_errcode_llp", "iwarp_rdma.term_errcode_rdma", "iwarp_rdma.term_etype",
            "iwarp_rdma.term_etype_ddp", "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_etype_rdma",
            "iwarp_rdma.term_hdrct_m", "iwarp_rdma.term_layer", "iwarp_rdma.term_rdma_h", "iwarp_rdma.term_rsvd",
            "iwarp_rdma.version");

    private static final long SEQUENCE_MASK = 0xFFFF_FFFFL;

    private FrameFields() {
    }

    /** {@code true} for a field {@code -e} accepts. */
    public static boolean known(String name) {
        return NAMES.contains(name) || IWARP_NAMES.contains(name) || RpcRdmaFields.NAMES.contains(name);
    }

    /**
     * tshark's answer to unknown {@code -e} fields, after its "tshark: " (it exits with status 1):
     * the names one a line, tab-indented, in the reverse of the order given, as tshark 4.0 lists them.
     */
    public static String unknownFieldsMessage(List<String> unknown) {
        StringBuilder message = new StringBuilder("Some fields aren't valid:");
        for (int i = unknown.size() - 1; i >= 0; i--) {
            message.append("\n\t").append(unknown.get(i));
        }
        return message.toString();
    }

    /** The names among {@code names} that {@code -e} does not know, in the order given, once each. */
    public static List<String> unknown(List<String> names) {
        Set<String> seen = new TreeSet<>();
        return names.stream().filter(n -> !known(n) && seen.add(n)).toList();
    }

    /** The fields of every frame, by frame number. */
    public static Map<Integer, Map<String, String>> of(PcapFile file) {
        Map<Integer, Map<String, String>> frames = new HashMap<>();
        TcpConversations conversations = new TcpConversations();
        long first = file.records().isEmpty() ? 0 : file.records().get(0).timestampNanos();
        for (PcapRecord record : file.records()) {
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("frame.number", Integer.toString(record.frameNumber()));
            fields.put("frame.time_relative", seconds(record.timestampNanos() - first));
            fields.put("frame.time_epoch", seconds(record.timestampNanos()));
            frames.put(record.frameNumber(), fields);
            LinkType linkType = file.linkType(record);
            InetAddress[] ip = linkType == null ? null : PacketParser.ipAddresses(record, linkType);
            if (ip == null) {
                continue;
            }
            String family = ip[0] instanceof Inet6Address ? "ipv6" : "ip";
            fields.put(family + ".src", address(ip[0]));
            fields.put(family + ".dst", address(ip[1]));
            TcpSegment segment = PacketParser.parse(record, linkType);
            if (segment == null) {
                continue;
            }
            fields.put("tcp.srcport", Integer.toString(segment.sourcePort()));
            fields.put("tcp.dstport", Integer.toString(segment.destinationPort()));
            conversations.add(segment);
        }
        for (TcpConversation conversation : conversations.conversations()) {
            for (TcpDirection direction : List.of(conversation.clientToServer(), conversation.serverToClient())) {
                List<TcpSegment> segments = direction.segments();
                if (segments.isEmpty()) {
                    continue;
                }
                long base = direction.initialSequence() >= 0 ? direction.initialSequence()
                        : (segments.get(0).sequence() - 1) & SEQUENCE_MASK;
                for (TcpSegment segment : segments) {
                    Map<String, String> fields = frames.get(segment.frameNumber());
                    fields.put("tcp.stream", Integer.toString(conversation.index()));
                    fields.put("tcp.seq", Long.toString((segment.sequence() - base) & SEQUENCE_MASK));
                }
            }
        }
        return frames;
    }

    /** Nanoseconds as tshark prints a time in seconds: 9 decimals. */
    static String seconds(long nanos) {
        String sign = nanos < 0 ? "-" : "";
        long magnitude = Math.abs(nanos);
        return String.format("%s%d.%09d", sign, magnitude / 1_000_000_000L, magnitude % 1_000_000_000L);
    }

    /** IPv4 dotted; IPv6 in RFC 5952 section 4 text (lower case, the longest run of 2+ zero groups as ::). */
    static String address(InetAddress address) {
        if (address instanceof Inet4Address) {
            return address.getHostAddress();
        }
        byte[] b = address.getAddress();
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = (b[2 * i] & 0xFF) << 8 | (b[2 * i + 1] & 0xFF);
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }
}
