package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Reads the blocks of a pcapng file (the IETF OPSAWG pcapng draft, {@code draft-ietf-opsawg-pcapng})
 * one at a time for a {@link CaptureReader}: what {@code dumpcap}, Wireshark and {@code editcap}
 * write by default. One block is in memory at a time.
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

    /** One interface description: its link type (null when not decodable) and clock. */
    record Interface(int linkTypeCode, LinkType linkType, int snapLength, int tsresol, long tsoffsetSeconds) {

        /** {@code true} when the interface's clock is not the default microseconds. */
        boolean finerThanMicroseconds() {
            return tsresol != DEFAULT_TSRESOL;
        }
    }

    private final CaptureReader in;
    private final List<Interface> interfaces = new ArrayList<>();
    /** The first octets of the next block, when {@link CaptureReader} has read them to tell the format. */
    private byte[] peeked;
    private boolean bigEndian = true;
    private boolean firstBigEndian = true;
    private int versionMajor;
    private int versionMinor;
    private int sectionBase;
    private boolean firstSection = true;

    /** A reader of the blocks of {@code in}, whose first four octets ({@code start}) were read already. */
    PcapNgReader(CaptureReader in, byte[] start) {
        this.in = in;
        this.peeked = java.util.Arrays.copyOf(start, 4);
    }

    /** Reads the first Section Header Block, which gives the byte order and the version. */
    void readFirstSection() throws IOException {
        if (!readBlock() && firstSection) {
            throw new PcapFormatException("the pcapng file is cut short inside its section header block");
        }
    }

    boolean firstBigEndian() {
        return firstBigEndian;
    }

    int versionMajor() {
        return versionMajor;
    }

    int versionMinor() {
        return versionMinor;
    }

    /** The interfaces described so far, numbered across the file. */
    List<Interface> interfaces() {
        return Collections.unmodifiableList(interfaces);
    }

    /** The next packet, or {@code null} at the end (or a cut, which {@link CaptureReader#cut} records). */
    PcapRecord next() throws IOException {
        packet = null;
        while (packet == null) {
            if (!readBlock()) {
                return null;
            }
        }
        return packet;
    }

    private PcapRecord packet;

    /**
     * Reads one block and does what it says; {@code false} at the end of the capture or where it is
     * cut short. A packet block leaves its record in {@link #packet}.
     */
    private boolean readBlock() throws IOException {
        long offset = in.position() - (peeked == null ? 0 : 4);
        byte[] head = new byte[BLOCK_OVERHEAD];
        int got = 0;
        if (peeked != null) {
            System.arraycopy(peeked, 0, head, 0, 4);
            got = 4;
            peeked = null;
        }
        got += in.read(head, got, 8 - got);
        int frameNumber = in.frameNumber();
        if (got == 0) {
            return false;
        }
        if (got < 8) {
            return cut(firstSection ? null
                    : "file ends in the middle of a block header after packet " + (frameNumber - 1) + " (cut short)");
        }
        int type = PcapFile.int32(head, 0, bigEndian);
        if (type == SECTION_HEADER) {
            if (in.read(head, 8, 4) < 4) {
                return cut(firstSection ? null : "file ends in the middle of a section header (cut short)");
            }
            got = BLOCK_OVERHEAD;
            int magic = PcapFile.int32(head, 8, true);
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
        long blockLength = PcapFile.int32(head, 4, bigEndian) & 0xFFFF_FFFFL;
        if (blockLength < BLOCK_OVERHEAD || blockLength % 4 != 0 || blockLength > MAX_BLOCK_LENGTH) {
            throw new PcapFormatException("block at file offset " + offset + " has an impossible length "
                    + blockLength + ": the file is corrupt");
        }
        int length = (int) blockLength;
        byte[] bytes = new byte[length];
        System.arraycopy(head, 0, bytes, 0, got);
        if (in.read(bytes, got, length - got) < length - got) {
            return cut(firstSection ? null : type == ENHANCED_PACKET || type == SIMPLE_PACKET || type == PACKET_OBSOLETE
                    ? "file ends in the middle of packet " + frameNumber + " (cut short)"
                    : "file ends in the middle of a block after packet " + (frameNumber - 1) + " (cut short)");
        }
        if ((PcapFile.int32(bytes, length - 4, bigEndian) & 0xFFFF_FFFFL) != blockLength) {
            throw new PcapFormatException("block at file offset " + offset + " ends with a length different "
                    + "from its start: the file is corrupt");
        }
        switch (type) {
            case SECTION_HEADER -> {
                if (length < 28) {
                    throw new PcapFormatException("section header at file offset " + offset + " is too short");
                }
                int major = PcapFile.uint16(bytes, 12, bigEndian);
                int minor = PcapFile.uint16(bytes, 14, bigEndian);
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
            case INTERFACE_DESCRIPTION -> {
                Interface described = interfaceDescription(bytes, offset, length, bigEndian);
                interfaces.add(described);
                in.interfaceDescribed(described.linkType());
            }
            case ENHANCED_PACKET, PACKET_OBSOLETE -> {
                boolean enhanced = type == ENHANCED_PACKET;
                if (length < 32) {
                    throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset
                            + " is a block too short for its header");
                }
                int localId = enhanced ? PcapFile.int32(bytes, 8, bigEndian) : PcapFile.uint16(bytes, 8, bigEndian);
                Interface described = sectionInterface(interfaces, sectionBase, localId, frameNumber);
                long high = PcapFile.int32(bytes, 12, bigEndian) & 0xFFFF_FFFFL;
                long low = PcapFile.int32(bytes, 16, bigEndian) & 0xFFFF_FFFFL;
                long captured = PcapFile.int32(bytes, 20, bigEndian) & 0xFFFF_FFFFL;
                long original = PcapFile.int32(bytes, 24, bigEndian) & 0xFFFF_FFFFL;
                if (captured > length - 32) {
                    throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset
                            + " claims " + captured + " captured bytes in a block of " + length + ": the file is corrupt");
                }
                byte[] data = java.util.Arrays.copyOfRange(bytes, 28, 28 + (int) captured);
                long nanos = timestampNanos(high << 32 | low, described);
                packet = new PcapRecord(frameNumber, nanos, (int) Math.min(original, Integer.MAX_VALUE), data,
                        sectionBase + localId);
            }
            case SIMPLE_PACKET -> {
                Interface described = sectionInterface(interfaces, sectionBase, 0, frameNumber);
                long original = PcapFile.int32(bytes, 8, bigEndian) & 0xFFFF_FFFFL;
                long captured = Math.min(original, length - 16);
                if (described.snapLength() > 0) {
                    captured = Math.min(captured, described.snapLength());
                }
                byte[] data = java.util.Arrays.copyOfRange(bytes, 12, 12 + (int) captured);
                // A Simple Packet Block carries no timestamp: tshark shows it at time 0.
                packet = new PcapRecord(frameNumber, 0, (int) Math.min(original, Integer.MAX_VALUE), data, sectionBase);
            }
            default -> {
                // Name resolution, interface statistics, decryption secrets, custom blocks: not needed.
            }
        }
        return true;
    }

    /**
     * The end of the capture inside a block: a cut after the first section (with {@code warning}),
     * an error inside it.
     */
    private boolean cut(String warning) throws PcapFormatException {
        if (firstSection) {
            throw new PcapFormatException("the pcapng file is cut short inside its section header block");
        }
        in.cut(warning);
        return false;
    }

    private static Interface sectionInterface(List<Interface> interfaces, int sectionBase, int localId, int frame)
            throws PcapFormatException {
        if (localId < 0 || sectionBase + localId >= interfaces.size()) {
            throw new PcapFormatException("packet " + frame + " refers to interface " + localId
                    + ", which no interface description block of its section defines");
        }
        return interfaces.get(sectionBase + localId);
    }

    /** The Interface Description Block in {@code bytes}, found at {@code offset} in the file. */
    private static Interface interfaceDescription(byte[] bytes, long offset, int length, boolean bigEndian)
            throws PcapFormatException {
        if (length < 20) {
            throw new PcapFormatException("interface description at file offset " + offset + " is too short");
        }
        int code = PcapFile.uint16(bytes, 8, bigEndian);
        int snapLength = PcapFile.int32(bytes, 12, bigEndian);
        int tsresol = DEFAULT_TSRESOL;
        long tsoffset = 0;
        int at = 16;
        int end = length - 4;
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
        if (resol == 9 && units >= 0) {
            return units + in.tsoffsetSeconds() * 1_000_000_000L; // what jiwarp and dumpcap write: no arithmetic
        }
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
