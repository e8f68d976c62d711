package org.jiwarp.capture.pcap;

import static org.jiwarp.capture.pcap.TestFrames.address;
import static org.jiwarp.capture.pcap.TestFrames.concat;
import static org.jiwarp.capture.pcap.TestFrames.ethernet;
import static org.jiwarp.capture.pcap.TestFrames.extension8;
import static org.jiwarp.capture.pcap.TestFrames.ipv4;
import static org.jiwarp.capture.pcap.TestFrames.ipv6;
import static org.jiwarp.capture.pcap.TestFrames.record;
import static org.jiwarp.capture.pcap.TestFrames.sll;
import static org.jiwarp.capture.pcap.TestFrames.tcp;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

class PacketParserTest {

    private static final byte[] PAYLOAD = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final int PSH_ACK = TcpSegment.PSH | TcpSegment.ACK;
    private static final byte[] TCP = tcp(49342, 7471, 0xF168_2E2AL, 0x76F1_5A13L, PSH_ACK, PAYLOAD);

    private static void assertSegment(TcpSegment s, String source, String destination) {
        assertNotNull(s);
        assertEquals(7, s.frameNumber());
        assertEquals(1_000_000L, s.timestampNanos());
        assertEquals(address(source), s.source());
        assertEquals(address(destination), s.destination());
        assertEquals(49342, s.sourcePort());
        assertEquals(7471, s.destinationPort());
        assertEquals(0xF168_2E2AL, s.sequence());
        assertEquals(0x76F1_5A13L, s.acknowledgment());
        assertEquals(PSH_ACK, s.flags());
        assertFalse(s.syn() || s.fin() || s.rst());
        assertTrue(s.ack());
        assertArrayEquals(PAYLOAD, s.payload());
    }

    @Test
    void ethernetIpv4() {
        byte[] frame = ethernet(0x0800, ipv4("192.168.77.2", "192.168.77.1", TCP));
        assertSegment(PacketParser.parse(record(frame), LinkType.ETHERNET), "192.168.77.2", "192.168.77.1");
    }

    @Test
    void ethernetPaddingIsNotPayload() {
        byte[] ip = ipv4("10.0.0.1", "10.0.0.2", tcp(1, 2, 3, 4, TcpSegment.ACK, new byte[] {9}));
        byte[] frame = concat(ethernet(0x0800, ip), new byte[60 - 14 - ip.length + 4]);
        TcpSegment s = PacketParser.parse(record(frame), LinkType.ETHERNET);
        assertArrayEquals(new byte[] {9}, s.payload());
    }

    @Test
    void ethernetWithOneAndTwoVlanTags() {
        byte[] ip = ipv4("192.168.77.2", "192.168.77.1", TCP);
        assertSegment(PacketParser.parse(record(ethernet(0x0800, ip, 0x8100)), LinkType.ETHERNET),
                "192.168.77.2", "192.168.77.1");
        assertSegment(PacketParser.parse(record(ethernet(0x0800, ip, 0x88a8, 0x8100)), LinkType.ETHERNET),
                "192.168.77.2", "192.168.77.1");
        assertNull(PacketParser.parse(record(ethernet(0x0800, ip, 0x8100, 0x8100, 0x8100)), LinkType.ETHERNET));
    }

    @Test
    void linuxCooked() {
        byte[] frame = sll(0x0800, ipv4("10.0.2.15", "10.0.2.2", TCP));
        assertSegment(PacketParser.parse(record(frame), LinkType.LINUX_SLL), "10.0.2.15", "10.0.2.2");
        byte[] v6 = sll(0x86dd, ipv6("fe80::1", "fe80::2", 6, TCP));
        assertSegment(PacketParser.parse(record(v6), LinkType.LINUX_SLL), "fe80::1", "fe80::2");
        assertNull(PacketParser.parse(record(sll(0x0806, new byte[28])), LinkType.LINUX_SLL));
    }

    @Test
    void rawIpv4AndIpv6() {
        assertSegment(PacketParser.parse(record(ipv4("10.0.0.19", "10.0.0.18", TCP)), LinkType.RAW),
                "10.0.0.19", "10.0.0.18");
        TcpSegment s = PacketParser.parse(record(ipv6("2001:db8::19", "2001:db8::18", 6, TCP)), LinkType.RAW);
        assertSegment(s, "2001:db8::19", "2001:db8::18");
        assertInstanceOf(Inet6Address.class, s.source());
        TcpSegment mapped = PacketParser.parse(record(ipv6("::ffff:10.0.0.1", "::1", 6, TCP)), LinkType.RAW);
        assertInstanceOf(Inet6Address.class, mapped.source(), "IPv4-mapped stays an IPv6 address");
    }

    @Test
    void ipv4OptionsAndTcpOptionsAreSkipped() {
        byte[] mss = {2, 4, 0x05, (byte) 0xb4, 1, 1, 4, 2}; // MSS 1460, NOP, NOP, SACK permitted
        byte[] segment = tcp(49342, 7471, 0xF168_2E2AL, 0x76F1_5A13L, PSH_ACK, mss, PAYLOAD);
        byte[] ip = ipv4("10.0.0.1", "10.0.0.2", 6, new byte[] {1, 1, 1, 0}, 0, segment);
        assertSegment(PacketParser.parse(record(ip), LinkType.RAW), "10.0.0.1", "10.0.0.2");
    }

