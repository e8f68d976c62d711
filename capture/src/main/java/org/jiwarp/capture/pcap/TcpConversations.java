package org.jiwarp.capture.pcap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups the TCP segments of a capture into connections, numbered 0, 1, 2, ... in order of first
 * appearance, as Wireshark numbers {@code tcp.stream}.
 *
 * <p>Segments of both directions of one 4-tuple (address and port at either end) belong to one
 * conversation. A SYN without ACK on a 4-tuple that already has a conversation starts a new one
 * (RFC 9293 section 3.5, a new incarnation of the connection) when that conversation is over (RST
 * seen either way, or FIN seen both ways), when the SYN's sender already sent a SYN with another
 * initial sequence number, or when the SYN's sender already sent data without a SYN; otherwise
 * it is a retransmitted SYN of the current conversation.
 *
 * <p>Feed segments in capture order. Not thread-safe.
 */
public final class TcpConversations {

    /** Told of each segment once its conversation is known, when segments are not kept. */
    public interface SegmentListener {
        void segment(TcpConversation conversation, TcpDirection direction, TcpSegment segment);
    }

    private final Map<Key, TcpConversation> current = new HashMap<>();
    private final List<TcpConversation> conversations = new ArrayList<>();
    private final SegmentListener listener;

    /** An empty set of conversations. */
    public TcpConversations() {
        this.listener = null;
    }

    /**
     * An empty set of conversations that keeps no segments: each goes to {@code listener} instead
     * (for a {@link StreamReassembler}), so memory does not grow with the capture. The directions'
     * segments and chunks then stay empty; their SYN, MSS, FIN and RST are kept.
     */
    public TcpConversations(SegmentListener listener) {
        this.listener = java.util.Objects.requireNonNull(listener, "listener");
    }

    /** The conversations of every TCP segment in {@code file}; other records are skipped. */
    public static TcpConversations of(PcapFile file) {
        TcpConversations result = new TcpConversations();
        for (PcapRecord record : file.records()) {
            LinkType linkType = file.linkType(record);
            if (linkType == null) {
                continue; // a pcapng interface of a link type this package does not decode
            }
            TcpSegment segment = PacketParser.parse(record, linkType);
            if (segment != null) {
                result.add(segment);
            }
        }
        return result;
    }

    /** Adds the next captured segment. */
    public void add(TcpSegment segment) {
        Key key = Key.of(segment);
        TcpConversation conversation = current.get(key);
        if (conversation == null || startsNewConversation(conversation, segment)) {
            conversation = new TcpConversation(conversations.size(), segment);
            conversations.add(conversation);
            current.put(key, conversation);
        }
        if (listener == null) {
            conversation.add(segment);
        } else {
            listener.segment(conversation, conversation.note(segment), segment);
        }
    }

    /** The conversations found so far, by index. */
    public List<TcpConversation> conversations() {
        return Collections.unmodifiableList(conversations);
    }

    private static boolean startsNewConversation(TcpConversation conversation, TcpSegment segment) {
        if (!segment.syn() || segment.ack()) {
            return false;
        }
        if (conversation.closed()) {
            return true;
        }
        TcpDirection direction = conversation.directionFrom(segment);
        long isn = direction.initialSequence();
        if (isn >= 0) {
            return isn != segment.sequence();
        }
        return direction.payloadSeen();
    }

    /** A 4-tuple with its two endpoints in a fixed order, so that both directions meet. */
    private record Key(byte[] lowAddress, int lowPort, byte[] highAddress, int highPort) {

        static Key of(TcpSegment segment) {
            byte[] source = segment.source().getAddress();
            byte[] destination = segment.destination().getAddress();
            int order = compare(source, segment.sourcePort(), destination, segment.destinationPort());
            return order <= 0
                    ? new Key(source, segment.sourcePort(), destination, segment.destinationPort())
                    : new Key(destination, segment.destinationPort(), source, segment.sourcePort());
        }

        private static int compare(byte[] a, int aPort, byte[] b, int bPort) {
            if (a.length != b.length) {
                return Integer.compare(a.length, b.length);
            }
            int c = Arrays.compareUnsigned(a, b);
            return c != 0 ? c : Integer.compare(aPort, bPort);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key other && lowPort == other.lowPort && highPort == other.highPort
                    && Arrays.equals(lowAddress, other.lowAddress) && Arrays.equals(highAddress, other.highAddress);
        }

        @Override
        public int hashCode() {
            return (Arrays.hashCode(lowAddress) * 31 + lowPort) * 31 * 31
                    + Arrays.hashCode(highAddress) * 31 + highPort;
        }

        @Override
        public String toString() {
            return lowPort + "/" + highPort;
        }
    }
}
