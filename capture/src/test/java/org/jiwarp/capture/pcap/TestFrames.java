package org.jiwarp.capture.pcap;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/** Hand-built frames for the parser tests, written independently of {@link SyntheticTcpCapture}. */
final class TestFrames {

    static final byte[] MAC_A = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
    static final byte[] MAC_B = {0x00, 0x66, 0x77, 0x00, 0x00, 0x01};

    private TestFrames() {
    }

    static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** A TCP header with {@code options} (a multiple of 4 bytes) and the payload; checksum left 0. */
    static byte[] tcp(int sourcePort, int destinationPort, long sequence, long acknowledgment, int flags,
                      byte[] options, byte[] payload) {
        int headerLength = 20 + options.length;
        ByteBuffer b = ByteBuffer.allocate(headerLength + payload.length);
        b.putShort((short) sourcePort).putShort((short) destinationPort);
        b.putInt((int) sequence).putInt((int) acknowledgment);
        b.put((byte) ((headerLength / 4) << 4)).put((byte) flags);
        b.putShort((short) 1024).putShort((short) 0).putShort((short) 0);
        b.put(options).put(payload);
        return b.array();
    }

    static byte[] tcp(int sourcePort, int destinationPort, long sequence, long acknowledgment, int flags,
                      byte[] payload) {
        return tcp(sourcePort, destinationPort, sequence, acknowledgment, flags, new byte[0], payload);
    }

    /** An IPv4 datagram; {@code flagsAndOffset} is the flags/fragment-offset field. */
    static byte[] ipv4(String source, String destination, int protocol, byte[] options, int flagsAndOffset,
                       byte[] body) {
        int headerLength = 20 + options.length;
        ByteBuffer b = ByteBuffer.allocate(headerLength + body.length);
        b.put((byte) (0x40 | headerLength / 4)).put((byte) 0).putShort((short) (headerLength + body.length));
        b.putShort((short) 0x1234).putShort((short) flagsAndOffset);
        b.put((byte) 64).put((byte) protocol).putShort((short) 0);
        b.put(address(source).getAddress()).put(address(destination).getAddress());
        b.put(options).put(body);
        return b.array();
    }

    static byte[] ipv4(String source, String destination, byte[] tcp) {
        return ipv4(source, destination, 6, new byte[0], 0x4000, tcp);
    }

    /** An IPv6 packet; {@code afterHeader} is extension headers followed by the upper layer. */
    static byte[] ipv6(String source, String destination, int nextHeader, byte[] afterHeader) {
        ByteBuffer b = ByteBuffer.allocate(40 + afterHeader.length);
        b.putInt(0x60000000).putShort((short) afterHeader.length).put((byte) nextHeader).put((byte) 64);
        b.put(ipv6Bytes(source)).put(ipv6Bytes(destination));
        b.put(afterHeader);
        return b.array();
    }

    /** 16 address bytes; InetAddress turns IPv4-mapped literals into 4-byte IPv4 addresses. */
    static byte[] ipv6Bytes(String literal) {
        byte[] address = address(literal).getAddress();
        if (address.length == 16) {
            return address;
        }
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(address, 0, mapped, 12, 4);
        return mapped;
    }

    /** An IPv6 extension header of the hop-by-hop / routing / destination-options form, 8 bytes. */
    static byte[] extension8(int nextHeader) {
        return new byte[] {(byte) nextHeader, 0, 1, 4, 0, 0, 0, 0};
    }

    /** An Ethernet II frame, with 802.1Q tags (each a TPID) before the EtherType. */
    static byte[] ethernet(int etherType, byte[] payload, int... tagTpids) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(MAC_B);
        out.writeBytes(MAC_A);
        int vlan = 100;
        for (int tpid : tagTpids) {
            out.write(tpid >>> 8);
            out.write(tpid);
            out.write(vlan >>> 8);
            out.write(vlan++);
        }
        out.write(etherType >>> 8);
        out.write(etherType);
        out.writeBytes(payload);
        return out.toByteArray();
    }

    /** A Linux cooked (SLL v1) frame. */
    static byte[] sll(int protocol, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(16 + payload.length);
        b.putShort((short) 0).putShort((short) 1).putShort((short) 6).put(MAC_A).putShort((short) 0);
        b.putShort((short) protocol).put(payload);
        return b.array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    static PcapRecord record(byte[] data) {
        return new PcapRecord(7, 1_000_000L, data.length, data);
    }
}
