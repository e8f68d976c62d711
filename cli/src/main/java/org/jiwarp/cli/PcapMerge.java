package org.jiwarp.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.jiwarp.capture.pcap.CaptureWriter;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapNgWriter;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapFormatException;
import org.jiwarp.capture.pcap.PcapRecord;

/**
 * Joins the RNIC's per-connection captures into one file (pcapng when its name ends in .pcapng,
 * classic pcap otherwise), records in time order,
 * each cut to its Ethernet, IP and TCP headers plus {@code snapLength} octets of TCP payload (0:
 * whole), with its full length kept in {@code orig_len} as tcpdump's {@code -s} does.
 *
 * <p>It also runs from a shutdown hook after Ctrl-C, while connections may still be writing: a
 * per-connection file cut inside a record yields the records before the cut, and one with no
 * complete header yet is skipped. The result is written beside the target and moved over it, so
 * the target is never a half-written file.
 */
final class PcapMerge {

    private static final int ETHERNET_HEADER = 14;
    private static final int ETHERTYPE_OFFSET = 12;
    private static final int ETHERTYPE_IPV6 = 0x86DD;
    private static final int IPV6_HEADER = 40;
    private static final int TCP_DATA_OFFSET = 12;

    private PcapMerge() {
    }

    static int merge(Path directory, Path out, int snapLength) throws IOException {
        List<PcapRecord> records = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".pcap")).sorted()::iterator) {
                try {
                    records.addAll(PcapFile.read(file).records());
                } catch (PcapFormatException notYetWritten) {
                    // A connection whose file has no complete global header yet: nothing to keep.
                }
            }
        }
        records.sort(Comparator.comparingLong(PcapRecord::timestampNanos));
        Path target = out.toAbsolutePath();
        Path part = target.resolveSibling(target.getFileName() + ".part");
        // A name ending in .pcapng gets pcapng, as Wireshark's tools do; anything else classic pcap.
        int fileSnapLength = snapLength == 0 ? PcapWriter.SNAP_LENGTH : ETHERNET_HEADER + IPV6_HEADER + 60 + snapLength;
        try (CaptureWriter writer = CaptureWriter.isPcapNg(out)
                ? new PcapNgWriter(new BufferedOutputStream(Files.newOutputStream(part)), LinkType.ETHERNET,
                        fileSnapLength)
                : new PcapWriter(new BufferedOutputStream(Files.newOutputStream(part)), LinkType.ETHERNET, false,
                        fileSnapLength)) {
            for (PcapRecord record : records) {
                byte[] data = record.data();
                int captured = snapLength == 0 ? data.length : Math.min(data.length, headers(data) + snapLength);
                writer.writeCut(record.timestampNanos(), data, captured, record.originalLength());
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(part);
            throw e;
        }
        Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return records.size();
    }

    /** The length of an Ethernet frame's Ethernet, IP and TCP headers (the RNIC writes only TCP). */
    static int headers(byte[] frame) {
        if (frame.length < ETHERNET_HEADER + 1) {
            return frame.length;
        }
        int etherType = (frame[ETHERTYPE_OFFSET] & 0xFF) << 8 | frame[ETHERTYPE_OFFSET + 1] & 0xFF;
        int ip = etherType == ETHERTYPE_IPV6 ? IPV6_HEADER : (frame[ETHERNET_HEADER] & 0x0F) * 4;
        int tcp = ETHERNET_HEADER + ip;
        if (frame.length < tcp + TCP_DATA_OFFSET + 1) {
            return frame.length;
        }
        return Math.min(frame.length, tcp + ((frame[tcp + TCP_DATA_OFFSET] & 0xF0) >> 4) * 4);
    }
}
