package org.jiwarp.capture.pcap;

import java.io.Closeable;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;

/**
 * Writes made-up but well-formed TCP traffic of one connection into a {@link PcapWriter}, for
 * captures of jiwarp's own protocol exchanges and for tests.
 *
 * <pre>
 *   client                          server
 *     |  SYN          seq=ISN(c)        |   handshake()
 *     |  &lt;-- SYN, ACK seq=ISN(s) ack=c+1 |
 *     |  ACK                            |
 *     |  PSH, ACK  payload  ----------&gt; |   clientSends(...)
 *     |  &lt;---------  payload  PSH, ACK  |   serverSends(...)
 *     |  FIN, ACK   -------------------&gt; |   close()
 *     |  &lt;-------------------  FIN, ACK  |
 *     |  ACK        -------------------&gt; |
 * </pre>
 *
 * <p>Each call writes its segments at once, one record per segment, the clock advancing 1 µs per
 * record. Frames are Ethernet II (client MAC {@code 02:00:00:00:00:01}, server MAC
 * {@code 02:00:00:00:00:02}, both locally administered), Linux cooked or raw IP, following the
 * writer's link type; IPv4 or IPv6 following the addresses. IPv4 headers carry DF, TTL 64 and a
 * correct header checksum; every TCP header has a window of 65535 and a correct checksum over
 * the pseudo-header, so Wireshark reports no checksum errors.
 *
 * <p>Sequence and acknowledgment numbers are tracked as RFC 9293 counts them (SYN and FIN take one
 * each). Data sent without {@link #handshake()} starts at the given ISN itself, which yields a
 * capture that begins mid-connection. {@link #close()} writes the FIN exchange; the writer belongs
 * to the caller and stays open.
 */
public final class SyntheticTcpCapture implements Closeable {

    /** The largest payload of one IPv4 segment: 65535 minus the IPv4 and TCP headers. */
    public static final int MAX_IPV4_PAYLOAD = 65_535 - 20 - 20;
    /** The largest payload of one IPv6 segment without jumbograms: 65535 minus the TCP header. */
    public static final int MAX_IPV6_PAYLOAD = 65_535 - 20;

    private static final byte[] CLIENT_MAC = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    private static final byte[] SERVER_MAC = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    private static final int ETHERNET_HEADER_LENGTH = 14;
    private static final int SLL_HEADER_LENGTH = 16;
    private static final int SLL2_HEADER_LENGTH = 20;
    private static final int IPV4_HEADER_LENGTH = 20;
    private static final int IPV6_HEADER_LENGTH = 40;
    private static final int TCP_HEADER_LENGTH = 20;
    private static final int MSS_OPTION_LENGTH = 4;
    private static final int TTL = 64;
    private static final int WINDOW = 65_535;
    private static final long SEQUENCE_MASK = 0xFFFF_FFFFL;
    private static final long NANOS_PER_PACKET = 1_000;

    private final PcapWriter writer;
    private final InetSocketAddress client;
    private final InetSocketAddress server;
    private final byte[] clientIp;
    private final byte[] serverIp;
    private final boolean ipv6;
    private long clientNext;
    private long serverNext;
    private int clientIpId = 0x1000;
    private int serverIpId = 0x2000;
    private long timestampNanos;
    private boolean started;
    private int clientMss;
    private int serverMss;
    private boolean closed;

    /**
     * A connection between {@code client} and {@code server} (both IPv4 or both IPv6, resolved),
     * with the given initial sequence numbers (0 to 2^32-1), starting at the current time.
     */
    public SyntheticTcpCapture(PcapWriter writer, InetSocketAddress client, InetSocketAddress server,
                               long clientIsn, long serverIsn) {
        this(writer, client, server, clientIsn, serverIsn, InstantSource.system());
    }

