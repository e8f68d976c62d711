package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes a pcapng file (the IETF OPSAWG pcapng draft): one little-endian section, one interface
 * with nanosecond timestamps ({@code if_tsresol} = 9), then one Enhanced Packet Block per packet.
 * See {@link PcapNgReader} for the block layouts. Not thread-safe.
 */
public final class PcapNgWriter extends StreamCaptureWriter {

    private static final int ENHANCED_PACKET_HEADER_LENGTH = 28;
    private static final byte[] PADDING = new byte[3];

    private final byte[] header = new byte[ENHANCED_PACKET_HEADER_LENGTH];
    private final byte[] trailer = new byte[4];

    /** Writes the Section Header and Interface Description blocks. */
    public PcapNgWriter(OutputStream out, LinkType linkType) throws IOException {
        this(out, linkType, PcapWriter.SNAP_LENGTH);
    }

    /** As {@link #PcapNgWriter(OutputStream, LinkType)}, announcing {@code snapLength} for its interface. */
    public PcapNgWriter(OutputStream out, LinkType linkType, int snapLength) throws IOException {
        super(out, linkType);
        byte[] section = new byte[28];
        putInt32(section, 0, PcapNgReader.SECTION_HEADER);
        putInt32(section, 4, section.length);
        putInt32(section, 8, PcapNgReader.BYTE_ORDER_MAGIC);
        putInt16(section, 12, 1); // major version
        putInt16(section, 14, 0); // minor version
        putInt32(section, 16, -1); // section length: not specified
        putInt32(section, 20, -1);
        putInt32(section, 24, section.length);
        out.write(section);
        byte[] description = new byte[32];
        putInt32(description, 0, PcapNgReader.INTERFACE_DESCRIPTION);
        putInt32(description, 4, description.length);
        putInt16(description, 8, linkType.code());
        putInt32(description, 12, snapLength);
        putInt16(description, 16, PcapNgReader.OPTION_IF_TSRESOL);
        putInt16(description, 18, 1);
        description[20] = 9; // 10^-9 seconds
        putInt16(description, 24, PcapNgReader.OPTION_END);
        putInt16(description, 26, 0);
        putInt32(description, 28, description.length);
        out.write(description);
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
        int length = ENHANCED_PACKET_HEADER_LENGTH + padded + trailer.length;
        putInt32(header, 0, PcapNgReader.ENHANCED_PACKET);
        putInt32(header, 4, length);
        putInt32(header, 8, 0); // interface 0
        putInt32(header, 12, (int) (timestampNanos >>> 32));
        putInt32(header, 16, (int) timestampNanos);
        putInt32(header, 20, captured);
        putInt32(header, 24, Math.max(originalLength, captured));
        out.write(header);
        out.write(frame, 0, captured);
        out.write(PADDING, 0, padded - captured);
        putInt32(trailer, 0, length);
        out.write(trailer);
        recordWritten();
    }
}
