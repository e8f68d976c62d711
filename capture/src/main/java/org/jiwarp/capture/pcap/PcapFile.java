package org.jiwarp.capture.pcap;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A capture file read whole into memory: classic libpcap as below, pcapng (read by
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
    private static final int KUZNETZOV_MAGIC = 0xa1b2cd34;

    private static final int MAGIC_OFFSET = 0;
    private static final int VERSION_MAJOR_OFFSET = 4;
    private static final int VERSION_MINOR_OFFSET = 6;
    private static final int SNAPLEN_OFFSET = 16;
    private static final int NETWORK_OFFSET = 20;

    private static final int TS_SEC_OFFSET = 0;
    private static final int TS_FRACTION_OFFSET = 4;
    private static final int INCL_LEN_OFFSET = 8;
    private static final int ORIG_LEN_OFFSET = 12;

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
     * Reads a whole capture file.
     *
     * @throws PcapFormatException when the file is not a classic pcap file this package can read
     * @throws IOException         when the file cannot be read at all
     */
    public static PcapFile read(Path path) throws IOException {
        long size = Files.size(path);
        if (size > Integer.MAX_VALUE - 8) {
            throw new PcapFormatException(path + ": " + size + " bytes is too large to read into memory (limit 2 GiB)");
        }
        try {
            return read(Files.readAllBytes(path));
        } catch (PcapFormatException e) {
            throw new PcapFormatException(path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads a capture held in memory. The records' data are copies; {@code bytes} is not retained.
     *
     * @throws PcapFormatException when the bytes are not a capture file this package can read
     */
    public static PcapFile read(byte[] bytes) throws PcapFormatException {
        if (bytes.length >= 2 && bytes[0] == (byte) 0x1f && bytes[1] == (byte) 0x8b) {
            return gunzipAndRead(bytes);
        }
        if (bytes.length == 0) {
            throw new PcapFormatException("not a pcap file: the file is empty");
        }
        if (bytes.length < 4) {
            throw new PcapFormatException("not a pcap file: only " + bytes.length + " bytes, too short for a magic number");
        }
        int magic = int32(bytes, MAGIC_OFFSET, true);
        boolean bigEndian;
        boolean nanosecond;
        if (magic == MAGIC_MICROSECONDS) {
            bigEndian = true;
            nanosecond = false;
        } else if (magic == Integer.reverseBytes(MAGIC_MICROSECONDS)) {
            bigEndian = false;
            nanosecond = false;
        } else if (magic == MAGIC_NANOSECONDS) {
            bigEndian = true;
            nanosecond = true;
        } else if (magic == Integer.reverseBytes(MAGIC_NANOSECONDS)) {
            bigEndian = false;
            nanosecond = true;
        } else if (magic == PCAPNG_MAGIC) {
            return PcapNgReader.read(bytes);
        } else if (magic == KUZNETZOV_MAGIC || magic == Integer.reverseBytes(KUZNETZOV_MAGIC)) {
            throw new PcapFormatException("modified (Kuznetzov) pcap files are not supported; convert with editcap -F pcap");
        } else {
            throw new PcapFormatException(String.format(
                    "not a pcap file: magic 0x%08x (expected 0xa1b2c3d4 or 0xa1b23c4d)", magic));
        }
        if (bytes.length < GLOBAL_HEADER_LENGTH) {
            throw new PcapFormatException("truncated pcap global header: " + bytes.length + " of "
                    + GLOBAL_HEADER_LENGTH + " bytes");
        }
        int versionMajor = uint16(bytes, VERSION_MAJOR_OFFSET, bigEndian);
        int versionMinor = uint16(bytes, VERSION_MINOR_OFFSET, bigEndian);
        if (versionMajor != 2) {
            throw new PcapFormatException("unsupported pcap version " + versionMajor + "." + versionMinor
                    + " (expected 2.4)");
        }
        int snapLength = int32(bytes, SNAPLEN_OFFSET, bigEndian);
        int linkTypeCode = int32(bytes, NETWORK_OFFSET, bigEndian) & 0xFFFF;
        LinkType linkType = LinkType.fromCode(linkTypeCode);

        List<PcapRecord> records = new ArrayList<>();
        String warning = null;
        int offset = GLOBAL_HEADER_LENGTH;
        int frameNumber = 1;
        while (offset < bytes.length) {
            int left = bytes.length - offset;
            if (left < RECORD_HEADER_LENGTH) {
                warning = "file ends in the middle of the header of packet " + frameNumber + " (cut short)";
                break;
            }
            long seconds = int32(bytes, offset + TS_SEC_OFFSET, bigEndian) & 0xFFFF_FFFFL;
            long fraction = int32(bytes, offset + TS_FRACTION_OFFSET, bigEndian) & 0xFFFF_FFFFL;
            long inclLen = int32(bytes, offset + INCL_LEN_OFFSET, bigEndian) & 0xFFFF_FFFFL;
            long origLen = int32(bytes, offset + ORIG_LEN_OFFSET, bigEndian) & 0xFFFF_FFFFL;
            if (inclLen > MAX_RECORD_LENGTH) {
                throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset + " claims "
                        + inclLen + " captured bytes, more than the 256 MiB limit: the file is corrupt");
            }
            if (inclLen > left - RECORD_HEADER_LENGTH) {
                warning = "file ends in the middle of packet " + frameNumber + " (cut short)";
                break;
            }
            int dataStart = offset + RECORD_HEADER_LENGTH;
            byte[] data = new byte[(int) inclLen];
            System.arraycopy(bytes, dataStart, data, 0, data.length);
            long timestampNanos = seconds * 1_000_000_000L + (nanosecond ? fraction : fraction * 1000L);
            int originalLength = (int) Math.min(origLen, Integer.MAX_VALUE);
            records.add(new PcapRecord(frameNumber, timestampNanos, originalLength, data));
            offset = dataStart + data.length;
            frameNumber++;
        }
        return new PcapFile(linkType, linkTypeCode, nanosecond, bigEndian, versionMajor, versionMinor,
                snapLength, Collections.unmodifiableList(records), warning, false, List.of(linkType));
    }

    /**
     * Reads a whole capture from a stream (standard input for {@code -}).
     *
     * @throws PcapFormatException when the bytes are not a capture file this package can read
     * @throws IOException         when the stream cannot be read
     */
    public static PcapFile read(InputStream in) throws IOException {
        return read(in.readAllBytes());
    }

    /**
     * gzip: decompresses what there is. A compressed file cut short (a capture still being written)
     * keeps the packets before the cut, as an uncompressed one does.
     */
    private static PcapFile gunzipAndRead(byte[] bytes) throws PcapFormatException {
        ByteArrayOutputStream plain = new ByteArrayOutputStream(bytes.length * 4);
        String cut = null;
        try (GZIPInputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(bytes))) {
            byte[] buffer = new byte[64 * 1024];
            for (int n; (n = in.read(buffer)) > 0; ) {
                plain.write(buffer, 0, n);
                if (plain.size() > Integer.MAX_VALUE - 64 * 1024 * 2) {
                    throw new PcapFormatException("the decompressed capture is too large to read into memory (limit 2 GiB)");
                }
            }
        } catch (EOFException e) {
            cut = "the gzip-compressed file is cut short; read the " + plain.size() + " octets before the cut";
        } catch (ZipException e) {
            throw new PcapFormatException("not a readable gzip file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new PcapFormatException("cannot decompress the gzip file: " + e.getMessage(), e);
        }
        PcapFile file = read(plain.toByteArray());
        if (cut == null) {
            return file;
        }
        String warning = file.warning == null ? cut : cut + "; " + file.warning;
        return new PcapFile(file.linkType, file.linkTypeCode, file.nanosecond, file.bigEndian, file.versionMajor,
                file.versionMinor, file.snapLength, file.records, warning, file.pcapng, file.interfaceLinkTypes);
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
