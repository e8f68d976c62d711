package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jiwarp.capture.pcap.CaptureReader;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.Test;

/**
 * Decoding a capture as it streams: a long capture in bounded memory, and the same PDUs and notes
 * as the decode of the whole capture whatever the window (down to one octet, where every FPDU is
 * cut by a stretch's end), on every capture the project ships and, when named, the external ones.
 */
class StreamingDecodeTest {

    /** Write FPDUs of this many octets of data, about 64 KiB each. */
    private static final int WRITE_LENGTH = 65_000;
    private static final int FPDUS = 4_000; // about 250 MiB

    @Test
    void aLongCaptureIsDecodedInMemoryThatDoesNotGrowWithIt() throws IOException {
        long[] pdus = {0};
        long[] crcGood = {0};
        long[] heapAtHalf = {0};
        StreamingDecode decode = new StreamingDecode(pdu -> {
            pdus[0]++;
            if (Boolean.TRUE.equals(pdu.crcGood())) {
                crcGood[0]++;
            }
            if (pdus[0] == FPDUS / 2) {
                heapAtHalf[0] = heapAfterGc();
            }
        }, StreamingDecode.DEFAULT_WINDOW);
        try (CaptureReader reader = CaptureReader.open(new WriteStream(FPDUS))) {
            for (PcapRecord record = reader.next(); record != null; record = reader.next()) {
                decode.add(record, reader.linkType(record));
            }
            assertTrue(reader.octetsRead() > (long) FPDUS * WRITE_LENGTH, reader.octetsRead() + " octets");
        }
        decode.finish();
        assertEquals(List.of(), decode.notes());
        assertEquals(1, decode.iwarpConversations());
        assertEquals(2 + FPDUS, pdus[0]); // MPA Request, Reply, the Writes
        assertEquals(FPDUS, crcGood[0]);
        // Half-way through 250 MiB: the window (16 MiB) and what decoding it makes, not the capture.
        assertTrue(heapAtHalf[0] < 96L << 20, "heap in use half-way: " + heapAtHalf[0] + " octets");
    }

    @Test
    void everyWindowGivesThePdusAndNotesOfTheWholeCapture() throws IOException {
        List<Path> captures = new ArrayList<>();
        try (Stream<Path> shipped = Files.list(Path.of("..", "pcap-samples"))) {
            shipped.filter(p -> p.toString().endsWith(".pcap")).sorted().forEach(captures::add);
        }
        String external = System.getProperty("jiwarp.externalPcaps", "");
        if (!external.isEmpty() && Files.isDirectory(Path.of(external))) {
            try (Stream<Path> files = Files.walk(Path.of(external))) {
                files.filter(p -> p.toString().endsWith(".pcap")).sorted().forEach(captures::add);
            }
        }
        assertTrue(captures.size() >= 10, captures.toString());
        for (Path capture : captures) {
            PcapFile file = PcapFile.read(capture);
            CaptureDecode whole = IwarpStreamDecoder.decode(file);
            for (long window : new long[] {1, 1000, 70_000}) {
                List<DecodedPdu> streamed = new ArrayList<>();
                StreamingDecode decode = new StreamingDecode(streamed::add, window);
                for (PcapRecord record : file.records()) {
                    decode.add(record, file.linkType(record));
                }
                decode.finish();
                String where = capture + ", window " + window;
                assertEquals(describe(whole.pdus()), describe(streamed), where);
                List<String> notes = new ArrayList<>(whole.notes());
                if (file.warning() != null) {
                    notes.remove(file.warning());
                }
                assertEquals(notes, decode.notes(), where);
                assertEquals(whole.iwarpConversations(), decode.iwarpConversations(), where);
            }
        }
    }

