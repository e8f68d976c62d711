package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A capture file read whole into memory (by {@link CaptureReader}, which reads captures of any
 * size a record at a time): classic libpcap as below, pcapng (read by
 * {@link PcapNgReader}; one entry of {@link #interfaceLinkTypes()} per interface) or either of them
 * gzip-compressed (as tshark and Wireshark read {@code .pcap.gz}).
 *
 * <pre>
 *   global header (24 bytes)
 *   +-------------+-------+-------+-------------+-------------+-------------+-------------+
 *   | magic       | major | minor | thiszone    | sigfigs     | snaplen     | network     |
 *   +-------------+-------+-------+-------------+-------------+-------------+-------------+
 *   then records: 16-byte header + incl_len bytes, see {@link PcapRecord}
 *
 *   magic as written by the capturing host:
 *     a1 b2 c3 d4  big-endian,    microseconds     d4 c3 b2 a1  little-endian, microseconds
 *     a1 b2 3c 4d  big-endian,    nanoseconds      4d 3c b2 a1  little-endian, nanoseconds
 * </pre>
 *
 * <p>Every malformed input ends in a {@link PcapFormatException} with a message for a human, never
 * in another exception. A file that ends in the middle of its last record (a capture that was
 * still being written, or a truncated copy) is not an error: like tshark, the complete records
 * before it are kept and {@link #warning()} says what was dropped.
 *
 * <p>The {@code network} field's upper bits (FCS length, reserved) are ignored; the link type is
 * its low 16 bits. {@code thiszone} is ignored (every known writer puts 0 there).
 */
public final class PcapFile {

    /** Magic number of a microsecond-resolution file, in the writer's byte order. */
    public static final int MAGIC_MICROSECONDS = 0xa1b2c3d4;
    /** Magic number of a nanosecond-resolution file, in the writer's byte order. */
    public static final int MAGIC_NANOSECONDS = 0xa1b23c4d;
    /** Size of the global header. */
    public static final int GLOBAL_HEADER_LENGTH = 24;
    /** Size of a record header. */
    public static final int RECORD_HEADER_LENGTH = 16;
    /** The largest {@code incl_len} accepted; anything above means a corrupt file. */
    public static final int MAX_RECORD_LENGTH = 256 * 1024 * 1024;

    /** The pcapng Section Header Block type, the first four bytes of every pcapng file. */
    static final int PCAPNG_MAGIC = 0x0a0d0d0a;
    /** Alexey Kuznetzov's modified pcap format (longer record headers), not supported. */
    static final int KUZNETZOV_MAGIC = 0xa1b2cd34;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_MAJOR_OFFSET = 4;
    static final int VERSION_MINOR_OFFSET = 6;
    static final int SNAPLEN_OFFSET = 16;
    static final int NETWORK_OFFSET = 20;

    static final int TS_SEC_OFFSET = 0;
    static final int TS_FRACTION_OFFSET = 4;
    static final int INCL_LEN_OFFSET = 8;
    static final int ORIG_LEN_OFFSET = 12;

    private final LinkType linkType;
    private final int linkTypeCode;
    private final boolean nanosecond;
    private final boolean bigEndian;
    private final int versionMajor;
    private final int versionMinor;
    private final int snapLength;
    private final List<PcapRecord> records;
    private final String warning;
    private final boolean pcapng;
    private final List<LinkType> interfaceLinkTypes;

    PcapFile(LinkType linkType, int linkTypeCode, boolean nanosecond, boolean bigEndian,
             int versionMajor, int versionMinor, int snapLength, List<PcapRecord> records, String warning,
             boolean pcapng, List<LinkType> interfaceLinkTypes) {
        this.pcapng = pcapng;
        this.interfaceLinkTypes = interfaceLinkTypes;
        this.linkType = linkType;
        this.linkTypeCode = linkTypeCode;
        this.nanosecond = nanosecond;
        this.bigEndian = bigEndian;
        this.versionMajor = versionMajor;
        this.versionMinor = versionMinor;
        this.snapLength = snapLength;
        this.records = records;
        this.warning = warning;
    }

    /**
     * Reads a whole capture file into memory; for captures of any size, read the records one at a
     * time with {@link CaptureReader}.
     *
     * @throws PcapFormatException when the file is not a capture this package can read (the message
     *                             starts with the file's name)
     * @throws IOException         when the file cannot be read at all
     */
    public static PcapFile read(Path path) throws IOException {
        try (CaptureReader reader = CaptureReader.open(path)) {
            return readAll(reader);
        }
    }

    /**
     * Reads a capture held in memory. The records' data are copies; {@code bytes} is not retained.
     *
     * @throws PcapFormatException when the bytes are not a capture file this package can read
     */
    public static PcapFile read(byte[] bytes) throws PcapFormatException {
        try (CaptureReader reader = CaptureReader.open(bytes)) {
            return readAll(reader);
        } catch (PcapFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new IllegalStateException("reading memory failed", e);
        }
    }

    /**
     * Reads a whole capture from a stream (standard input for {@code -}) into memory.
     *
     * @throws PcapFormatException when the bytes are not a capture file this package can read
     * @throws IOException         when the stream cannot be read
     */
    public static PcapFile read(InputStream in) throws IOException {
        try (CaptureReader reader = CaptureReader.open(in)) {
            return readAll(reader);
        }
    }

    /** Every record {@code reader} has left, and its header, in memory. */
    public static PcapFile read(CaptureReader reader) throws IOException {
        return readAll(reader);
    }

    private static PcapFile readAll(CaptureReader reader) throws IOException {
        List<PcapRecord> records = new ArrayList<>();
        for (PcapRecord record = reader.next(); record != null; record = reader.next()) {
            records.add(record);
        }
        if (!reader.pcapng()) {
            return new PcapFile(reader.linkType(), reader.linkTypeCode(), reader.nanosecond(), reader.bigEndian(),
                    reader.versionMajor(), reader.versionMinor(), reader.snapLength(),
                    Collections.unmodifiableList(records), reader.warning(), false, reader.interfaceLinkTypes());
        }
        // pcapng: the file's link type and clock are those of its first interface this package decodes.
        List<PcapNgReader.Interface> interfaces = reader.pcapngBlocks().interfaces();
        PcapNgReader.Interface first = null;
        for (PcapNgReader.Interface described : interfaces) {
            if (described.linkType() != null) {
                first = described;
                break;
            }
        }
        if (first == null && !interfaces.isEmpty()) {
            LinkType.fromCode(interfaces.get(0).linkTypeCode()); // throws with the list of supported types
        }
        return new PcapFile(first == null ? null : first.linkType(), first == null ? 0 : first.linkTypeCode(),
                first != null && first.finerThanMicroseconds(), reader.bigEndian(), reader.versionMajor(),
                reader.versionMinor(), first == null ? 0 : first.snapLength(), Collections.unmodifiableList(records),
                reader.warning(), true, reader.interfaceLinkTypes());
    }

    /** {@code true} for a pcapng file, {@code false} for a classic pcap file. */
    public boolean pcapng() {
        return pcapng;
    }

    /**
     * The link type of each interface, by interface id ({@code null} for one whose link type this
     * package does not decode; its packets are skipped). A classic pcap file has one.
     */
    public List<LinkType> interfaceLinkTypes() {
        return interfaceLinkTypes;
    }

    /** The link type of the interface that captured {@code record}, or {@code null} if not decodable. */
    public LinkType linkType(PcapRecord record) {
        int id = record.interfaceId();
        return id >= 0 && id < interfaceLinkTypes.size() ? interfaceLinkTypes.get(id) : null;
    }

    /** The link-layer type of every record (pcapng: of the first interface this package decodes). */
    public LinkType linkType() {
        return linkType;
    }

    /** The {@code LINKTYPE_} code as the file carried it (for example 228 where {@link #linkType()} is RAW). */
    public int linkTypeCode() {
        return linkTypeCode;
    }

    /** {@code true} for nanosecond timestamps (magic 0xa1b23c4d), {@code false} for microseconds. */
    public boolean nanosecond() {
        return nanosecond;
    }

    /** {@code true} when the file was written big-endian. */
    public boolean bigEndian() {
        return bigEndian;
    }

    /** The {@code version_major} field (always 2). */
    public int versionMajor() {
        return versionMajor;
    }

    /** The {@code version_minor} field (4 for every current writer). */
    public int versionMinor() {
        return versionMinor;
    }

    /** The {@code snaplen} field: the most bytes captured of any one packet. */
    public int snapLength() {
        return snapLength;
    }

    /** The complete records in file order; frame numbers run 1, 2, 3, ... */
    public List<PcapRecord> records() {
        return records;
    }

    /** What was wrong with an otherwise readable file (a cut-short last record), or {@code null}. */
    public String warning() {
        return warning;
    }

    static int uint16(byte[] b, int offset, boolean bigEndian) {
        int hi = bigEndian ? b[offset] : b[offset + 1];
        int lo = bigEndian ? b[offset + 1] : b[offset];
        return (hi & 0xFF) << 8 | (lo & 0xFF);
    }

    static int int32(byte[] b, int offset, boolean bigEndian) {
        int value = (b[offset] & 0xFF) << 24 | (b[offset + 1] & 0xFF) << 16
                | (b[offset + 2] & 0xFF) << 8 | (b[offset + 3] & 0xFF);
        return bigEndian ? value : Integer.reverseBytes(value);
    }
}
