package org.jiwarp.capture.pcap;

import static org.jiwarp.capture.pcap.TestFrames.address;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class SyntheticTcpCaptureTest {

    private static final InetSocketAddress CLIENT4 = new InetSocketAddress(address("192.168.77.2"), 49342);
    private static final InetSocketAddress SERVER4 = new InetSocketAddress(address("192.168.77.1"), 7471);
    private static final InetSocketAddress CLIENT6 = new InetSocketAddress(address("2001:db8::2"), 49342);
    private static final InetSocketAddress SERVER6 = new InetSocketAddress(address("2001:db8::1"), 7471);
    private static final long T0 = 1_700_000_000_000_000_000L;

    @ParameterizedTest
    @CsvSource({
        "ETHERNET, false, 1000, 2000",
        "ETHERNET, true, 4294967290, 4294967295",
        "RAW, false, 0, 4294967295",
        "RAW, true, 7, 8",
        "LINUX_SLL, false, 4294967200, 5",
        "LINUX_SLL2, true, 5, 4294967200",
    })
    void conversationRoundTripsThroughAFile(LinkType linkType, boolean ipv6, long clientIsn, long serverIsn)
            throws IOException {
        InetSocketAddress client = ipv6 ? CLIENT6 : CLIENT4;
        InetSocketAddress server = ipv6 ? SERVER6 : SERVER4;
        SplittableRandom random = new SplittableRandom(clientIsn ^ serverIsn);
        ByteArrayOutputStream up = new ByteArrayOutputStream();
        ByteArrayOutputStream down = new ByteArrayOutputStream();
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(file, linkType, true)) {
            SyntheticTcpCapture capture = new SyntheticTcpCapture(writer, client, server, clientIsn, serverIsn);
            capture.timestampNanos(T0);
            capture.handshake();
            byte[] request = "MPA ID Req Frame\u0010\u0002\u0000\u0004\u0000\u0000\u0000\u0000"
                    .getBytes(StandardCharsets.ISO_8859_1);
            capture.clientSends(request);
            up.writeBytes(request);
            for (int i = 0; i < 20; i++) {
                byte[] payload = new byte[random.nextInt(3000)];
                random.nextBytes(payload);
                if (random.nextBoolean()) {
                    capture.clientSends(payload);
                    up.writeBytes(payload);
                } else {
                    capture.serverSends(payload);
                    down.writeBytes(payload);
                }
            }
            byte[] big = new byte[SyntheticTcpCapture.MAX_IPV4_PAYLOAD];
            random.nextBytes(big);
            capture.serverSends(big);
            down.writeBytes(big);
            capture.close();
            capture.close(); // once only
        }
        PcapFile pcap = PcapFile.read(file.toByteArray());
        assertNull(pcap.warning());
        assertEquals(linkType, pcap.linkType());
        assertEquals(3 + 1 + 20 + 1 + 3, pcap.records().size());
        for (int i = 0; i < pcap.records().size(); i++) {
            assertEquals(T0 + i * 1000L, pcap.records().get(i).timestampNanos());
            assertChecksumsAreGood(pcap.records().get(i), linkType);
        }
        List<TcpConversation> conversations = TcpConversations.of(pcap).conversations();
        assertEquals(1, conversations.size());
        TcpConversation c = conversations.get(0);
        assertEquals(client.getAddress(), c.clientAddress());
        assertEquals(client.getPort(), c.clientPort());
        assertEquals(server.getAddress(), c.serverAddress());
        assertEquals(server.getPort(), c.serverPort());
        assertEquals(1, c.clientToServer().synFrame());
        assertEquals(2, c.serverToClient().synFrame());
        assertEquals(clientIsn, c.clientToServer().initialSequence());
        assertEquals(serverIsn, c.serverToClient().initialSequence());
        assertArrayEquals(up.toByteArray(), c.clientToServer().toByteArray());
        assertArrayEquals(down.toByteArray(), c.serverToClient().toByteArray());
        assertFalse(c.clientToServer().hasGap());
        assertFalse(c.serverToClient().hasGap());
        assertEquals(4, c.clientToServer().chunks().get(0).frameNumber());
        assertTrue(c.clientToServer().finFrame() > 0 && c.serverToClient().finFrame() > 0);
        String head = new String(c.clientToServer().chunks().get(0).data(), 0, 16, StandardCharsets.US_ASCII);
        assertEquals("MPA ID Req Frame", head);
    }

    @Test
    void missingHandshakeGivesAMidStreamCapture() throws IOException {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(file, LinkType.ETHERNET, false);
        SyntheticTcpCapture capture = new SyntheticTcpCapture(writer, CLIENT4, SERVER4, 0xFFFF_FFFEL, 10);
        capture.clientSends(new byte[] {1, 2, 3, 4});
        capture.serverSends(new byte[] {9});
        capture.clientSends(new byte[] {5});
        assertEquals(3, capture.clientNextSequence());
        assertThrows(IllegalStateException.class, capture::handshake);
        TcpConversation c = TcpConversations.of(PcapFile.read(file.toByteArray())).conversations().get(0);
        assertEquals(0, c.clientToServer().synFrame());
        assertEquals(0xFFFF_FFFEL, c.clientToServer().baseSequence());
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, c.clientToServer().toByteArray());
        assertArrayEquals(new byte[] {9}, c.serverToClient().toByteArray());
    }

    @Test
    void reorderedAndRetransmittedSegmentsInAFile() throws IOException {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(file, LinkType.ETHERNET, false);
        SyntheticTcpCapture capture = new SyntheticTcpCapture(writer, CLIENT4, SERVER4, 100, 900);
        capture.handshake();
        byte[] data = "abcdefghij".getBytes(StandardCharsets.US_ASCII);
        int ack = TcpSegment.ACK | TcpSegment.PSH;
        capture.writeSegment(true, 106, 901, ack, data, 5, 5);
        capture.writeSegment(true, 101, 901, ack, data, 0, 5);
        capture.writeSegment(true, 101, 901, ack, data, 0, 10);
        TcpDirection up = TcpConversations.of(PcapFile.read(file.toByteArray()))
                .conversations().get(0).clientToServer();
        assertEquals("abcdefghij", new String(up.toByteArray(), StandardCharsets.US_ASCII));
        assertEquals(List.of(5L, 5L), List.of(up.chunks().get(0).endOffset(), up.chunks().get(1).streamOffset()));
        assertEquals(5, up.chunks().get(1).frameNumber());
    }

    @Test
    void payloadLimits() throws IOException {
        PcapWriter writer = new PcapWriter(OutputStream.nullOutputStream(), LinkType.ETHERNET, false);
        SyntheticTcpCapture v4 = new SyntheticTcpCapture(writer, CLIENT4, SERVER4, 1, 2);
        v4.clientSends(new byte[65_495]);
        assertThrows(IllegalArgumentException.class, () -> v4.clientSends(new byte[65_496]));
        SyntheticTcpCapture v6 = new SyntheticTcpCapture(writer, CLIENT6, SERVER6, 1, 2);
        v6.serverSends(new byte[65_515]);
        assertThrows(IllegalArgumentException.class, () -> v6.serverSends(new byte[65_516]));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticTcpCapture(writer, CLIENT4, SERVER6, 1, 2));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticTcpCapture(writer, CLIENT4, SERVER4, -1, 2));
        assertThrows(IllegalArgumentException.class,
                () -> new SyntheticTcpCapture(writer, InetSocketAddress.createUnresolved("x", 1), SERVER4, 1, 2));
        v4.close();
        assertThrows(IllegalStateException.class, () -> v4.clientSends(new byte[1]));
    }

    /** The first packet is stamped with the clock's instant, to the nanosecond; each next one 1 µs later. */
    @Test
    void clockStampsTheFirstPacketAndEachNextIsOneMicrosecondLater() throws IOException {
        Instant start = Instant.ofEpochSecond(1_700_000_000L, 123_456_789);
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        SyntheticTcpCapture capture = new SyntheticTcpCapture(new PcapWriter(file, LinkType.RAW, true),
                CLIENT4, SERVER4, 1, 2, InstantSource.fixed(start));
        long nanos = 1_700_000_000L * 1_000_000_000L + 123_456_789;
        assertEquals(nanos, capture.timestampNanos());
        capture.handshake();
        assertEquals(nanos + 3000, capture.timestampNanos());
        List<PcapRecord> records = PcapFile.read(file.toByteArray()).records();
        assertEquals(3, records.size());
        for (int i = 0; i < 3; i++) {
            assertEquals(nanos + i * 1000L, records.get(i).timestampNanos(), "packet " + i);
        }
    }

    /** Verifies the IPv4 header checksum and the TCP checksum independently of the writer's code. */
    private static void assertChecksumsAreGood(PcapRecord record, LinkType linkType) {
        byte[] f = record.data();
        int ip = switch (linkType) {
            case ETHERNET -> 14;
            case LINUX_SLL -> 16;
            case LINUX_SLL2 -> 20;
            case RAW -> 0;
        };
        assertNotNull(PacketParser.parse(record, linkType));
        long sum;
        int tcp;
        int tcpLength;
        if ((f[ip] & 0xF0) == 0x40) {
            assertEquals(0xFFFF, onesComplementSum(f, ip, 20, 0), "IPv4 header checksum, frame " + record.frameNumber());
            tcp = ip + 20;
            tcpLength = ((f[ip + 2] & 0xFF) << 8 | (f[ip + 3] & 0xFF)) - 20;
            sum = onesComplementSum(f, ip + 12, 8, 0) + 6 + tcpLength;
        } else {
            tcp = ip + 40;
            tcpLength = (f[ip + 4] & 0xFF) << 8 | (f[ip + 5] & 0xFF);
            sum = onesComplementSum(f, ip + 8, 32, 0) + 6 + tcpLength;
        }
        assertEquals(f.length, tcp + tcpLength);
        assertEquals(0xFFFF, onesComplementSum(f, tcp, tcpLength, sum), "TCP checksum, frame " + record.frameNumber());
    }

    private static int onesComplementSum(byte[] b, int offset, int length, long start) {
        long sum = start;
        for (int i = 0; i < length; i += 2) {
            int hi = b[offset + i] & 0xFF;
            int lo = i + 1 < length ? b[offset + i + 1] & 0xFF : 0;
            sum += hi << 8 | lo;
        }
        while (sum > 0xFFFF) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int) sum;
    }
}
