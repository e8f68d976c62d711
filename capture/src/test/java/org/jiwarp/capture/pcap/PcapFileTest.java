package org.jiwarp.capture.pcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PcapFileTest {

    private static final long T0 = 1_700_000_000_123_456_789L;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void writtenFileReadsBack(boolean nanosecond) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[][] frames = {{1, 2, 3}, new byte[0], new byte[1500], {(byte) 0xff}};
        Arrays.fill(frames[2], (byte) 0x5a);
        long[] times = {T0, T0 + 1, T0 + 1_000_000_000L, 0};
        try (PcapWriter writer = new PcapWriter(out, LinkType.ETHERNET, nanosecond)) {
            for (int i = 0; i < frames.length; i++) {
                writer.write(times[i], frames[i]);
            }
            byte[] big = {9, 9, 7, 8, 9};
            writer.write(T0, big, 2, 3);
            assertEquals(5, writer.records());
        }
        PcapFile file = PcapFile.read(out.toByteArray());
        assertEquals(LinkType.ETHERNET, file.linkType());
        assertEquals(1, file.linkTypeCode());
        assertEquals(nanosecond, file.nanosecond());
        assertFalse(file.bigEndian());
        assertEquals(2, file.versionMajor());
        assertEquals(4, file.versionMinor());
        assertEquals(262_144, file.snapLength());
        assertNull(file.warning());
        List<PcapRecord> records = file.records();
        assertEquals(5, records.size());
        for (int i = 0; i < frames.length; i++) {
            PcapRecord r = records.get(i);
            assertEquals(i + 1, r.frameNumber());
            long expected = nanosecond ? times[i] : times[i] / 1000 * 1000;
            assertEquals(expected, r.timestampNanos(), "frame " + (i + 1));
            assertEquals(frames[i].length, r.originalLength());
            assertArrayEquals(frames[i], r.data());
        }
        assertArrayEquals(new byte[] {7, 8, 9}, records.get(4).data());
        byte[] magic = Arrays.copyOf(out.toByteArray(), 4);
        assertArrayEquals(nanosecond ? new byte[] {0x4d, 0x3c, (byte) 0xb2, (byte) 0xa1}
                : new byte[] {(byte) 0xd4, (byte) 0xc3, (byte) 0xb2, (byte) 0xa1}, magic);
    }

    @ParameterizedTest
    @ValueSource(strings = {"RAW", "LINUX_SLL", "LINUX_SLL2"})
    void linkTypeRoundTrips(String name) throws IOException {
        LinkType type = LinkType.valueOf(name);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PcapWriter(out, type, false).write(T0, new byte[] {0x45});
        assertEquals(type, PcapFile.read(out.toByteArray()).linkType());
    }

    @Test
    void frameLongerThanSnapLengthIsCut() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PcapWriter(out, LinkType.RAW, true).write(T0, new byte[300_000]);
        PcapRecord r = PcapFile.read(out.toByteArray()).records().get(0);
        assertEquals(262_144, r.data().length);
        assertEquals(300_000, r.originalLength());
    }

    @Test
    void writerRejectsTimestampsOutsideThePcapRange() throws IOException {
        PcapWriter writer = new PcapWriter(OutputStream.nullOutputStream(), LinkType.RAW, false);
        assertThrows(IllegalArgumentException.class, () -> writer.write(-1, new byte[1]));
        assertThrows(IllegalArgumentException.class, () -> writer.write(0x1_0000_0000L * 1_000_000_000L, new byte[1]));
        assertThrows(IndexOutOfBoundsException.class, () -> writer.write(0, new byte[1], 1, 1));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void bigEndianFileBuiltByHand(boolean nanosecond) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(24 + 16 + 4 + 16 + 2).order(ByteOrder.BIG_ENDIAN);
        b.putInt(nanosecond ? 0xa1b23c4d : 0xa1b2c3d4).putShort((short) 2).putShort((short) 4);
        b.putInt(0).putInt(0).putInt(65_535).putInt(229);
        b.putInt(1_234_567_890).putInt(999_999).putInt(4).putInt(60).put(new byte[] {0x60, 1, 2, 3});
        b.putInt(0xF000_0000).putInt(5).putInt(2).putInt(2).put(new byte[] {0x45, 0});
        PcapFile file = PcapFile.read(b.array());
        assertTrue(file.bigEndian());
        assertEquals(nanosecond, file.nanosecond());
        assertEquals(LinkType.RAW, file.linkType());
        assertEquals(229, file.linkTypeCode());
        assertEquals(65_535, file.snapLength());
        assertNull(file.warning());
        PcapRecord first = file.records().get(0);
        assertEquals(1_234_567_890L * 1_000_000_000L + (nanosecond ? 999_999L : 999_999_000L), first.timestampNanos());
        assertEquals(60, first.originalLength());
        assertArrayEquals(new byte[] {0x60, 1, 2, 3}, first.data());
        // ts_sec is unsigned: 0xF0000000 seconds is in 2097, not before 1970
        PcapRecord second = file.records().get(1);
        assertEquals(2, second.frameNumber());
        assertEquals(0xF000_0000L * 1_000_000_000L + (nanosecond ? 5 : 5000), second.timestampNanos());
    }

    @Test
    void acceptsRawLinkTypeAliasesAndRejectsUnknownOnes() throws PcapFormatException {
        assertEquals(LinkType.RAW, LinkType.fromCode(12));
        assertEquals(LinkType.RAW, LinkType.fromCode(101));
        assertEquals(LinkType.RAW, LinkType.fromCode(228));
        assertEquals(LinkType.RAW, LinkType.fromCode(229));
        assertEquals(LinkType.ETHERNET, LinkType.fromCode(1));
        assertEquals(LinkType.LINUX_SLL, LinkType.fromCode(113));
        for (LinkType type : LinkType.values()) {
            assertEquals(type, LinkType.fromCode(type.code()));
        }
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> LinkType.fromCode(105));
        assertTrue(e.getMessage().contains("105"), e.getMessage());
        byte[] header = header(0xa1b2c3d4, 105);
        assertThrows(PcapFormatException.class, () -> PcapFile.read(header));
    }

    @Test
    void readsFromAPath(@TempDir Path dir) throws IOException {
        Path path = dir.resolve("x.pcap");
        try (PcapWriter writer = new PcapWriter(Files.newOutputStream(path), LinkType.ETHERNET, false)) {
            writer.write(T0, new byte[] {1, 2});
        }
        assertEquals(1, PcapFile.read(path).records().size());
        Path bad = dir.resolve("bad.pcap");
        Files.write(bad, new byte[] {1, 2, 3, 4, 5});
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(bad));
        assertTrue(e.getMessage().startsWith(bad.toString()), e.getMessage());
    }

    // ---- bad input -----------------------------------------------------------------------------

    @Test
    void emptyFile() {
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(new byte[0]));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
    }

    @Test
    void tenRandomBytes() {
        byte[] garbage = {0x13, 0x37, 0x00, 0x42, 1, 2, 3, 4, 5, 6};
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(garbage));
        assertEquals("not a pcap file: magic 0x13370042 (expected 0xa1b2c3d4 or 0xa1b23c4d)", e.getMessage());
    }

    @Test
    void pcapngCutInsideItsSectionHeader() {
        // pcapng is read (PcapNgReaderTest); one cut inside its first block has nothing to give.
        byte[] shb = {0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a};
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(shb));
        assertEquals("the pcapng file is cut short inside its section header block", e.getMessage());
    }

    @Test
    void truncatedGlobalHeader() {
        byte[] header = Arrays.copyOf(header(0xa1b2c3d4, 1), 20);
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(header));
        assertTrue(e.getMessage().contains("20 of 24"), e.getMessage());
        assertThrows(PcapFormatException.class, () -> PcapFile.read(new byte[] {(byte) 0xd4, (byte) 0xc3}));
    }

    @Test
    void unsupportedVersion() {
        byte[] header = header(0xa1b2c3d4, 1);
        header[5] = 3;
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(header));
        assertTrue(e.getMessage().contains("version 3.4"), e.getMessage());
    }

    @Test
    void truncatedRecordKeepsEarlierRecordsWithAWarning() throws IOException {
        byte[] whole = sevenFrames();
        // cut in the middle of packet 7's data
        PcapFile cut = PcapFile.read(Arrays.copyOf(whole, whole.length - 3));
        assertEquals(6, cut.records().size());
        assertEquals("file ends in the middle of packet 7 (cut short)", cut.warning());
        // cut in the middle of packet 7's record header
        int seventhHeader = whole.length - 10 - 16;
        PcapFile headerCut = PcapFile.read(Arrays.copyOf(whole, seventhHeader + 5));
        assertEquals(6, headerCut.records().size());
        assertTrue(headerCut.warning().contains("packet 7"), headerCut.warning());
        assertNull(PcapFile.read(whole).warning());
        // an empty capture (global header only) is fine
        PcapFile empty = PcapFile.read(Arrays.copyOf(whole, 24));
        assertTrue(empty.records().isEmpty());
        assertNull(empty.warning());
    }

    @Test
    void hugeInclLen() throws IOException {
        byte[] whole = sevenFrames();
        ByteBuffer b = ByteBuffer.wrap(whole).order(ByteOrder.LITTLE_ENDIAN);
        int seventhHeader = whole.length - 10 - 16;
        b.putInt(seventhHeader + 8, 0x7fffffff);
        PcapFormatException e = assertThrows(PcapFormatException.class, () -> PcapFile.read(whole));
        assertTrue(e.getMessage().contains("packet 7"), e.getMessage());
        // beyond the file but under the limit: cut short
        b.putInt(seventhHeader + 8, 1 << 20);
        PcapFile file = PcapFile.read(whole);
        assertEquals(6, file.records().size());
        assertEquals("file ends in the middle of packet 7 (cut short)", file.warning());
        // negative when read signed
        b.putInt(seventhHeader + 8, 0xFFFF_FFF0);
        assertThrows(PcapFormatException.class, () -> PcapFile.read(whole));
    }

    @Test
    void mutatedFilesNeverThrowAnythingElse() throws IOException {
        byte[] whole = sevenFrames();
        Property.forAll("mutated pcap", 2000, random -> {
            byte[] mutated = Arrays.copyOf(whole, random.nextInt(whole.length + 1));
            int flips = random.nextInt(6);
            for (int i = 0; i < flips && mutated.length > 0; i++) {
                mutated[random.nextInt(mutated.length)] = (byte) random.nextInt(256);
            }
            try {
                PcapFile file = PcapFile.read(mutated);
                for (PcapRecord record : file.records()) {
                    PacketParser.parse(record, file.linkType());
                }
                TcpConversations.of(file).conversations().forEach(c -> c.clientToServer().chunks());
            } catch (PcapFormatException expected) {
                // fine
            }
        });
    }

    private static byte[] header(int magic, int linkType) {
        return ByteBuffer.allocate(24).order(ByteOrder.BIG_ENDIAN)
                .putInt(magic).putShort((short) 2).putShort((short) 4)
                .putInt(0).putInt(0).putInt(262_144).putInt(linkType).array();
    }

    /** Seven records, the last one 10 bytes long. */
    private static byte[] sevenFrames() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(out, LinkType.ETHERNET, false);
        SyntheticTcpCapture capture = new SyntheticTcpCapture(writer,
                new java.net.InetSocketAddress(TestFrames.address("10.0.0.1"), 1000),
                new java.net.InetSocketAddress(TestFrames.address("10.0.0.2"), 2000), 1, 2);
        capture.handshake();
        capture.clientSends(new byte[] {1, 2, 3});
        capture.serverSends(new byte[] {4, 5});
        capture.clientSends(new byte[] {6});
        writer.write(T0, new byte[10]);
        return out.toByteArray();
    }
}
