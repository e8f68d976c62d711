package org.jiwarp.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.jiwarp.capture.pcap.CaptureWriter;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.PcapWriter;

/** Joins the RNIC's per-connection captures into one file, records in time order, pcapng when its name ends in .pcapng. */
final class PcapMerge {

    private PcapMerge() {
    }

    static int merge(Path directory, Path out) throws IOException {
        List<PcapRecord> records = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".pcap")).sorted()::iterator) {
                records.addAll(PcapFile.read(file).records());
            }
        }
        records.sort(Comparator.comparingLong(PcapRecord::timestampNanos));
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        // A name ending in .pcapng gets pcapng, as Wireshark's tools do; anything else classic pcap.
        try (CaptureWriter writer = CaptureWriter.isPcapNg(out) ? CaptureWriter.open(out, LinkType.ETHERNET)
                : new PcapWriter(new BufferedOutputStream(Files.newOutputStream(out)), LinkType.ETHERNET, false)) {
            for (PcapRecord record : records) {
                writer.write(record.timestampNanos(), record.data());
            }
        }
        return records.size();
    }
}