    @Test
    void ipv6ExtensionHeadersAreSkipped() {
        byte[] chain = concat(extension8(43), extension8(60), extension8(6), TCP); // hop-by-hop, routing, dest-opts
        assertSegment(PacketParser.parse(record(ipv6("::1", "::2", 0, chain)), LinkType.RAW), "::1", "::2");
        byte[] fragment = concat(new byte[] {6, 0, 0, 0, 0, 0, 0, 1}, TCP);
        assertNull(PacketParser.parse(record(ipv6("::1", "::2", 44, fragment)), LinkType.RAW));
        byte[] esp = concat(new byte[8], TCP);
        assertNull(PacketParser.parse(record(ipv6("::1", "::2", 50, esp)), LinkType.RAW));
        // an extension header running past the datagram
        byte[] longExt = {6, (byte) 200, 0, 0, 0, 0, 0, 0};
        assertNull(PacketParser.parse(record(ipv6("::1", "::2", 0, concat(longExt, TCP))), LinkType.RAW));
    }

    @Test
    void fragmentsAreNotSegments() {
        byte[] first = ipv4("10.0.0.1", "10.0.0.2", 6, new byte[0], 0x2000, TCP); // MF
        byte[] later = ipv4("10.0.0.1", "10.0.0.2", 6, new byte[0], 0x00b9, TCP); // offset 185*8
        assertNull(PacketParser.parse(record(first), LinkType.RAW));
        assertNull(PacketParser.parse(record(later), LinkType.RAW));
    }

    @Test
    void notTcp() {
        byte[] udp = ipv4("10.0.0.1", "10.0.0.2", 17, new byte[0], 0, new byte[28]);
        assertNull(PacketParser.parse(record(ethernet(0x0800, udp)), LinkType.ETHERNET));
        byte[] arp = ethernet(0x0806, new byte[28]);
        assertNull(PacketParser.parse(record(arp), LinkType.ETHERNET));
        byte[] ipv6Udp = ipv6("::1", "::2", 17, new byte[16]);
        assertNull(PacketParser.parse(record(ethernet(0x86dd, ipv6Udp)), LinkType.ETHERNET));
        byte[] llc = ethernet(0x0026, new byte[38]); // an 802.3 length, not an EtherType
        assertNull(PacketParser.parse(record(llc), LinkType.ETHERNET));
        assertNull(PacketParser.parse(record(new byte[] {0x10, 0, 0}), LinkType.RAW));
    }

    @Test
    void truncatedHeaders() {
        byte[] frame = ethernet(0x0800, ipv4("10.0.0.1", "10.0.0.2", TCP));
        int payloadStart = 14 + 20 + 20;
        for (int length = 0; length < payloadStart; length++) {
            assertNull(PacketParser.parse(record(Arrays.copyOf(frame, length)), LinkType.ETHERNET), "length " + length);
        }
        // cut inside the payload (snap length): what was captured
        TcpSegment cut = PacketParser.parse(record(Arrays.copyOf(frame, payloadStart + 3)), LinkType.ETHERNET);
        assertArrayEquals(Arrays.copyOf(PAYLOAD, 3), cut.payload());
        byte[] v6 = ipv6("::1", "::2", 6, TCP);
        for (int length = 0; length < 60; length++) {
            assertNull(PacketParser.parse(record(Arrays.copyOf(v6, length)), LinkType.RAW), "length " + length);
        }
    }

    @Test
    void nonsenseLengths() {
        byte[] ip = ipv4("10.0.0.1", "10.0.0.2", TCP);
        byte[] shortTotal = ip.clone();
        shortTotal[3] = 30; // total length 30 < IHL + TCP header
        assertNull(PacketParser.parse(record(shortTotal), LinkType.RAW));
        byte[] badIhl = ip.clone();
        badIhl[0] = 0x44;
        assertNull(PacketParser.parse(record(badIhl), LinkType.RAW));
        byte[] badDataOffset = ip.clone();
        badDataOffset[20 + 12] = 0x40;
        assertNull(PacketParser.parse(record(badDataOffset), LinkType.RAW));
        byte[] hugeDataOffset = ip.clone();
        hugeDataOffset[20 + 12] = (byte) 0xF0; // 60 bytes, more than the datagram holds
        assertNull(PacketParser.parse(record(hugeDataOffset), LinkType.RAW));
        byte[] tso = ip.clone();
        tso[2] = 0;
        tso[3] = 0; // total length 0: segmentation offload, up to the end of the frame
        assertArrayEquals(PAYLOAD, PacketParser.parse(record(tso), LinkType.RAW).payload());
        byte[] wrongVersion = ethernet(0x0800, ipv6("::1", "::2", 6, TCP));
        assertNull(PacketParser.parse(record(wrongVersion), LinkType.ETHERNET));
    }

    @Test
    void garbageNeverThrows() {
        byte[] good = ethernet(0x8100, concat(new byte[] {0, 5, (byte) 0x86, (byte) 0xdd},
                ipv6("::1", "::2", 0, concat(extension8(6), TCP))));
        Property.forAll("parser on garbage", 2000, random -> {
            byte[] frame;
            if (random.nextBoolean()) {
                frame = Property.bytes(random, random.nextInt(120));
            } else {
                frame = Arrays.copyOf(good, random.nextInt(good.length + 1));
                for (int i = random.nextInt(4); i > 0 && frame.length > 0; i--) {
                    frame[random.nextInt(frame.length)] = (byte) random.nextInt(256);
                }
            }
            for (LinkType type : LinkType.values()) {
                PacketParser.parse(new PcapRecord(1, 0, frame.length, frame), type);
            }
        });
    }
}