    @Test
    void pdusComeInFrameOrderWhileAConnectionBegunMidwayWaitsForItsStart() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
        // Captured from its start, and one whose start the capture missed (no SYN, no MPA setup):
        // the second one's segments wait until its stream's start is known, and hold its PDUs back.
        SyntheticTcpCapture whole = new SyntheticTcpCapture(writer,
                new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 6000), 77, 5000);
        SyntheticTcpCapture midway = new SyntheticTcpCapture(writer,
                new InetSocketAddress(InetAddress.getByName("10.2.0.1"), 5000),
                new InetSocketAddress(InetAddress.getByName("10.2.0.2"), 6000), 1000, 2000);
        whole.handshake();
        whole.clientSends(WriteStream.frame(false));
        whole.serverSends(WriteStream.frame(true));
        for (int msn = 1; msn <= 8; msn++) {
            midway.clientSends(send(msn));
            whole.clientSends(send(msn));
        }
        whole.close();
        midway.close();
        PcapFile file = PcapFile.read(bytes.toByteArray());
        CaptureDecode expected = IwarpStreamDecoder.decode(file);
        assertEquals(2, expected.iwarpConversations());
        for (long window : new long[] {1, 1000}) {
            List<DecodedPdu> streamed = new ArrayList<>();
            StreamingDecode decode = new StreamingDecode(streamed::add, window);
            for (PcapRecord record : file.records()) {
                decode.add(record, file.linkType(record));
            }
            decode.finish();
            assertEquals(describe(expected.pdus()), describe(streamed), "window " + window);
        }
    }

    /** An FPDU, with CRC, of a Send of 40 octets with this MSN. */
    private static byte[] send(int msn) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
        ulpdu.writeZero(40);
        ByteBuf out = Unpooled.buffer();
        new FpduWriter(true, false).write(ulpdu, out);
        byte[] fpdu = ByteBufUtil.getBytes(out);
        out.release();
        ulpdu.release();
        return fpdu;
    }

    private static List<String> describe(List<DecodedPdu> pdus) {
        List<String> lines = new ArrayList<>();
        for (DecodedPdu pdu : pdus) {
            lines.add(pdu.frameNumber() + " " + pdu.conversation() + " " + pdu.summary() + " " + pdu.problems() + " "
                    + pdu.fields() + " " + pdu.resynchronised() + " " + pdu.rpcRdmaUnshown());
        }
        return lines;
    }

    private static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * A capture made as it is read: a connection's MPA setup with CRC, then {@code fpdus} Writes of
     * {@value #WRITE_LENGTH} octets, one per segment, then its close.
     */
    private static final class WriteStream extends InputStream {
        private final ByteArrayOutputStream written = new ByteArrayOutputStream();
        private final SyntheticTcpCapture tcp;
        private final byte[] fpdu;
        private int left;
        private boolean closed;
        private byte[] buffer;
        private int at;

        WriteStream(int fpdus) throws IOException {
            PcapWriter writer = new PcapWriter(written, LinkType.ETHERNET, true);
            tcp = new SyntheticTcpCapture(writer, new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 5000),
                    new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 6000), 77, 0xFFFF_FFF0L);
            tcp.handshake();
            tcp.clientSends(frame(false));
            tcp.serverSends(frame(true));
            ByteBuf ulpdu = Unpooled.buffer();
            DdpHeaders.writeTagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), 0x1234, 0);
            ulpdu.writeZero(WRITE_LENGTH);
            ByteBuf out = Unpooled.buffer();
            new FpduWriter(true, false).write(ulpdu, out);
            fpdu = ByteBufUtil.getBytes(out);
            out.release();
            ulpdu.release();
            left = fpdus;
            buffer = written.toByteArray();
        }

        private static byte[] frame(boolean reply) {
            ByteBuf out = Unpooled.buffer();
            MpaFrames.write(out, reply, MpaFrames.CRC_FLAG, 1, null);
            byte[] bytes = ByteBufUtil.getBytes(out);
            out.release();
            return bytes;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            while (at == buffer.length) {
                written.reset();
                if (left > 0) {
                    tcp.clientSends(fpdu);
                    left--;
                } else if (!closed) {
                    tcp.close();
                    closed = true;
                } else {
                    return -1;
                }
                buffer = written.toByteArray();
                at = 0;
            }
            int n = Math.min(len, buffer.length - at);
            System.arraycopy(buffer, at, b, off, n);
            at += n;
            return n;
        }
    }
}
