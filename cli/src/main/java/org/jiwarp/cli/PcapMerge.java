package org.jiwarp.cli;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.stream.Stream;
import org.jiwarp.capture.pcap.CaptureReader;
import org.jiwarp.capture.pcap.CaptureWriter;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapNgWriter;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.rnic.cm.PcapCapture;

/**
 * Joins the RNIC's per-connection captures into one file (pcapng when its name ends in .pcapng,
 * classic pcap otherwise), records in time order,
 * each cut to its Ethernet, IP and TCP headers plus {@code snapLength} octets of TCP payload (0:
 * whole), with its full length kept in {@code orig_len} as tcpdump's {@code -s} does.
 *
 * <p><b>A k-way merge, streamed.</b> Each per-connection file is in time order already (the RNIC's
 * capture clock never goes back: every record is stamped with the later of now and 1 µs after the
 * one before), so the merge holds one record per file: it writes the earliest of them and reads
 * the next record of that file. Records with equal timestamps go in the order of the files' names,
 * then of the files. Memory does not grow with the captures, and neither does their size matter.
 *
 * <p>It also runs from a shutdown hook after Ctrl-C, while connections may still be writing: each
 * file is read up to the length it had when the merge began (so a run still writing cannot keep
 * the merge going), a file cut inside a record yields the records before the cut, and a file
 * without a complete global header yet is skipped. Any other file that cannot be read is an error:
 * the merge never drops a connection silently.
 *
 * <p>The result is written beside the target and moved over it, so the target is never a
 * half-written file. When the disk fills, what was written is kept under the target's name (a
 * capture cut short, which tshark and {@code jiwarp decode} read) and the error says how much that is.
 * A connection whose capture stopped during the run (the RNIC leaves a {@code .stopped} file beside
 * it) is merged up to where it stopped, and the merge then fails saying so.
 */
final class PcapMerge {

    private static final int ETHERNET_HEADER = 14;
    private static final int ETHERTYPE_OFFSET = 12;
    private static final int ETHERTYPE_IPV6 = 0x86DD;
    private static final int IPV6_HEADER = 40;
    private static final int TCP_DATA_OFFSET = 12;
    private static final int OUTPUT_BUFFER = 1 << 16;

    private PcapMerge() {
    }

    /** What a merge wrote: {@code packets} records, {@code octets} octets, into {@code file}. */
    record Merged(long packets, long octets, Path file) {

        /** "1 234 packets (5.2 GiB) in FILE". */
        String describe() {
            return packets + " packet" + (packets == 1 ? "" : "s") + " (" + size(octets) + ") to " + file;
        }
    }

    /** One per-connection capture being merged, with the record it offers next. */
    private static final class Source {
        final CaptureReader reader;
        final int order;
        PcapRecord next;

        Source(CaptureReader reader, int order) {
            this.reader = reader;
            this.order = order;
        }
    }

    /**
     * Merges every {@code *.pcap} file of {@code directory} into {@code out}.
     *
     * @throws DiskFullException when the disk filled while writing {@code out} (which then holds
     *                           what fitted)
     * @throws IOException       when a per-connection capture cannot be read, or {@code out} written
     */
    static Merged merge(Path directory, Path out, int snapLength) throws IOException {
        return merge(directory, out, snapLength, file -> Files.newOutputStream(file));
    }

    /** Opens the file a merge writes (a test's stand-in runs out of space). */
    interface Output {
        OutputStream open(Path file) throws IOException;
    }

    /** As {@link #merge(Path, Path, int)}, writing through {@code output}. */
    static Merged merge(Path directory, Path out, int snapLength, Output output) throws IOException {
        List<Path> files;
        try (Stream<Path> listed = Files.list(directory)) {
            files = listed.filter(p -> p.toString().endsWith(".pcap")).sorted().toList();
        }
        List<Source> sources = new ArrayList<>();
        try {
            for (Path file : files) {
                long length = Files.size(file);
                if (length < PcapFile.GLOBAL_HEADER_LENGTH) {
                    continue; // a connection whose capture has no complete global header yet: nothing to keep
                }
                Source source = new Source(CaptureReader.open(file, length), sources.size());
                sources.add(source);
                source.next = source.reader.next();
            }
            Merged merged = write(sources, out, snapLength, output);
            stoppedEarly(directory, merged);
            return merged;
        } finally {
            for (Source source : sources) {
                source.reader.close();
            }
        }
    }

