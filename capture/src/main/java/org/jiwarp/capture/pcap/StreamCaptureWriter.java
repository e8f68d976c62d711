package org.jiwarp.capture.pcap;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;

/**
 * What the pcap and pcapng writers share: the stream they write to, the link type of their one
 * interface, the count of packets written, and little-endian fields (both formats are written in
 * the writing host's order, and jiwarp always writes little-endian). Not thread-safe.
 */
abstract class StreamCaptureWriter implements CaptureWriter {

    protected final OutputStream out;
    private final LinkType linkType;
    private int records;

    StreamCaptureWriter(OutputStream out, LinkType linkType) {
        this.out = Objects.requireNonNull(out, "out");
        this.linkType = Objects.requireNonNull(linkType, "linkType");
    }

    /** The link type of the file's one interface. */
    public final LinkType linkType() {
        return linkType;
    }

    /** The number of packets written so far. */
    public final int records() {
        return records;
    }

    /** Counts one packet written; called by a writer once the packet's record is complete. */
    final void recordWritten() {
        records++;
    }

    /** Flushes the underlying stream. */
    @Override
    public final void flush() throws IOException {
        out.flush();
    }

    /** Flushes and closes the underlying stream. */
    @Override
    public final void close() throws IOException {
        try {
            out.flush();
        } finally {
            out.close();
        }
    }

    static void putInt16(byte[] b, int offset, int value) {
        b[offset] = (byte) value;
        b[offset + 1] = (byte) (value >>> 8);
    }

    static void putInt32(byte[] b, int offset, int value) {
        b[offset] = (byte) value;
        b[offset + 1] = (byte) (value >>> 8);
        b[offset + 2] = (byte) (value >>> 16);
        b[offset + 3] = (byte) (value >>> 24);
    }
}
