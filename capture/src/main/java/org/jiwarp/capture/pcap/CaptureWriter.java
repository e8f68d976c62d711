package org.jiwarp.capture.pcap;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes packets to a capture file, classic pcap ({@link PcapWriter}) or pcapng ({@link PcapNgWriter}). */
public interface CaptureWriter extends Closeable {

    /** Writes one packet captured at {@code timestampNanos} since the epoch. */
    void write(long timestampNanos, byte[] frame) throws IOException;

    /**
     * Writes the first {@code captured} octets of a packet that was {@code originalLength} octets on
     * the wire (a snap length, as tcpdump's {@code -s}).
     */
    void writeCut(long timestampNanos, byte[] frame, int captured, int originalLength) throws IOException;

    /** Pushes what was written to the underlying stream. */
    void flush() throws IOException;

    /**
     * Opens {@code file} for writing in the format its name asks for: pcapng when it ends in
     * {@code .pcapng} (as Wireshark names them), classic pcap with nanosecond timestamps otherwise.
     */
    static CaptureWriter open(Path file, LinkType linkType) throws IOException {
        OutputStream out = new BufferedOutputStream(Files.newOutputStream(file));
        try {
            return isPcapNg(file) ? new PcapNgWriter(out, linkType) : new PcapWriter(out, linkType, true);
        } catch (IOException | RuntimeException e) {
            out.close();
            throw e;
        }
    }

    /** {@code true} when {@code file}'s name ends in {@code .pcapng} (any case). */
    static boolean isPcapNg(Path file) {
        Path name = file.getFileName();
        return name != null && name.toString().toLowerCase(java.util.Locale.ROOT).endsWith(".pcapng");
    }
}
