package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;

/**
 * Writes a classic libpcap file: little-endian, version 2.4, snap length 262144, microsecond
 * (magic 0xa1b2c3d4) or nanosecond (magic 0xa1b23c4d) timestamps. See {@link PcapFile} for the
 * layout.
 *
 * <p>A frame longer than the snap length is cut to it, with its full length kept in
 * {@code orig_len}, as a capturing host would do. The writer does not buffer: hand it a
 * {@link java.io.BufferedOutputStream} when writing to a file. {@link #close()} closes the stream.
 */
public final class PcapWriter extends StreamCaptureWriter {

    /** The snap length written into the global header (tcpdump's default, 256 KiB). */
    public static final int SNAP_LENGTH = 262_144;

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final boolean nanosecond;
    private final byte[] header = new byte[PcapFile.RECORD_HEADER_LENGTH];

    /**
     * Starts a file on {@code out} by writing its global header.
     *
     * @param nanosecond {@code true} for nanosecond timestamps, {@code false} for microseconds
     */
    public PcapWriter(OutputStream out, LinkType linkType, boolean nanosecond) throws IOException {
        this(out, linkType, nanosecond, SNAP_LENGTH);
    }

    /**
     * As {@link #PcapWriter(OutputStream, LinkType, boolean)}, announcing {@code snapLength} (the
     * most octets of a packet a record holds) in the global header, as tcpdump's {@code -s} does;
     * the caller cuts each packet with {@link #writeCut}.
     */
    public PcapWriter(OutputStream out, LinkType linkType, boolean nanosecond, int snapLength) throws IOException {
        super(out, linkType);
        this.nanosecond = nanosecond;
        byte[] global = new byte[PcapFile.GLOBAL_HEADER_LENGTH];
        putInt32(global, 0, nanosecond ? PcapFile.MAGIC_NANOSECONDS : PcapFile.MAGIC_MICROSECONDS);
        putInt16(global, 4, 2); // version_major
        putInt16(global, 6, 4); // version_minor
        putInt32(global, 8, 0); // thiszone: UTC
        putInt32(global, 12, 0); // sigfigs
        putInt32(global, 16, snapLength);
        putInt32(global, 20, linkType.code());
        out.write(global);
    }

    /** {@code true} when timestamps are written in nanoseconds. */
    public boolean nanosecond() {
        return nanosecond;
    }

    /** Writes one record holding all of {@code frame}. */
    @Override
    public void write(long timestampNanos, byte[] frame) throws IOException {
        write(timestampNanos, frame, 0, frame.length);
    }

    /**
     * Writes one record holding {@code length} bytes of {@code frame} from {@code offset}.
     *
     * @param timestampNanos capture time in nanoseconds since the Unix epoch, from 0 to the end of
     *                       2106 (the unsigned 32-bit {@code ts_sec}); a microsecond file drops the
     *                       sub-microsecond part
     * @throws IllegalArgumentException when the timestamp is out of range
     */
    public void write(long timestampNanos, byte[] frame, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, frame.length);
        record(timestampNanos, frame, offset, Math.min(length, SNAP_LENGTH), length);
    }

    @Override
    public void writeCut(long timestampNanos, byte[] frame, int captured, int originalLength) throws IOException {
        Objects.checkFromIndexSize(0, captured, frame.length);
        record(timestampNanos, frame, 0, Math.min(captured, SNAP_LENGTH), Math.max(originalLength, captured));
    }

    private void record(long timestampNanos, byte[] frame, int offset, int captured, int length) throws IOException {
        long seconds = Math.floorDiv(timestampNanos, NANOS_PER_SECOND);
        long fraction = Math.floorMod(timestampNanos, NANOS_PER_SECOND);
        if (seconds < 0 || seconds > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("timestamp " + timestampNanos
                    + " ns is outside the pcap range (1970 to 2106)");
        }
        putInt32(header, 0, (int) seconds);
        putInt32(header, 4, (int) (nanosecond ? fraction : fraction / 1000));
        putInt32(header, 8, captured);
        putInt32(header, 12, length);
        out.write(header);
        out.write(frame, offset, captured);
        recordWritten();
    }
}
