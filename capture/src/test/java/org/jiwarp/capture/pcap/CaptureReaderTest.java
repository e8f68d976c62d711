package org.jiwarp.capture.pcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Captures read a record at a time: longer than 2 GiB (made up on the fly, never on disk or in
 * memory whole), from a file that grows while it is read, and cut short.
 */
class CaptureReaderTest {

    /** More than 2^31 octets of 64 KiB records: past every int offset and the largest array. */
    private static final long PAST_2_GIB = (1L << 31) + (1 << 20);

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aCaptureLongerThan2GiBIsReadToItsLastRecord(boolean pcapng) throws IOException {
        byte[] frame = new byte[65_536];
        Arrays.fill(frame, (byte) 0x5a);
        // What the writer writes split in two: its header, and one record, which the stream repeats.
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        StreamCaptureWriter writer = pcapng ? new PcapNgWriter(written, LinkType.ETHERNET)
                : new PcapWriter(written, LinkType.ETHERNET, true);
        byte[] head = written.toByteArray();
        written.reset();
        writer.write(1_767_225_600_000_000_007L, frame);
        byte[] record = written.toByteArray();
        long records = (PAST_2_GIB - head.length) / record.length + 1;

        long count = 0;
        PcapRecord last = null;
        try (CaptureReader reader = CaptureReader.open(new Repeating(head, record, records))) {
            for (PcapRecord next = reader.next(); next != null; next = reader.next()) {
                count++;
                last = next;
            }
            assertNull(reader.warning());
            assertEquals(head.length + records * record.length, reader.octetsRead());
            assertTrue(reader.octetsRead() > 1L << 31, "only " + reader.octetsRead() + " octets");
        }
        assertEquals(records, count);
        assertEquals(records, last.frameNumber());
        assertEquals(1_767_225_600_000_000_007L, last.timestampNanos());
        assertArrayEquals(frame, last.data());
    }

    @Test
    void aFileIsReadUpToTheLengthItHadWhenOpenedAndEndsAtACutRecordWithAWarning(@TempDir Path dir)
            throws IOException {
        Path file = dir.resolve("growing.pcap");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true)) {
            for (int i = 0; i < 5; i++) {
                writer.write(1_000_000_000L * (i + 1), new byte[100]);
            }
        }
        Files.write(file, bytes.toByteArray());
        long threeAndAHalf = PcapFile.GLOBAL_HEADER_LENGTH + 3 * 116 + 60;
        try (CaptureReader reader = CaptureReader.open(file, threeAndAHalf)) {
            assertEquals(3, count(reader));
            assertEquals("file ends in the middle of packet 4 (cut short)", reader.warning());
        }
        try (CaptureReader reader = CaptureReader.open(file)) {
            assertEquals(5, count(reader));
            assertNull(reader.warning());
        }
    }

    @Test
    void errorsFromAFileNameIt(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("corrupt.pcap");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true)) {
            writer.write(1, new byte[10]);
        }
        byte[] corrupt = Arrays.copyOf(bytes.toByteArray(), bytes.size() + 16);
        // a second record header claiming 1 GiB
        corrupt[bytes.size() + 8] = 0;
        corrupt[bytes.size() + 11] = 0x40;
        Files.write(file, corrupt);
        try (CaptureReader reader = CaptureReader.open(file)) {
            reader.next();
            PcapFormatException e = assertThrows(PcapFormatException.class, reader::next);
            assertEquals(file + ": packet 2 at file offset 50 claims 1073741824 captured bytes, more than the "
                    + "256 MiB limit: the file is corrupt", e.getMessage());
        }
    }

    private static int count(CaptureReader reader) throws IOException {
        int n = 0;
        while (reader.next() != null) {
            n++;
        }
        return n;
    }

    /** A header, then one record's octets {@code times} times over, made as they are read. */
    private static final class Repeating extends InputStream {
        private final byte[] head;
        private final byte[] record;
        private final long end;
        private long at;

        Repeating(byte[] head, byte[] record, long times) {
            this.head = head;
            this.record = record;
            this.end = head.length + times * record.length;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (at >= end) {
                return -1;
            }
            int n;
            if (at < head.length) {
                n = Math.min(len, head.length - (int) at);
                System.arraycopy(head, (int) at, b, off, n);
            } else {
                int inRecord = (int) ((at - head.length) % record.length);
                n = (int) Math.min(Math.min(len, record.length - inRecord), end - at);
                System.arraycopy(record, inRecord, b, off, n);
            }
            at += n;
            return n;
        }
    }
}
