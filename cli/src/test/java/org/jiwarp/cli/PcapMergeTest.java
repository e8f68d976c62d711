package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.PcapWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Joining per-connection captures: a k-way merge in time order, a connection file that cannot be
 * read is an error (never skipped), and a disk that fills leaves what fitted with one sentence.
 */
class PcapMergeTest {

    @TempDir
    Path temp;

    @Test
    void recordsComeOutInTimeOrderWithTiesInTheOrderOfTheFiles() throws IOException {
        Path directory = Files.createDirectories(temp.resolve("connections"));
        // Each file in time order, as the RNIC writes them; the first byte says file and record.
        write(directory.resolve("1000-2000.pcap"), new long[] {10, 20, 20, 50}, 0x10);
        write(directory.resolve("1001-2000.pcap"), new long[] {5, 20, 60}, 0x20);
        write(directory.resolve("1002-2000.pcap"), new long[] {}, 0x30);
        Files.write(directory.resolve("1003-2000.pcap"), new byte[10]); // no complete global header yet
        Path out = temp.resolve("merged.pcap");

        PcapMerge.Merged merged = PcapMerge.merge(directory, out, 0);

        List<String> order = new ArrayList<>();
        for (PcapRecord record : PcapFile.read(out).records()) {
            order.add(record.timestampNanos() / 1000 + ":" + Integer.toHexString(record.data()[0]));
        }
        assertEquals(List.of("5:20", "10:10", "20:11", "20:12", "20:21", "50:13", "60:22"), order);
        assertEquals(7, merged.packets());
        assertEquals(Files.size(out), merged.octets());
        assertEquals("7 packets (" + Files.size(out) + " octets) to " + out, merged.describe());
    }

    @Test
    void aConnectionFileThatCannotBeReadIsAnErrorNotASkippedConnection() throws IOException {
        Path directory = Files.createDirectories(temp.resolve("connections"));
        write(directory.resolve("1000-2000.pcap"), new long[] {10, 20}, 0x10);
        Path corrupt = directory.resolve("1001-2000.pcap");
        write(corrupt, new long[] {15}, 0x20);
        byte[] bytes = Files.readAllBytes(corrupt);
        bytes[4] = 3; // version 3.4
        Files.write(corrupt, bytes);
        Path out = temp.resolve("merged.pcap");

        IOException e = assertThrows(IOException.class, () -> PcapMerge.merge(directory, out, 0));

        assertEquals(corrupt + ": unsupported pcap version 3.4 (expected 2.4)", e.getMessage());
        assertFalse(Files.exists(out));
        assertFalse(Files.exists(temp.resolve("merged.pcap.part")));
    }

    @Test
    void aDiskThatFillsLeavesTheRecordsThatFitAndSaysHowMany() throws IOException {
        Path directory = Files.createDirectories(temp.resolve("connections"));
        long[] times = new long[2000];
        for (int i = 0; i < times.length; i++) {
            times[i] = i;
        }
        write(directory.resolve("1000-2000.pcap"), times, 0x10);
        Path out = temp.resolve("merged.pcap");
        long room = 100_000; // about 860 records of 116 octets, not on a record's boundary

        PcapMerge.DiskFullException e = assertThrows(PcapMerge.DiskFullException.class,
                () -> PcapMerge.merge(directory, out, 0, file -> new Filling(Files.newOutputStream(file), room)));

        PcapFile kept = PcapFile.read(out);
        int packets = kept.records().size();
        assertTrue(packets > 800 && packets < 2000, packets + " packets");
        assertEquals(room, Files.size(out));
        assertEquals("the disk is full: wrote " + packets + " packets (97.7 KiB) to " + out
                + " before running out of space; the capture is incomplete", e.getMessage());
        assertTrue(kept.warning().contains("cut short"), kept.warning());
        assertFalse(Files.exists(temp.resolve("merged.pcap.part")));
    }

    @Test
    void aConnectionWhoseCaptureStoppedDuringTheRunIsMergedAndReported() throws IOException {
        Path directory = Files.createDirectories(temp.resolve("connections"));
        write(directory.resolve("1000-2000.pcap"), new long[] {10, 20}, 0x10);
        write(directory.resolve("1001-2000.pcap"), new long[] {15}, 0x20);
        Files.createFile(directory.resolve("1001-2000.pcap.stopped")); // the reason did not fit
        Path out = temp.resolve("merged.pcap");

        PcapMerge.DiskFullException e = assertThrows(PcapMerge.DiskFullException.class,
                () -> PcapMerge.merge(directory, out, 0));

        assertEquals("the disk filled during the run: the capture of connection 1001-2000 stopped early; wrote 3 "
                + "packets (" + Files.size(out) + " octets) to " + out + ", complete up to there", e.getMessage());
        assertEquals(3, PcapFile.read(out).records().size());

        Files.writeString(directory.resolve("1001-2000.pcap.stopped"), "Input/output error");
        IOException other = assertThrows(IOException.class, () -> PcapMerge.merge(directory, out, 0));
        assertEquals("the capture of connection 1001-2000 stopped early (Input/output error); wrote 3 packets ("
                + Files.size(out) + " octets) to " + out + ", complete up to there", other.getMessage());
    }

    /** A pcap file of 100-octet frames at these microseconds, the n-th frame's first octet {@code first + n}. */
    private static void write(Path file, long[] micros, int first) throws IOException {
        try (PcapWriter writer = new PcapWriter(new BufferedOutputStream(Files.newOutputStream(file)),
                LinkType.ETHERNET, false)) {
            for (int i = 0; i < micros.length; i++) {
                byte[] frame = new byte[100];
                frame[0] = (byte) (first + i);
                writer.write(micros[i] * 1000, frame);
            }
        }
    }

    /** A file on a disk with room for {@code room} octets: past them, the operating system's error. */
    private static final class Filling extends FilterOutputStream {
        private long room;

        Filling(OutputStream out, long room) {
            super(out);
            this.room = room;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            int fits = (int) Math.min(len, room);
            out.write(b, off, fits);
            room -= fits;
            if (fits < len) {
                throw new IOException("No space left on device");
            }
        }
    }
}
