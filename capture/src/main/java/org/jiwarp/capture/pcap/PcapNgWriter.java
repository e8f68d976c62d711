package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;

/**
 * Writes a pcapng file (the IETF OPSAWG pcapng draft): one little-endian section, one interface
 * with nanosecond timestamps ({@code if_tsresol} = 9), then one Enhanced Packet Block per packet.
 * See {@link PcapNgReader} for the block layouts. Not thread-safe.
 */
public final class PcapNgWriter implements CaptureWriter {

    private final OutputStream out;
    private final LinkType linkType;
    private int records;

    /** Writes the Section Header and Interface Description blocks. */
    public PcapNgWriter(OutputStream out, LinkType linkType) throws IOException {
        this(out, linkType, PcapWriter.SNAP_LENGTH);
    }

    /** As {@link #PcapNgWriter(OutputStream, LinkType)}, announcing {@code snapLength} for its interface. */
    public PcapNgWriter(OutputStream out, LinkType linkType, int snapLength) throws IOException {
        this.out = Objects.requireNonNull(out, "out");
        this.linkType = Objects.requireNonNull(linkType, "linkType");
        byte[] section = new byte[28];
        PcapWriter.putInt32(section, 0, PcapNgReader.SECTION_HEADER);
        PcapWriter.putInt32(section, 4, section.length);
        PcapWriter.putInt32(section, 8, PcapNgReader.BYTE_ORDER_MAGIC);
        PcapWriter.putInt16(section, 12, 1); // major version
        PcapWriter.putInt16(section, 14, 0); // minor version
        PcapWriter.putInt32(section, 16, -1); // section length: not specified
        PcapWriter.putInt32(section, 20, -1);
        PcapWriter.putInt32(section, 24, section.length);
        out.write(section);
        byte[] description = new byte[32];
        PcapWriter.putInt32(description, 0, PcapNgReader.INTERFACE_DESCRIPTION);
        PcapWriter.putInt32(description, 4, description.length);
        PcapWriter.putInt16(description, 8, linkType.code());
        PcapWriter.putInt32(description, 12, snapLength);
        PcapWriter.putInt16(description, 16, PcapNgReader.OPTION_IF_TSRESOL);
        PcapWriter.putInt16(description, 18, 1);
        description[20] = 9; // 10^-9 seconds
        PcapWriter.putInt16(description, 24, PcapNgReader.OPTION_END);
        PcapWriter.putInt16(description, 26, 0);
        PcapWriter.putInt32(description, 28, description.length);
        out.write(description);
    }

    /** The link type of the file's one interface. */
    public LinkType linkType() {
        return linkType;
    }

    /** The number of packets written so far. */
    public int records() {
        return records;
    }

    @Override
    public void write(long timestampNanos, byte[] frame) throws IOException {
        writeCut(timestampNanos, frame, frame.length, frame.length);
    }

    @Override
    public void writeCut(long timestampNanos, byte[] frame, int cut, int originalLength) throws IOException {
        if (timestampNanos < 0) {
            throw new IllegalArgumentException("timestamp " + timestampNanos + " ns is before 1970");
        }
        int captured = Math.min(Math.min(cut, frame.length), PcapWriter.SNAP_LENGTH);
        int padded = captured + 3 & ~3;
        byte[] header = new byte[28];
        int length = 32 + padded;
        PcapWriter.putInt32(header, 0, PcapNgReader.ENHANCED_PACKET);
        PcapWriter.putInt32(header, 4, length);
        PcapWriter.putInt32(header, 8, 0); // interface 0
        PcapWriter.putInt32(header, 12, (int) (timestampNanos >>> 32));
        PcapWriter.putInt32(header, 16, (int) timestampNanos);
        PcapWriter.putInt32(header, 20, captured);
        PcapWriter.putInt32(header, 24, Math.max(originalLength, captured));
        out.write(header);
        out.write(frame, 0, captured);
        out.write(new byte[padded - captured]);
        byte[] trailer = new byte[4];
        PcapWriter.putInt32(trailer, 0, length);
        out.write(trailer);
        records++;
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        try {
            out.flush();
        } finally {
            out.close();
        }
    }
}