    /**
     * As {@link #SyntheticTcpCapture(PcapWriter, InetSocketAddress, InetSocketAddress, long, long)},
     * starting at {@code clock}'s instant instead of the system clock's.
     */
    public SyntheticTcpCapture(PcapWriter writer, InetSocketAddress client, InetSocketAddress server,
                               long clientIsn, long serverIsn, InstantSource clock) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.client = Objects.requireNonNull(client, "client");
        this.server = Objects.requireNonNull(server, "server");
        InetAddress c = client.getAddress();
        InetAddress s = server.getAddress();
        if (c == null || s == null) {
            throw new IllegalArgumentException("addresses must be resolved: " + client + ", " + server);
        }
        if (c instanceof Inet4Address && s instanceof Inet4Address) {
            ipv6 = false;
        } else if (c instanceof Inet6Address && s instanceof Inet6Address) {
            ipv6 = true;
        } else {
            throw new IllegalArgumentException("client and server must both be IPv4 or both IPv6: "
                    + client + ", " + server);
        }
        if ((clientIsn & ~SEQUENCE_MASK) != 0 || (serverIsn & ~SEQUENCE_MASK) != 0) {
            throw new IllegalArgumentException("initial sequence numbers must be 0..2^32-1: "
                    + clientIsn + ", " + serverIsn);
        }
        this.clientIp = c.getAddress();
        this.serverIp = s.getAddress();
        this.clientNext = clientIsn;
        this.serverNext = serverIsn;
        Instant now = clock.instant();
        this.timestampNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** The capture time the next record gets, in nanoseconds since the Unix epoch. */
    public long timestampNanos() {
        return timestampNanos;
    }

    /** Sets the capture time of the next record; later records follow 1 µs apart. */
    public void timestampNanos(long timestampNanos) {
        this.timestampNanos = timestampNanos;
    }

    /** The client's next sequence number (SND.NXT). */
    public long clientNextSequence() {
        return clientNext;
    }

    /** The server's next sequence number (SND.NXT). */
    public long serverNextSequence() {
        return serverNext;
    }

    /**
     * Makes the SYNs of {@link #handshake()} carry a Maximum Segment Size option (0: none, the
     * default).
     */
    public void announceMss(int clientMss, int serverMss) {
        this.clientMss = clientMss;
        this.serverMss = serverMss;
    }

    /**
     * Writes the three-way handshake: SYN, SYN-ACK, ACK.
     *
     * @throws IllegalStateException when anything was written already
     */
    public void handshake() throws IOException {
        checkOpen();
        if (started) {
            throw new IllegalStateException("handshake() must come before any data");
        }
        started = true;
        writeSegment(true, clientNext, 0, TcpSegment.SYN, new byte[0], 0, 0);
        clientNext = (clientNext + 1) & SEQUENCE_MASK;
        writeSegment(false, serverNext, clientNext, TcpSegment.SYN | TcpSegment.ACK, new byte[0], 0, 0);
        serverNext = (serverNext + 1) & SEQUENCE_MASK;
        writeSegment(true, clientNext, serverNext, TcpSegment.ACK, new byte[0], 0, 0);
    }

    /** Writes one PSH-ACK segment from the client carrying all of {@code payload}. */
    public void clientSends(byte[] payload) throws IOException {
        send(true, payload);
    }

    /** Writes one PSH-ACK segment from the server carrying all of {@code payload}. */
    public void serverSends(byte[] payload) throws IOException {
        send(false, payload);
    }

    private void send(boolean fromClient, byte[] payload) throws IOException {
        checkOpen();
        started = true;
        int max = ipv6 ? MAX_IPV6_PAYLOAD : MAX_IPV4_PAYLOAD;
        if (payload.length > max) {
            throw new IllegalArgumentException("payload of " + payload.length + " bytes exceeds the "
                    + max + " bytes one " + (ipv6 ? "IPv6" : "IPv4") + " segment can carry");
        }
        int flags = TcpSegment.PSH | TcpSegment.ACK;
        if (fromClient) {
            writeSegment(true, clientNext, serverNext, flags, payload, 0, payload.length);
            clientNext = (clientNext + payload.length) & SEQUENCE_MASK;
        } else {
            writeSegment(false, serverNext, clientNext, flags, payload, 0, payload.length);
            serverNext = (serverNext + payload.length) & SEQUENCE_MASK;
        }
    }

