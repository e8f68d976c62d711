package org.jiwarp.capture.pcap;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Reads a pcapng file (the IETF OPSAWG pcapng draft, {@code draft-ietf-opsawg-pcapng}) into a
 * {@link PcapFile}: what {@code dumpcap}, Wireshark and {@code editcap} write by default.
 *
 * <pre>
 *   every block:  block type(32) | block total length(32) | body ... | block total length(32)
 *
 *   0x0A0D0D0A Section Header      byte-order magic 0x1A2B3C4D(32) | major(16)=1 | minor(16) | section length(64) | options
 *   0x00000001 Interface Description  link type(16) | reserved(16) | snaplen(32) | options (if_tsresol 9, if_tsoffset 14)
 *   0x00000006 Enhanced Packet     interface id(32) | timestamp high(32) | low(32) | captured len(32) | original len(32) | data, padded to 4 | options
 *   0x00000003 Simple Packet       original len(32) | data, padded to 4 (interface 0, no timestamp)
 *   0x00000002 Packet (obsolete)   interface id(16) | drops(16) | timestamp high(32) | low(32) | captured len(32) | original len(32) | data
 *   any other type                 skipped (name resolution, statistics, journal, custom, ...)
 * </pre>
 *
 * <p>Each section has its own byte order (the Section Header's byte-order magic says which) and its
 * own interfaces, numbered from 0. Interfaces here are numbered across the file, in the order their
 * descriptions appear, so that {@link PcapRecord#interfaceId()} is unique. Packets are numbered 1,
 * 2, 3, ... across all sections, as Wireshark's {@code frame.number}. Timestamps are in units of
 * the interface's {@code if_tsresol} (default microseconds; {@code 10^-n} or {@code 2^-n} seconds)
 * plus its {@code if_tsoffset} seconds.
 *
 * <p>A file that ends inside a block keeps the packets before it, with a warning, as a classic pcap
 * file cut short does; anything else malformed is a {@link PcapFormatException}.
 */
final class PcapNgReader {

    static final int SECTION_HEADER = PcapFile.PCAPNG_MAGIC;
    static final int INTERFACE_DESCRIPTION = 1;
    static final int PACKET_OBSOLETE = 2;
    static final int SIMPLE_PACKET = 3;
    static final int ENHANCED_PACKET = 6;
    static final int BYTE_ORDER_MAGIC = 0x1A2B3C4D;

    static final int OPTION_END = 0;
    static final int OPTION_IF_TSRESOL = 9;
    static final int OPTION_IF_TSOFFSET = 14;

    /** Block type, block total length, and the trailing block total length. */
    private static final int BLOCK_OVERHEAD = 12;
    private static final int MAX_BLOCK_LENGTH = PcapFile.MAX_RECORD_LENGTH + 4096;
    private static final int DEFAULT_TSRESOL = 6;

    private PcapNgReader() {
    }

    /** One interface description: its link type (null when not decodable) and clock. */
    private record Interface(int linkTypeCode, LinkType linkType, int snapLength, int tsresol, long tsoffsetSeconds) {
    }

    static PcapFile read(byte[] bytes) throws PcapFormatException {
        List<Interface> interfaces = new ArrayList<>();
        List<PcapRecord> records = new ArrayList<>();
        String warning = null;
        boolean bigEndian = true;
        boolean firstBigEndian = true;
        int versionMajor = 0;
        int versionMinor = 0;
        int sectionBase = 0;
        int offset = 0;
        int frameNumber = 1;
        boolean firstSection = true;
        while (offset < bytes.length) {
            int left = bytes.length - offset;
            if (left < BLOCK_OVERHEAD) {
                warning = "file ends in the middle of a block header after packet " + (frameNumber - 1) + " (cut short)";
                break;
            }
            int type = PcapFile.int32(bytes, offset, bigEndian);
            if (type == SECTION_HEADER) {
                if (left < 16) {
                    warning = "file ends in the middle of a section header (cut short)";
                    break;
                }
                int magic = PcapFile.int32(bytes, offset + 8, true);
                if (magic == BYTE_ORDER_MAGIC) {
                    bigEndian = true;
                } else if (magic == Integer.reverseBytes(BYTE_ORDER_MAGIC)) {
                    bigEndian = false;
                } else {
                    throw new PcapFormatException(String.format("not a pcapng file: section header at file offset %d "
                            + "has byte-order magic 0x%08x (expected 0x1a2b3c4d)", offset, magic));
                }
                if (firstSection) {
                    firstBigEndian = bigEndian;
                }
            } else if (firstSection) {
                throw new PcapFormatException("not a pcapng file: it does not begin with a section header block");
            }
            long blockLength = PcapFile.int32(bytes, offset + 4, bigEndian) & 0xFFFF_FFFFL;
            if (blockLength < BLOCK_OVERHEAD || blockLength % 4 != 0 || blockLength > MAX_BLOCK_LENGTH) {
                throw new PcapFormatException("block at file offset " + offset + " has an impossible length "
                        + blockLength + ": the file is corrupt");
            }
            if (blockLength > left) {
                warning = type == ENHANCED_PACKET || type == SIMPLE_PACKET || type == PACKET_OBSOLETE
                        ? "file ends in the middle of packet " + frameNumber + " (cut short)"
                        : "file ends in the middle of a block after packet " + (frameNumber - 1) + " (cut short)";
                break;
            }
            int length = (int) blockLength;
            if ((PcapFile.int32(bytes, offset + length - 4, bigEndian) & 0xFFFF_FFFFL) != blockLength) {
                throw new PcapFormatException("block at file offset " + offset + " ends with a length different "
                        + "from its start: the file is corrupt");
            }
            switch (type) {
                case SECTION_HEADER -> {
                    if (length < 28) {
                        throw new PcapFormatException("section header at file offset " + offset + " is too short");
                    }
                    int major = PcapFile.uint16(bytes, offset + 12, bigEndian);
                    int minor = PcapFile.uint16(bytes, offset + 14, bigEndian);
                    if (major != 1) {
                        throw new PcapFormatException("unsupported pcapng version " + major + "." + minor
                                + " (expected 1.0)");
                    }
                    if (firstSection) {
                        versionMajor = major;
                        versionMinor = minor;
                        firstSection = false;
                    }
                    sectionBase = interfaces.size();
                }
                case INTERFACE_DESCRIPTION -> interfaces.add(interfaceDescription(bytes, offset, length, bigEndian));
                case ENHANCED_PACKET, PACKET_OBSOLETE -> {
                    boolean enhanced = type == ENHANCED_PACKET;
                    if (length < 32) {
                        throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset
                                + " is a block too short for its header");
                    }
                    int localId = enhanced ? PcapFile.int32(bytes, offset + 8, bigEndian)
                            : PcapFile.uint16(bytes, offset + 8, bigEndian);
                    Interface in = sectionInterface(interfaces, sectionBase, localId, frameNumber);
                    long high = PcapFile.int32(bytes, offset + 12, bigEndian) & 0xFFFF_FFFFL;
                    long low = PcapFile.int32(bytes, offset + 16, bigEndian) & 0xFFFF_FFFFL;
                    long captured = PcapFile.int32(bytes, offset + 20, bigEndian) & 0xFFFF_FFFFL;
                    long original = PcapFile.int32(bytes, offset + 24, bigEndian) & 0xFFFF_FFFFL;
                    if (captured > length - 32) {
                        throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset
                                + " claims " + captured + " captured bytes in a block of " + length + ": the file is corrupt");
                    }
                    byte[] data = new byte[(int) captured];
                    System.arraycopy(bytes, offset + 28, data, 0, data.length);
                    long nanos = timestampNanos(high << 32 | low, in);
                    records.add(new PcapRecord(frameNumber++, nanos, (int) Math.min(original, Integer.MAX_VALUE), data,
                            sectionBase + localId));
                }
                case SIMPLE_PACKET -> {
                    Interface in = sectionInterface(interfaces, sectionBase, 0, frameNumber);
                    long original = PcapFile.int32(bytes, offset + 8, bigEndian) & 0xFFFF_FFFFL;
                    long captured = Math.min(original, length - 16);
                    if (in.snapLength() > 0) {
                        captured = Math.min(captured, in.snapLength());
                    }
                    byte[] data = new byte[(int) captured];
                    System.arraycopy(bytes, offset + 12, data, 0, data.length);
                    // A Simple Packet Block carries no timestamp: tshark shows it at time 0.
                    records.add(new PcapRecord(frameNumber++, 0, (int) Math.min(original, Integer.MAX_VALUE), data,
                            sectionBase));
                }
                default -> {
                    // Name resolution, interface statistics, decryption secrets, custom blocks: not needed.
                }
            }
            offset += length;
        }
        if (firstSection) {
            throw new PcapFormatException("the pcapng file is cut short inside its section header block");
        }
        List<LinkType> linkTypes = new ArrayList<>();
        Interface first = null;
        for (Interface in : interfaces) {
            linkTypes.add(in.linkType());
            if (first == null && in.linkType() != null) {
                first = in;
            }
        }
        if (first == null && !interfaces.isEmpty()) {
            LinkType.fromCode(interfaces.get(0).linkTypeCode()); // throws with the list of supported types
        }
        return new PcapFile(first == null ? null : first.linkType(), first == null ? 0 : first.linkTypeCode(),
                first != null && first.tsresol() != DEFAULT_TSRESOL, firstBigEndian, versionMajor, versionMinor,
                first == null ? 0 : first.snapLength(), Collections.unmodifiableList(records), warning, true,
                Collections.unmodifiableList(linkTypes));
    }

    private static Interface sectionInterface(List<Interface> interfaces, int sectionBase, int localId, int frame)
            throws PcapFormatException {
        if (localId < 0 || sectionBase + localId >= interfaces.size()) {
            throw new PcapFormatException("packet " + frame + " refers to interface " + localId
                    + ", which no interface description block of its section defines");
        }
        return interfaces.get(sectionBase + localId);
    }

    private static Interface interfaceDescription(byte[] bytes, int offset, int length, boolean bigEndian)
            throws PcapFormatException {
        if (length < 20) {
            throw new PcapFormatException("interface description at file offset " + offset + " is too short");
        }
        int code = PcapFile.uint16(bytes, offset + 8, bigEndian);
        int snapLength = PcapFile.int32(bytes, offset + 12, bigEndian);
        int tsresol = DEFAULT_TSRESOL;
        long tsoffset = 0;
        int at = offset + 16;
        int end = offset + length - 4;
        while (at + 4 <= end) {
            int option = PcapFile.uint16(bytes, at, bigEndian);
            int optionLength = PcapFile.uint16(bytes, at + 2, bigEndian);
            if (option == OPTION_END || at + 4 + optionLength > end) {
                break;
            }
            if (option == OPTION_IF_TSRESOL && optionLength >= 1) {
                tsresol = bytes[at + 4] & 0xFF;
            } else if (option == OPTION_IF_TSOFFSET && optionLength >= 8) {
                long hi = PcapFile.int32(bytes, at + 4, bigEndian) & 0xFFFF_FFFFL;
                long lo = PcapFile.int32(bytes, at + 8, bigEndian) & 0xFFFF_FFFFL;
                tsoffset = bigEndian ? hi << 32 | lo : lo << 32 | hi;
            }
            at += 4 + (optionLength + 3 & ~3);
        }
        LinkType linkType;
        try {
            linkType = LinkType.fromCode(code);
        } catch (PcapFormatException e) {
            linkType = null;
        }
        return new Interface(code, linkType, snapLength, tsresol, tsoffset);
    }

    /** Converts a timestamp in the interface's units to nanoseconds since the epoch. */
    static long timestampNanos(long units, Interface in) {
        int resol = in.tsresol();
        BigInteger value = new BigInteger(Long.toUnsignedString(units));
        BigInteger nanos;
        if ((resol & 0x80) == 0) {
            int exponent = resol & 0x7F;
            nanos = exponent <= 9 ? value.multiply(BigInteger.TEN.pow(9 - exponent))
                    : value.divide(BigInteger.TEN.pow(exponent - 9));
        } else {
            nanos = value.multiply(BigInteger.valueOf(1_000_000_000L)).shiftRight(resol & 0x7F);
        }
        return nanos.longValue() + in.tsoffsetSeconds() * 1_000_000_000L;
    }
}
