package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp decode} and {@code jiwarp check} on a capture larger than 2 GiB: a shipped
 * capture, then eight 256 MiB records of zeros (not TCP), written as a sparse file so that it takes
 * no room on the disk.
 */
class LargeCaptureTest {

    private static final long RECORD = 256L << 20;
    private static final int RECORDS = 8;

    @TempDir
    static Path temp;
    private static Path large;

    @BeforeAll
    static void sparseCapture() throws IOException {
        byte[] sample = Files.readAllBytes(Path.of("..", "pcap-samples", "jiwarp-crc.pcap"));
        large = temp.resolve("large.pcap");
        try (RandomAccessFile file = new RandomAccessFile(large.toFile(), "rw")) {
            file.write(sample);
            long at = sample.length;
            for (int i = 0; i < RECORDS; i++) {
                file.seek(at);
                // ts_sec, ts_usec, incl_len, orig_len: little-endian, as the sample
                file.write(new byte[] {0, 0, 0, 0x70, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x10});
                at += 16 + RECORD;
            }
            file.setLength(at);
        }
        assertTrue(Files.size(large) > 1L << 31, Files.size(large) + " octets");
    }

    @Test
    void decodeReadsACaptureLargerThan2GiB() {
        DecodeCommandTest.Run run = jiwarp("decode", large);
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("MPA Request Frame"), run.out());
        assertEquals(run.out(), jiwarp("decode", Path.of("..", "pcap-samples", "jiwarp-crc.pcap")).out());
    }

    @Test
    void checkReadsACaptureLargerThan2GiB() {
        DecodeCommandTest.Run run = jiwarp("check", large);
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.err().startsWith(large + ": no findings in 1 iWARP connection ("), run.err());
    }
}
