package org.jiwarp.conformance.siw;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.capture.pcap.PacketParser;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.TcpSegment;

/**
 * Windows on the capture QEMU's filter-dump writes while the peer runs ({@link SiwPeer#pcap()}),
 * which holds every frame of the boot: {@link #mark()} before a run, {@link #connection} after it
 * cuts out the one TCP connection that run made, byte for byte, into a pcap of its own.
 *
 * <pre>
 *   siw-peer.pcap   | header | ... earlier runs ... | mark() -&gt; | this run's frames ... | (QEMU appends)
 *   connection(mark, port, out): header + the records of the first connection opened to port after mark
 * </pre>
 *
 * <p>The file is written while it is read: {@link #mark()} walks only whole records (headers, not
 * data), and {@link #connection} drops a record QEMU has not finished writing, as tshark does.
 */
final class GuestCapture {

    private static final int GLOBAL_HEADER_LENGTH = PcapFile.GLOBAL_HEADER_LENGTH;
    private static final int RECORD_HEADER_LENGTH = PcapFile.RECORD_HEADER_LENGTH;
    private static final int INCL_LEN_OFFSET = 8;

    private final Path file;
    /** The end of the last whole record seen; a record boundary. */
    private long scanned = GLOBAL_HEADER_LENGTH;
    private ByteOrder order;

    GuestCapture(Path file) {
        this.file = file;
    }

    /** The file offset just past the last whole record written so far: where the next run's frames start. */
    synchronized long mark() throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size < GLOBAL_HEADER_LENGTH) {
                return GLOBAL_HEADER_LENGTH; // QEMU has not written the header yet: everything is to come
            }
            ByteOrder byteOrder = order(channel);
            ByteBuffer header = ByteBuffer.allocate(RECORD_HEADER_LENGTH).order(byteOrder);
            while (scanned + RECORD_HEADER_LENGTH <= size) {
                header.clear();
                channel.read(header, scanned);
                long next = scanned + RECORD_HEADER_LENGTH + (header.getInt(INCL_LEN_OFFSET) & 0xFFFF_FFFFL);
                if (next > size) {
                    break;
                }
                scanned = next;
            }
            return scanned;
        }
    }

    /**
     * Writes to {@code out} the pcap header and every record, from {@code mark} on, of the first TCP
     * connection whose SYN went to {@code port} (either address), in both directions.
     *
     * @return the number of records written; 0 when no such connection started after the mark
     */
    int connection(long mark, int port, Path out) throws IOException {
        byte[] header;
        byte[] window;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            header = read(channel, 0, GLOBAL_HEADER_LENGTH);
            window = read(channel, mark, (int) Math.max(0, channel.size() - mark));
        }
        byte[] bytes = new byte[header.length + window.length];
        System.arraycopy(header, 0, bytes, 0, header.length);
        System.arraycopy(window, 0, bytes, header.length, window.length);
        PcapFile pcap = PcapFile.read(bytes);
        List<PcapRecord> records = pcap.records();
        TcpSegment syn = null;
        int written = 0;
        try (OutputStream stream = Files.newOutputStream(out)) {
            stream.write(header);
            int offset = GLOBAL_HEADER_LENGTH;
            for (PcapRecord record : records) {
                int length = RECORD_HEADER_LENGTH + record.capturedLength();
                TcpSegment segment = PacketParser.parse(record, pcap.linkType());
                if (segment != null) {
                    if (syn == null && segment.syn() && !segment.ack() && segment.destinationPort() == port) {
                        syn = segment;
                    }
                    if (syn != null && sameConnection(syn, segment)) {
                        stream.write(bytes, offset, length);
                        written++;
                    }
                }
                offset += length;
            }
        }
        return written;
    }

    private static boolean sameConnection(TcpSegment syn, TcpSegment s) {
        boolean forward = s.sourcePort() == syn.sourcePort() && s.destinationPort() == syn.destinationPort()
                && s.source().equals(syn.source()) && s.destination().equals(syn.destination());
        boolean backward = s.sourcePort() == syn.destinationPort() && s.destinationPort() == syn.sourcePort()
                && s.source().equals(syn.destination()) && s.destination().equals(syn.source());
        return forward || backward;
    }

    private ByteOrder order(FileChannel channel) throws IOException {
        if (order == null) {
            byte[] magic = read(channel, 0, 4);
            int big = ByteBuffer.wrap(magic).getInt();
            order = big == PcapFile.MAGIC_MICROSECONDS || big == PcapFile.MAGIC_NANOSECONDS
                    ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        }
        return order;
    }

    private static byte[] read(FileChannel channel, long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position + buffer.position());
            if (n < 0) {
                break;
            }
        }
        return Arrays.copyOf(buffer.array(), buffer.position());
    }
}
