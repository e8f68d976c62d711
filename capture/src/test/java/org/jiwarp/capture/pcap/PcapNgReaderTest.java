package org.jiwarp.capture.pcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** pcapng reading (both byte orders, every packet block, per-interface link type and clock) and gzip input. */
class PcapNgReaderTest {

    private static final byte[] ONE = {1, 2, 3, 4, 5};
    private static final byte[] TWO = {9, 8, 7, 6, 5, 4, 3};

    @Test
    void whatTheWriterWritesReadsBackExactly() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PcapNgWriter writer = new PcapNgWriter(out, LinkType.ETHERNET)) {
            writer.write(1_767_225_600_123_456_789L, ONE);
            writer.write(1_767_225_601_000_000_001L, TWO);
        }
        PcapFile file = PcapFile.read(out.toByteArray());
        assertTrue(file.pcapng());
        assertTrue(file.nanosecond());
        assertNull(file.warning());
        assertEquals(LinkType.ETHERNET, file.linkType());
        assertEquals(List.of(new PcapRecord(1, 1_767_225_600_123_456_789L, 5, ONE, 0),
                new PcapRecord(2, 1_767_225_601_000_000_001L, 7, TWO, 0)), file.records());
    }

    /** Two sections, the second in the other byte order; interfaces, clocks and every packet block. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void everyBlockInBothByteOrders(boolean bigEndian) throws PcapFormatException {
        ByteOrder first = bigEndian ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        ByteOrder second = bigEndian ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN;
        byte[] file = concat(
                section(first),
                block(first, 0x0BAD_F00D, new byte[12]), // unknown block: skipped
                interfaceDescription(first, 1, options(first, 9, new byte[] {3})), // milliseconds
                interfaceDescription(first, 147, new byte[0]), // LINKTYPE_USER0: not decodable
                enhanced(first, 0, 1_767_225_600_123L, ONE, options(first, 1, "comment".getBytes())),
                enhanced(first, 1, 5L, TWO, new byte[0]),
                block(first, 5, new byte[20]), // interface statistics: skipped
                section(second),
                interfaceDescription(second, 101, options(second, 9, new byte[] {(byte) 0x8A})), // 2^-10 s
                simple(second, TWO),
                obsoletePacket(second, 0, 3L * 1024 + 512, ONE));
        PcapFile read = PcapFile.read(file);
        assertTrue(read.pcapng());
        assertEquals(bigEndian, read.bigEndian());
        assertEquals(Arrays.asList(LinkType.ETHERNET, null, LinkType.RAW), read.interfaceLinkTypes());
        List<PcapRecord> records = read.records();
        assertEquals(4, records.size());
        assertEquals(new PcapRecord(1, 1_767_225_600_123_000_000L, 5, ONE, 0), records.get(0));
        assertEquals(new PcapRecord(2, 5_000L, 7, TWO, 1), records.get(1)); // default: microseconds
        assertNull(read.linkType(records.get(1)));
        assertEquals(new PcapRecord(3, 0, 7, TWO, 2), records.get(2));
        assertEquals(LinkType.RAW, read.linkType(records.get(2)));
        assertEquals(new PcapRecord(4, 3_500_000_000L, 5, ONE, 2), records.get(3));
    }

    @Test
    void aFileCutInsideAPacketKeepsThePacketsBeforeItAndSaysSo() throws PcapFormatException {
        ByteOrder order = ByteOrder.LITTLE_ENDIAN;
        byte[] whole = concat(section(order), interfaceDescription(order, 1, new byte[0]),
                enhanced(order, 0, 1, ONE, new byte[0]), enhanced(order, 0, 2, TWO, new byte[0]));
        PcapFile cut = PcapFile.read(Arrays.copyOf(whole, whole.length - 6));
        assertEquals(1, cut.records().size());
        assertEquals("file ends in the middle of packet 2 (cut short)", cut.warning());
    }

    @Test
    void malformedFilesGiveAClearError() {
        ByteOrder order = ByteOrder.BIG_ENDIAN;
        byte[] good = concat(section(order), interfaceDescription(order, 1, new byte[0]),
                enhanced(order, 0, 1, ONE, new byte[0]));
        byte[] badTrailer = good.clone();
        badTrailer[badTrailer.length - 1] ^= 4;
        assertTrue(assertThrows(PcapFormatException.class, () -> PcapFile.read(badTrailer)).getMessage()
                .contains("ends with a length different from its start"));
        byte[] noInterface = concat(section(order), enhanced(order, 0, 1, ONE, new byte[0]));
        assertTrue(assertThrows(PcapFormatException.class, () -> PcapFile.read(noInterface)).getMessage()
                .contains("refers to interface 0"));
        byte[] badMagic = good.clone();
        badMagic[8] = 0x77;
        assertTrue(assertThrows(PcapFormatException.class, () -> PcapFile.read(badMagic)).getMessage()
                .contains("byte-order magic"));
    }

    @Test
    void gzipCompressedCapturesReadAsTheirContentAndSayWhenCutShort() throws IOException {
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(plain, LinkType.ETHERNET, false)) {
            for (int i = 0; i < 200; i++) {
                writer.write(1_000_000_000L * i, ONE);
            }
        }
        byte[] gz = gzip(plain.toByteArray());
        PcapFile read = PcapFile.read(gz);
        assertEquals(PcapFile.read(plain.toByteArray()).records(), read.records());
        assertNull(read.warning());
        PcapFile cut = PcapFile.read(Arrays.copyOf(gz, gz.length - 30));
        assertFalse(cut.records().isEmpty());
        assertTrue(cut.records().size() < 200);
        assertTrue(cut.warning().startsWith("the gzip-compressed file is cut short"), cut.warning());
        assertArrayEquals(ONE, cut.records().get(0).data());
    }

    // ---- building pcapng blocks ----------------------------------------------------------------

    static byte[] section(ByteOrder order) {
        ByteBuffer body = ByteBuffer.allocate(16).order(order);
        body.putInt(0x1A2B3C4D).putShort((short) 1).putShort((short) 0).putLong(-1);
        return block(order, 0x0A0D0D0A, body.array());
    }

    static byte[] interfaceDescription(ByteOrder order, int linkType, byte[] options) {
        ByteBuffer body = ByteBuffer.allocate(8 + options.length).order(order);
        body.putShort((short) linkType).putShort((short) 0).putInt(65535).put(options);
        return block(order, 1, body.array());
    }

    static byte[] enhanced(ByteOrder order, int interfaceId, long timestamp, byte[] data, byte[] options) {
        ByteBuffer body = ByteBuffer.allocate(20 + padded(data.length) + options.length).order(order);
        body.putInt(interfaceId).putInt((int) (timestamp >>> 32)).putInt((int) timestamp).putInt(data.length)
                .putInt(data.length).put(data).position(20 + padded(data.length));
        body.put(options);
        return block(order, 6, body.array());
    }

    static byte[] simple(ByteOrder order, byte[] data) {
        ByteBuffer body = ByteBuffer.allocate(4 + padded(data.length)).order(order);
        body.putInt(data.length).put(data);
        return block(order, 3, body.array());
    }

    static byte[] obsoletePacket(ByteOrder order, int interfaceId, long timestamp, byte[] data) {
        ByteBuffer body = ByteBuffer.allocate(20 + padded(data.length)).order(order);
        body.putShort((short) interfaceId).putShort((short) 0).putInt((int) (timestamp >>> 32)).putInt((int) timestamp)
                .putInt(data.length).putInt(data.length).put(data);
        return block(order, 2, body.array());
    }

    /** Options: one of code {@code code}, then opt_endofopt. */
    static byte[] options(ByteOrder order, int code, byte[] value) {
        ByteBuffer options = ByteBuffer.allocate(4 + padded(value.length) + 4).order(order);
        options.putShort((short) code).putShort((short) value.length).put(value).position(4 + padded(value.length));
        options.putShort((short) 0).putShort((short) 0);
        return options.array();
    }

    static byte[] block(ByteOrder order, int type, byte[] body) {
        ByteBuffer block = ByteBuffer.allocate(12 + body.length).order(order);
        block.putInt(type).putInt(12 + body.length).put(body).putInt(12 + body.length);
        return block.array();
    }

    private static int padded(int length) {
        return length + 3 & ~3;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private static byte[] gzip(byte[] bytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(bytes);
        }
        return out.toByteArray();
    }
}