    private static Merged write(List<Source> sources, Path out, int snapLength, Output output) throws IOException {
        PriorityQueue<Source> earliest = new PriorityQueue<>(Math.max(1, sources.size()),
                Comparator.<Source>comparingLong(s -> s.next.timestampNanos()).thenComparingInt(s -> s.order));
        for (Source source : sources) {
            if (source.next != null) {
                earliest.add(source);
            }
        }
        Path target = out.toAbsolutePath();
        Path part = target.resolveSibling(target.getFileName() + ".part");
        // A name ending in .pcapng gets pcapng, as Wireshark's tools do; anything else classic pcap.
        int fileSnapLength = snapLength == 0 ? PcapWriter.SNAP_LENGTH : ETHERNET_HEADER + IPV6_HEADER + 60 + snapLength;
        // Two counts: what the writer produced (above the buffer), what reached the file (below it).
        Counted onDisk = new Counted(output.open(part));
        Counted produced = new Counted(new BufferedOutputStream(onDisk, OUTPUT_BUFFER));
        // Where each packet not yet wholly in the file ends, oldest first: at most a buffer's worth.
        ArrayDeque<Long> notOnDisk = new ArrayDeque<>();
        long handed = 0;
        try (CaptureWriter writer = CaptureWriter.isPcapNg(out)
                ? new PcapNgWriter(produced, LinkType.ETHERNET, fileSnapLength)
                : new PcapWriter(produced, LinkType.ETHERNET, false, fileSnapLength)) {
            while (!earliest.isEmpty()) {
                Source source = earliest.poll();
                PcapRecord record = source.next;
                byte[] data = record.data();
                int captured = snapLength == 0 ? data.length : Math.min(data.length, headers(data) + snapLength);
                writer.writeCut(record.timestampNanos(), data, captured, record.originalLength());
                handed++;
                notOnDisk.addLast(produced.octets);
                while (!notOnDisk.isEmpty() && notOnDisk.peekFirst() <= onDisk.octets) {
                    notOnDisk.pollFirst();
                }
                source.next = source.reader.next();
                if (source.next != null) {
                    earliest.add(source);
                }
            }
        } catch (IOException e) {
            closeQuietly(produced);
            if (!isDiskFull(e)) {
                Files.deleteIfExists(part);
                throw e;
            }
            // Keep what fitted: a capture cut short is still one tshark and jiwarp decode read.
            // The failed write may have put part of its octets in the file: the file's length says.
            long octets = Files.size(part);
            long packets = handed - notOnDisk.stream().filter(end -> end > octets).count();
            Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            throw new DiskFullException("the disk is full: wrote " + packets + " packet" + (packets == 1 ? "" : "s")
                    + " (" + size(octets) + ") to " + out + " before running out of space; the capture is "
                    + "incomplete", e);
        } catch (RuntimeException e) {
            closeQuietly(produced);
            Files.deleteIfExists(part);
            throw e;
        }
        Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return new Merged(handed, onDisk.octets, out);
    }

    /**
     * Fails when a connection's capture stopped before the connection ended (the RNIC leaves a
     * {@code .stopped} file beside it, holding the reason): the merged capture is complete up to
     * there, and the user must know it is not complete after.
     */
    private static void stoppedEarly(Path directory, Merged merged) throws IOException {
        List<String> connections = new ArrayList<>();
        String reason = null;
        boolean diskFull = false;
        try (Stream<Path> listed = Files.list(directory)) {
            for (Path word : (Iterable<Path>) listed.filter(p -> p.toString().endsWith(PcapCapture.STOPPED_SUFFIX))
                    .sorted()::iterator) {
                String name = word.getFileName().toString();
                connections.add(name.substring(0, name.indexOf('.')));
                String said = Files.readString(word).strip();
                // Nothing said: the reason did not fit, as on a full disk.
                diskFull |= said.isEmpty() || saysDiskFull(said);
                reason = said.isEmpty() ? reason : said;
            }
        }
        if (connections.isEmpty()) {
            return;
        }
        String which = (connections.size() == 1 ? "the capture of connection " : "the captures of connections ")
                + String.join(", ", connections) + " stopped early";
        if (diskFull) {
            throw new DiskFullException("the disk filled during the run: " + which + "; wrote " + merged.describe()
                    + ", complete up to there", null);
        }
        throw new IOException(which + (reason == null ? "" : " (" + reason + ")") + "; wrote " + merged.describe()
                + ", complete up to there");
    }

    /** A stream that counts the octets written through it (once each write has succeeded). */
    private static final class Counted extends FilterOutputStream {
        long octets;

        Counted(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            octets++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            octets += len;
        }
    }

    /** Closes the file after a failure (the writer is not there to, when its header failed). */
    private static void closeQuietly(OutputStream out) {
        try {
            out.close();
        } catch (IOException alreadyFailing) {
            // The first failure is the one reported.
        }
    }

    /** {@code true} for the operating system's "no space left on device" (or quota) error. */
    static boolean isDiskFull(IOException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && saysDiskFull(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    /** {@code true} for the operating system's words for ENOSPC and EDQUOT. */
    private static boolean saysDiskFull(String message) {
        return message.contains("No space left on device") || message.contains("Disk quota exceeded");
    }

    /** The disk filled while the merge wrote; the message is one sentence for the user. */
    static final class DiskFullException extends IOException {
        private static final long serialVersionUID = 1L;

        DiskFullException(String message, IOException cause) {
            super(message, cause);
        }
    }

    /** "812 octets", "3.4 MiB", "5.21 GiB": binary units, as ls -h. */
    static String size(long octets) {
        if (octets < 1024) {
            return octets + " octets";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double value = octets;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, value < 10 ? "%.2f %s" : "%.1f %s", value, units[unit]);
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
