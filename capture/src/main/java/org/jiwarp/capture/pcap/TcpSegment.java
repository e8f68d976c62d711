package org.jiwarp.capture.pcap;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.Objects;

/**
 * One captured TCP segment, as {@link PacketParser} lifts it out of a pcap record.
 *
 * <pre>
 *   TCP header (RFC 9293 section 3.1)
 *    0                   1                   2                   3
 *   +-------------------------------+-------------------------------+
 *   |          Source Port          |       Destination Port        |
 *   +-------------------------------+-------------------------------+
 *   |                        Sequence Number                        |
 *   +---------------------------------------------------------------+
 *   |                    Acknowledgment Number                      |
 *   +-------+-------+-+-+-+-+-+-+-+-+-------------------------------+
 *   |  Data |       |C|E|U|A|P|R|S|F|                               |
 *   | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
 *   +-------+-------+-+-+-+-+-+-+-+-+-------------------------------+
 * </pre>
 *
 * @param frameNumber     the pcap frame the segment came from (1-based)
 * @param timestampNanos  its capture time
 * @param sequence        Sequence Number, unsigned 32-bit
 * @param acknowledgment  Acknowledgment Number, unsigned 32-bit (meaningful when {@link #ACK} is set)
 * @param flags           the control bits of header byte 13 ({@link #FIN} ... {@link #CWR})
 * @param payload         the segment's data, bounded by the IP length and the captured bytes;
 *                        not copied, do not modify
 * @param mss             the Maximum Segment Size option's value (RFC 9293 section 3.2), or 0 when
 *                        the segment carries none
 */
public record TcpSegment(int frameNumber, long timestampNanos, InetAddress source, int sourcePort,
                         InetAddress destination, int destinationPort, long sequence, long acknowledgment,
                         int flags, byte[] payload, int mss) {

    /** The option kind of the Maximum Segment Size (RFC 9293 section 3.2). */
    public static final int MSS_OPTION_KIND = 2;

    /** A segment without an MSS option. */
    public TcpSegment(int frameNumber, long timestampNanos, InetAddress source, int sourcePort,
                      InetAddress destination, int destinationPort, long sequence, long acknowledgment,
                      int flags, byte[] payload) {
        this(frameNumber, timestampNanos, source, sourcePort, destination, destinationPort, sequence, acknowledgment,
                flags, payload, 0);
    }

    /** FIN: no more data from sender. */
    public static final int FIN = 0x01;
    /** SYN: synchronize sequence numbers. */
    public static final int SYN = 0x02;
    /** RST: reset the connection. */
    public static final int RST = 0x04;
    /** PSH: push function. */
    public static final int PSH = 0x08;
    /** ACK: Acknowledgment field is significant. */
    public static final int ACK = 0x10;
    /** URG: Urgent Pointer field is significant. */
    public static final int URG = 0x20;
    /** ECE: ECN-Echo (RFC 3168). */
    public static final int ECE = 0x40;
    /** CWR: Congestion Window Reduced (RFC 3168). */
    public static final int CWR = 0x80;

    /** Checks the fields. */
    public TcpSegment {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(payload, "payload");
        if ((sourcePort & ~0xFFFF) != 0 || (destinationPort & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("ports must be 0..65535: " + sourcePort + ", " + destinationPort);
        }
        if ((sequence & ~0xFFFF_FFFFL) != 0 || (acknowledgment & ~0xFFFF_FFFFL) != 0) {
            throw new IllegalArgumentException("sequence and acknowledgment must be unsigned 32-bit: "
                    + sequence + ", " + acknowledgment);
        }
    }

    /** {@code true} when SYN is set. */
    public boolean syn() {
        return (flags & SYN) != 0;
    }

    /** {@code true} when FIN is set. */
    public boolean fin() {
        return (flags & FIN) != 0;
    }

    /** {@code true} when RST is set. */
    public boolean rst() {
        return (flags & RST) != 0;
    }

    /** {@code true} when ACK is set. */
    public boolean ack() {
        return (flags & ACK) != 0;
    }

    /** The number of sequence numbers the segment occupies: payload plus one each for SYN and FIN. */
    public long sequenceLength() {
        return payload.length + (syn() ? 1 : 0) + (fin() ? 1 : 0);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TcpSegment other
                && frameNumber == other.frameNumber
                && timestampNanos == other.timestampNanos
                && source.equals(other.source)
                && sourcePort == other.sourcePort
                && destination.equals(other.destination)
                && destinationPort == other.destinationPort
                && sequence == other.sequence
                && acknowledgment == other.acknowledgment
                && flags == other.flags
                && mss == other.mss
                && Arrays.equals(payload, other.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(frameNumber, timestampNanos, source, sourcePort, destination, destinationPort,
                sequence, acknowledgment, flags) * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "TcpSegment[frame " + frameNumber + " " + source.getHostAddress() + ":" + sourcePort
                + " -> " + destination.getHostAddress() + ":" + destinationPort
                + " " + flagNames(flags) + " seq=" + sequence + " ack=" + acknowledgment
                + " len=" + payload.length + "]";
    }

    /** The set flags as Wireshark lists them, for example {@code [SYN, ACK]}. */
    public static String flagNames(int flags) {
        StringBuilder sb = new StringBuilder("[");
        String[] names = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"};
        for (int i = 0; i < names.length; i++) {
            if ((flags & (1 << i)) != 0) {
                if (sb.length() > 1) {
                    sb.append(", ");
                }
                sb.append(names[i]);
            }
        }
        return sb.append(']').toString();
    }
}