    /**
     * Writes the closing exchange (FIN-ACK each way, then the client's ACK) unless already closed.
     * The writer is left open.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        started = true;
        int finAck = TcpSegment.FIN | TcpSegment.ACK;
        writeSegment(true, clientNext, serverNext, finAck, new byte[0], 0, 0);
        clientNext = (clientNext + 1) & SEQUENCE_MASK;
        writeSegment(false, serverNext, clientNext, finAck, new byte[0], 0, 0);
        serverNext = (serverNext + 1) & SEQUENCE_MASK;
        writeSegment(true, clientNext, serverNext, TcpSegment.ACK, new byte[0], 0, 0);
    }

    /**
     * Writes one arbitrary segment without touching the tracked sequence numbers: for
     * retransmissions, reordering and other deliberate oddities.
     *
     * @param fromClient {@code true} for client to server
     * @param flags      TCP control bits, {@link TcpSegment#FIN} ... {@link TcpSegment#CWR}
     */
    public void writeSegment(boolean fromClient, long sequence, long acknowledgment, int flags,
                             byte[] payload, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, payload.length);
        if (length > (ipv6 ? MAX_IPV6_PAYLOAD : MAX_IPV4_PAYLOAD)) {
            throw new IllegalArgumentException("payload of " + length + " bytes does not fit one segment");
        }
        int linkLength = linkHeaderLength();
        int ipLength = ipv6 ? IPV6_HEADER_LENGTH : IPV4_HEADER_LENGTH;
        int mss = (flags & TcpSegment.SYN) != 0 ? (fromClient ? clientMss : serverMss) : 0;
        int tcpHeaderLength = TCP_HEADER_LENGTH + (mss > 0 ? MSS_OPTION_LENGTH : 0);
        int tcpLength = tcpHeaderLength + length;
        byte[] frame = new byte[linkLength + ipLength + tcpLength];
        byte[] sourceIp = fromClient ? clientIp : serverIp;
        byte[] destinationIp = fromClient ? serverIp : clientIp;

        writeLinkHeader(frame, fromClient);

        int ip = linkLength;
        if (ipv6) {
            // RFC 8200 section 3
            frame[ip] = 0x60;
            putInt16(frame, ip + 4, tcpLength);
            frame[ip + 6] = (byte) PacketParser.PROTOCOL_TCP;
            frame[ip + 7] = (byte) TTL;
            System.arraycopy(sourceIp, 0, frame, ip + 8, 16);
            System.arraycopy(destinationIp, 0, frame, ip + 24, 16);
        } else {
            // RFC 791 section 3.1
            frame[ip] = 0x45;
            putInt16(frame, ip + 2, ipLength + tcpLength);
            putInt16(frame, ip + 4, fromClient ? clientIpId++ : serverIpId++);
            putInt16(frame, ip + 6, 0x4000); // DF, fragment offset 0
            frame[ip + 8] = (byte) TTL;
            frame[ip + 9] = (byte) PacketParser.PROTOCOL_TCP;
            System.arraycopy(sourceIp, 0, frame, ip + 12, 4);
            System.arraycopy(destinationIp, 0, frame, ip + 16, 4);
            putInt16(frame, ip + 10, InternetChecksum.of(frame, ip, IPV4_HEADER_LENGTH));
        }

