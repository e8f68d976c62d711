package org.jiwarp.capture.pcap;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads a capture one record at a time, from a file or a stream, in memory that does not grow
 * with the capture: classic libpcap (layout in {@link PcapFile}), pcapng (read by
 * {@link PcapNgReader}), or either of them gzip-compressed, recognised by their first octets.
 * There is no limit on a capture's length; one record is at most
 * {@value PcapFile#MAX_RECORD_LENGTH} octets.
 *
 * <pre>
 *   try (CaptureReader reader = CaptureReader.open(path)) {
 *       for (PcapRecord record = reader.next(); record != null; record = reader.next()) {
 *           ... reader.linkType(record) ...
 *       }
 *       ... reader.warning() ...
 *   }
 * </pre>
 *
 * <p>{@link #open} reads the file's header (classic: the global header; pcapng: the first Section
 * Header Block), so the header accessors answer at once. A capture that ends inside a record (a
 * capture still being written, a truncated copy, a gzip stream cut short) ends like a complete
 * one, and {@link #warning()} then says what was dropped, as tshark does. Anything else malformed
 * is a {@link PcapFormatException} whose message, from a file, starts with the file's name.
 *
 * <p>Not thread-safe. The records' data are fresh arrays the caller may keep.
 */
public final class CaptureReader implements Closeable {

    private static final int GZIP_MAGIC_1 = 0x1f;
    private static final int GZIP_MAGIC_2 = 0x8b;
    private static final int BUFFER = 64 * 1024;

    private final String name;
    private final InputStream in;
    private final boolean gzip;
    /** Octets consumed from the (decompressed) capture: the file offset of the next read. */
    private long position;
    private boolean gzipCut;
    private String recordWarning;
    private boolean ended;

    // the classic global header; for pcapng, the first section's
    private boolean pcapng;
    private boolean nanosecond;
    private boolean bigEndian;
    private int versionMajor;
    private int versionMinor;
    private int snapLength;
    private int linkTypeCode;
    private LinkType linkType;
    private final List<LinkType> interfaceLinkTypes = new ArrayList<>();
    private PcapNgReader pcapngBlocks;
    private int frameNumber = 1;
    private final byte[] recordHeader = new byte[PcapFile.RECORD_HEADER_LENGTH];

    private CaptureReader(String name, InputStream in, boolean gzip) {
        this.name = name;
        this.in = in;
        this.gzip = gzip;
    }

    /**
     * Opens a capture file and reads its header.
     *
     * @throws PcapFormatException when the file is not a capture this package can read (the message
     *                             starts with the file's name)
     * @throws IOException         when the file cannot be read at all
     */
    public static CaptureReader open(Path file) throws IOException {
        InputStream raw = Files.newInputStream(file);
        try {
            return open(file.toString(), raw);
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
    }

    /**
     * Opens the first {@code length} octets of a capture file: of a file still being written, what
     * it held at a moment, however much it grows while it is read.
     *
     * @throws PcapFormatException when the file is not a capture this package can read
     * @throws IOException         when the file cannot be read at all
     */
    public static CaptureReader open(Path file, long length) throws IOException {
        InputStream raw = new Prefix(Files.newInputStream(file), length);
        try {
            return open(file.toString(), raw);
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
    }

    /** The first octets of a stream, as many as a limit allows. */
    private static final class Prefix extends FilterInputStream {
        private long remaining;

        Prefix(InputStream in, long length) {
            super(in);
            this.remaining = length;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                remaining--;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(Math.min(n, remaining));
            remaining -= skipped;
            return skipped;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(in.available(), remaining);
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }

    /**
     * Reads a capture from a stream (standard input for {@code -}), starting with its header.
     * {@link #close()} closes the stream.
     *
     * @throws PcapFormatException when the stream does not hold a capture this package can read
     */
    public static CaptureReader open(InputStream in) throws IOException {
        return open(null, in);
    }

    /** Reads a capture held in memory. */
    public static CaptureReader open(byte[] bytes) throws PcapFormatException {
        try {
            return open(null, new ByteArrayInputStream(bytes));
        } catch (PcapFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new IllegalStateException("reading memory failed", e);
        }
    }

    private static CaptureReader open(String name, InputStream raw) throws IOException {
        BufferedInputStream buffered = new BufferedInputStream(raw, BUFFER);
        buffered.mark(2);
        int first = buffered.read();
        int second = buffered.read();
        buffered.reset();
        boolean gzip = first == GZIP_MAGIC_1 && second == GZIP_MAGIC_2;
        InputStream in = buffered;
        if (gzip) {
            try {
                in = new BufferedInputStream(new GZIPInputStream(buffered, BUFFER), BUFFER);
            } catch (ZipException | EOFException e) {
                buffered.close();
                throw new PcapFormatException(prefix(name) + "not a readable gzip file: " + e.getMessage(), e);
            }
        }
        CaptureReader reader = new CaptureReader(name, in, gzip);
        try {
            reader.readHeader();
        } catch (PcapFormatException e) {
            reader.close();
            throw reader.named(e);
        } catch (IOException | RuntimeException e) {
            reader.close();
            throw e;
        }
        return reader;
    }

    private void readHeader() throws IOException {
        byte[] header = new byte[PcapFile.GLOBAL_HEADER_LENGTH];
        int got = read(header, 0, 4);
        if (got == 0) {
            throw error("not a pcap file: the file is empty");
        }
        if (got < 4) {
            throw error("not a pcap file: only " + got + " bytes, too short for a magic number");
        }
        int magic = PcapFile.int32(header, 0, true);
        if (magic == PcapFile.MAGIC_MICROSECONDS || magic == Integer.reverseBytes(PcapFile.MAGIC_MICROSECONDS)) {
            bigEndian = magic == PcapFile.MAGIC_MICROSECONDS;
            nanosecond = false;
        } else if (magic == PcapFile.MAGIC_NANOSECONDS || magic == Integer.reverseBytes(PcapFile.MAGIC_NANOSECONDS)) {
            bigEndian = magic == PcapFile.MAGIC_NANOSECONDS;
            nanosecond = true;
        } else if (magic == PcapFile.PCAPNG_MAGIC) {
            pcapng = true;
            pcapngBlocks = new PcapNgReader(this, header);
            pcapngBlocks.readFirstSection();
            bigEndian = pcapngBlocks.firstBigEndian();
            versionMajor = pcapngBlocks.versionMajor();
            versionMinor = pcapngBlocks.versionMinor();
            return;
        } else if (magic == PcapFile.KUZNETZOV_MAGIC || magic == Integer.reverseBytes(PcapFile.KUZNETZOV_MAGIC)) {
            throw error("modified (Kuznetzov) pcap files are not supported; convert with editcap -F pcap");
        } else {
            throw error(String.format("not a pcap file: magic 0x%08x (expected 0xa1b2c3d4 or 0xa1b23c4d)", magic));
        }
        got += read(header, 4, PcapFile.GLOBAL_HEADER_LENGTH - 4);
        if (got < PcapFile.GLOBAL_HEADER_LENGTH) {
            throw error("truncated pcap global header: " + got + " of " + PcapFile.GLOBAL_HEADER_LENGTH + " bytes");
        }
        versionMajor = PcapFile.uint16(header, PcapFile.VERSION_MAJOR_OFFSET, bigEndian);
        versionMinor = PcapFile.uint16(header, PcapFile.VERSION_MINOR_OFFSET, bigEndian);
        if (versionMajor != 2) {
            throw error("unsupported pcap version " + versionMajor + "." + versionMinor + " (expected 2.4)");
        }
        snapLength = PcapFile.int32(header, PcapFile.SNAPLEN_OFFSET, bigEndian);
        linkTypeCode = PcapFile.int32(header, PcapFile.NETWORK_OFFSET, bigEndian) & 0xFFFF;
        linkType = LinkType.fromCode(linkTypeCode);
        interfaceLinkTypes.add(linkType);
    }

    /**
     * The next complete record, or {@code null} at the end of the capture (or where it is cut short;
     * {@link #warning()} then says so).
     *
     * @throws PcapFormatException when the capture is corrupt at this record
     * @throws IOException         when the file cannot be read
     */
    public PcapRecord next() throws IOException {
        if (ended) {
            return null;
        }
        PcapRecord record;
        try {
            record = pcapng ? pcapngBlocks.next() : nextClassic();
        } catch (PcapFormatException e) {
            throw named(e);
        }
        if (record == null) {
            ended = true;
        } else {
            frameNumber++;
        }
        return record;
    }

    private PcapRecord nextClassic() throws IOException {
        long offset = position;
        int got = read(recordHeader, 0, recordHeader.length);
        if (got == 0) {
            return null;
        }
        if (got < recordHeader.length) {
            return cut("file ends in the middle of the header of packet " + frameNumber + " (cut short)");
        }
        long seconds = PcapFile.int32(recordHeader, PcapFile.TS_SEC_OFFSET, bigEndian) & 0xFFFF_FFFFL;
        long fraction = PcapFile.int32(recordHeader, PcapFile.TS_FRACTION_OFFSET, bigEndian) & 0xFFFF_FFFFL;
        long inclLen = PcapFile.int32(recordHeader, PcapFile.INCL_LEN_OFFSET, bigEndian) & 0xFFFF_FFFFL;
        long origLen = PcapFile.int32(recordHeader, PcapFile.ORIG_LEN_OFFSET, bigEndian) & 0xFFFF_FFFFL;
        if (inclLen > PcapFile.MAX_RECORD_LENGTH) {
            throw new PcapFormatException("packet " + frameNumber + " at file offset " + offset + " claims "
                    + inclLen + " captured bytes, more than the 256 MiB limit: the file is corrupt");
        }
        byte[] data = new byte[(int) inclLen];
        if (read(data, 0, data.length) < data.length) {
            return cut("file ends in the middle of packet " + frameNumber + " (cut short)");
        }
        long timestampNanos = seconds * 1_000_000_000L + (nanosecond ? fraction : fraction * 1000L);
        return new PcapRecord(frameNumber, timestampNanos, (int) Math.min(origLen, Integer.MAX_VALUE), data);
    }

    /** Ends the capture at a record it holds only part of; {@code null}, for {@link #next()} to return. */
    PcapRecord cut(String warning) {
        recordWarning = warning;
        return null;
    }

    /** The frame number the next record gets. */
    int frameNumber() {
        return frameNumber;
    }

    /** The offset in the (decompressed) capture of the next octet to be read. */
    long position() {
        return position;
    }

    /**
     * Reads up to {@code length} octets, fewer only at the end of the capture (or where a gzip
     * stream is cut short); returns how many.
     */
    int read(byte[] buffer, int offset, int length) throws IOException {
        int done = 0;
        while (done < length && !gzipCut) {
            int n;
            try {
                n = in.read(buffer, offset + done, length - done);
            } catch (EOFException cutShort) {
                if (!gzip) {
                    throw cutShort;
                }
                gzipCut = true; // GZIPInputStream: the compressed stream ends before its trailer
                break;
            } catch (ZipException e) {
                throw new PcapFormatException("not a readable gzip file: " + e.getMessage(), e);
            } catch (IOException e) {
                if (gzip) {
                    throw new PcapFormatException("cannot decompress the gzip file: " + e.getMessage(), e);
                }
                throw e;
            }
            if (n < 0) {
                break;
            }
            done += n;
        }
        position += done;
        return done;
    }

    /** {@code true} for a pcapng capture, {@code false} for a classic pcap one. */
    public boolean pcapng() {
        return pcapng;
    }

    /** Classic pcap: the link type of every record. pcapng: {@code null} (see {@link #linkType(PcapRecord)}). */
    public LinkType linkType() {
        return linkType;
    }

    /** Classic pcap: the {@code LINKTYPE_} code of the global header; pcapng: 0. */
    public int linkTypeCode() {
        return linkTypeCode;
    }

    /** The link type of the interface that captured {@code record}, or {@code null} if not decodable. */
    public LinkType linkType(PcapRecord record) {
        int id = record.interfaceId();
        return id >= 0 && id < interfaceLinkTypes.size() ? interfaceLinkTypes.get(id) : null;
    }

    /** The link type of each interface described so far, by interface id ({@code null}: not decodable). */
    public List<LinkType> interfaceLinkTypes() {
        return Collections.unmodifiableList(interfaceLinkTypes);
    }

    /** Called by {@link PcapNgReader} for each Interface Description Block. */
    void interfaceDescribed(LinkType type) {
        interfaceLinkTypes.add(type);
    }

    /** Classic pcap: {@code true} for nanosecond timestamps (magic 0xa1b23c4d). */
    public boolean nanosecond() {
        return nanosecond;
    }

    /** {@code true} when the capture (pcapng: its first section) was written big-endian. */
    public boolean bigEndian() {
        return bigEndian;
    }

    /** The format's major version: 2 for classic pcap, 1 for pcapng. */
    public int versionMajor() {
        return versionMajor;
    }

    /** The format's minor version. */
    public int versionMinor() {
        return versionMinor;
    }

    /** Classic pcap: the {@code snaplen} field; pcapng: 0 (each interface has its own). */
    public int snapLength() {
        return snapLength;
    }

    /** The pcapng block reader, or {@code null} for a classic capture. */
    PcapNgReader pcapngBlocks() {
        return pcapngBlocks;
    }

    /** The octets read so far from the (decompressed) capture, headers included. */
    public long octetsRead() {
        return position;
    }

    /**
     * What was wrong with an otherwise readable capture once {@link #next()} has returned
     * {@code null} (its last record cut short, its gzip stream cut short), or {@code null}.
     */
    public String warning() {
        if (!gzipCut) {
            return recordWarning;
        }
        String cut = "the gzip-compressed file is cut short; read the " + position + " octets before the cut";
        return recordWarning == null ? cut : cut + "; " + recordWarning;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** {@code e} with the file's name in front of its message, as every message from a file has. */
    private PcapFormatException named(PcapFormatException e) {
        return name == null ? e : new PcapFormatException(name + ": " + e.getMessage(), e);
    }

    private static PcapFormatException error(String message) {
        return new PcapFormatException(message);
    }

    private static String prefix(String name) {
        return name == null ? "" : name + ": ";
    }
}