        int tcp = ip + ipLength;
        putInt16(frame, tcp, fromClient ? client.getPort() : server.getPort());
        putInt16(frame, tcp + 2, fromClient ? server.getPort() : client.getPort());
        putInt32(frame, tcp + 4, sequence);
        putInt32(frame, tcp + 8, acknowledgment);
        frame[tcp + 12] = (byte) ((tcpHeaderLength / 4) << 4);
        frame[tcp + 13] = (byte) flags;
        putInt16(frame, tcp + 14, WINDOW);
        if (mss > 0) {
            // RFC 9293 section 3.2: kind 2, length 4, the maximum segment size
            frame[tcp + TCP_HEADER_LENGTH] = (byte) TcpSegment.MSS_OPTION_KIND;
            frame[tcp + TCP_HEADER_LENGTH + 1] = (byte) MSS_OPTION_LENGTH;
            putInt16(frame, tcp + TCP_HEADER_LENGTH + 2, mss);
        }
        System.arraycopy(payload, offset, frame, tcp + tcpHeaderLength, length);
        putInt16(frame, tcp + 16, tcpChecksum(frame, tcp, tcpLength, sourceIp, destinationIp));

        writer.write(timestampNanos, frame);
        timestampNanos += NANOS_PER_PACKET;
    }

    /** RFC 9293 section 3.1 (IPv4 pseudo-header) and RFC 8200 section 8.1 (IPv6 pseudo-header). */
    private int tcpChecksum(byte[] frame, int tcp, int tcpLength, byte[] sourceIp, byte[] destinationIp) {
        long sum = InternetChecksum.add(0, sourceIp, 0, sourceIp.length);
        sum = InternetChecksum.add(sum, destinationIp, 0, destinationIp.length);
        sum += PacketParser.PROTOCOL_TCP;
        sum += tcpLength; // IPv4: 16-bit TCP length; IPv6: 32-bit upper-layer length, same sum
        sum = InternetChecksum.add(sum, frame, tcp, tcpLength);
        return InternetChecksum.finish(sum);
    }

    private int linkHeaderLength() {
        switch (writer.linkType()) {
            case ETHERNET:
                return ETHERNET_HEADER_LENGTH;
            case LINUX_SLL:
                return SLL_HEADER_LENGTH;
            case LINUX_SLL2:
                return SLL2_HEADER_LENGTH;
            case RAW:
            default:
                return 0;
        }
    }

    private void writeLinkHeader(byte[] frame, boolean fromClient) {
        int etherType = ipv6 ? PacketParser.ETHERTYPE_IPV6 : PacketParser.ETHERTYPE_IPV4;
        byte[] sourceMac = fromClient ? CLIENT_MAC : SERVER_MAC;
        // Linux cooked headers as seen on the client host: 4 = sent by us, 0 = addressed to us
        int packetType = fromClient ? 4 : 0;
        switch (writer.linkType()) {
            case ETHERNET:
                System.arraycopy(fromClient ? SERVER_MAC : CLIENT_MAC, 0, frame, 0, 6);
                System.arraycopy(sourceMac, 0, frame, 6, 6);
                putInt16(frame, 12, etherType);
                break;
            case LINUX_SLL:
                putInt16(frame, 0, packetType);
                putInt16(frame, 2, 1); // ARPHRD_ETHER
                putInt16(frame, 4, 6);
                System.arraycopy(sourceMac, 0, frame, 6, 6);
                putInt16(frame, 14, etherType);
                break;
            case LINUX_SLL2:
                putInt16(frame, 0, etherType);
                putInt32(frame, 4, 1); // interface index
                putInt16(frame, 8, 1); // ARPHRD_ETHER
                frame[10] = (byte) packetType;
                frame[11] = 6;
                System.arraycopy(sourceMac, 0, frame, 12, 6);
                break;
            case RAW:
            default:
                break;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("connection already closed");
        }
    }

    private static void putInt16(byte[] b, int offset, int value) {
        b[offset] = (byte) (value >>> 8);
        b[offset + 1] = (byte) value;
    }

    private static void putInt32(byte[] b, int offset, long value) {
        b[offset] = (byte) (value >>> 24);
        b[offset + 1] = (byte) (value >>> 16);
        b[offset + 2] = (byte) (value >>> 8);
        b[offset + 3] = (byte) value;
    }
}
