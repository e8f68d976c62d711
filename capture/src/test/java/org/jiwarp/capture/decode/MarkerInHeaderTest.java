package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.jiwarp.capture.decode.MarkerStreams.Sender;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A marker inside a DDP/RDMAP header, on a sender's grid that drifts (RFC 5044 section 4.3 puts
 * markers every 512 octets wherever they fall, headers included): for each header kind (tagged
 * Write and Read Response, untagged Send, Send with Invalidate, Read Request and Terminate), a
 * marker at each 4-octet offset of the header, with and without CRC, among header words that look
 * like markers themselves: every free field holds {@code 0x0000 | its own distance from the
 * ULPDU_LENGTH field} (in the sender's FPDUPTR byte order or the other), and the MSN does too, so
 * only the marker that reads a header consistent with its neighbours (MSN sequence, MO, lengths)
 * and with the sender's grid is the right one. Every FPDU of the capture must decode to the ULPDU
 * that was sent, octet for octet.
 *
 * <p>This is the case of issue 25: a Read Request with MSN 12 whose MSN word sat where a
 * marker with FPDUPTR 12 would, read with MSN 0 and MO 5120 because the marker after it was taken
 * for its MO.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MarkerInHeaderTest {

    /** A header kind: its opcode, RDMAP header octets after the DDP header, and payload octets. */
    enum Kind {
        SEND(RdmapOpcode.SEND, 0, 8),
        SEND_WITH_INVALIDATE(RdmapOpcode.SEND_WITH_INVALIDATE, 0, 8),
        WRITE(RdmapOpcode.RDMA_WRITE, 0, 8),
        READ_REQUEST(RdmapOpcode.RDMA_READ_REQUEST, 28, 0),
        READ_RESPONSE(RdmapOpcode.RDMA_READ_RESPONSE, 0, 8),
        /** With D set and the terminated (tagged) DDP header: 4 + 2 + 14 octets after the DDP header. */
        TERMINATE(RdmapOpcode.TERMINATE, 20, 0);

        final RdmapOpcode opcode;
        final int rdmapBody;
        final int payload;

        Kind(RdmapOpcode opcode, int rdmapBody, int payload) {
            this.opcode = opcode;
            this.rdmapBody = rdmapBody;
            this.payload = payload;
        }

        int ulpduLength() {
            return RdmapHeaders.ddpHeaderLength(opcode) + rdmapBody + payload;
        }

        /** ULPDU_LENGTH field, DDP and RDMAP headers: where a marker is inside the header. */
        int headerOctets() {
            return Fpdu.HEADER_LENGTH + RdmapHeaders.ddpHeaderLength(opcode) + rdmapBody;
        }
    }

    /** Whether the look-alike words are written in the sender's FPDUPTR byte order or the other. */
    enum Decoys { SAME_ORDER, OTHER_ORDER }

    /**
     * With {@code gridLearned} the header's marker comes after a few others, from which the reader
     * learned the drift, so it knows where the marker is, and every free field is a look-alike;
     * without, it is the stream's second marker (the first after the one before the first FPDU),
     * and the MSN is the only look-alike: only the header's consistency with its neighbours tells
     * it from the marker (a free field that looks like one, an STag say, cannot be told from it
     * before the grid's drift is known).
     */
    @ParameterizedTest(name = "{0} crc={1} {2} grid learned={3}")
    @CsvSource({"DRIFTING,true,OTHER_ORDER,true", "DRIFTING,false,OTHER_ORDER,true", "DRIFTING,true,SAME_ORDER,true",
        "DRIFTING,false,SAME_ORDER,true", "DRIFTING_LITTLE_ENDIAN,true,OTHER_ORDER,true",
        "DRIFTING_LITTLE_ENDIAN,false,OTHER_ORDER,true", "DRIFTING_LITTLE_ENDIAN,true,SAME_ORDER,true",
        "DRIFTING_LITTLE_ENDIAN,false,SAME_ORDER,true", "RFC,true,OTHER_ORDER,true", "RFC,false,SAME_ORDER,true",
        "DRIFTING,true,OTHER_ORDER,false", "DRIFTING,false,SAME_ORDER,false",
        "DRIFTING_LITTLE_ENDIAN,true,SAME_ORDER,false", "DRIFTING_LITTLE_ENDIAN,false,OTHER_ORDER,false"})
    void aMarkerAtEachOffsetOfEachHeaderKindDecodesEveryField(Sender sender, boolean crc, Decoys decoys,
            boolean gridLearned) {
        List<Executable> cases = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            int body = Fpdu.HEADER_LENGTH + kind.ulpduLength() + Fpdu.padLength(kind.ulpduLength());
            for (int offset = 4; offset <= Math.min(kind.headerOctets(), body - 4); offset += 4) {
                int at = offset;
                cases.add(() -> check(sender, crc, decoys, gridLearned, kind, at));
            }
        }
        assertAll(sender + " crc=" + crc + " " + decoys + " grid learned=" + gridLearned, cases);
    }

    /**
     * Issue 25 as its capture showed it: a sender whose grid drifts 4 octets with every FPDU and
     * whose FPDUPTR is little-endian; its twelfth Read Request's MSN word (0x0000000c) sits 12
     * octets into the FPDU, where a big-endian marker with FPDUPTR 12 would, and the real marker
     * follows its MO. Taking the first look-alike read that Read Request as MSN 0, MO 5120 (the
     * real marker, 00 00 14 00), between Read Requests 11 and 13.
     */
    @Test
    void theReadRequestOfIssue25ReadsItsMsnAndMoBetweenItsNeighbours() {
        for (boolean crc : new boolean[] {true, false}) {
            Case built = Case.build(Sender.DRIFTING_LITTLE_ENDIAN, crc, Decoys.OTHER_ORDER, true, Kind.READ_REQUEST,
                    20);
            built.write(readRequest(13, built.random));
            List<String> reads = new ArrayList<>();
            for (DecodedPdu pdu : decode(built.stream.bytes(), crc).pdus()) {
                if ("1".equals(pdu.fields().get("iwarp_ddp.qn"))) {
                    reads.add(pdu.fields().get("iwarp_ddp.msn") + "/" + pdu.fields().get("iwarp_ddp.mo"));
                }
            }
            List<String> expected = new ArrayList<>();
            for (int msn = 1; msn <= 13; msn++) {
                expected.add(msn + "/0");
            }
            assertEquals(expected, reads, "Read Requests' MSN/MO, crc=" + crc);
        }
    }

    private static void check(Sender sender, boolean crc, Decoys decoys, boolean gridLearned, Kind kind,
            int markerOffset) {
        Case built = Case.build(sender, crc, decoys, gridLearned, kind, markerOffset);
        String where = kind + " with a marker " + markerOffset + " octets after its ULPDU_LENGTH field";
        int marker = -1;
        for (int m = 0; m < built.stream.markers.size(); m++) {
            int[] found = built.stream.markers.get(m);
            marker = found[0] == built.targetHeader + markerOffset && found[1] == markerOffset ? m : marker;
        }
        assertTrue(gridLearned ? marker >= 3 : marker == 1, where + ": the test put marker " + marker + " there");
        CaptureDecode decode = decode(built.stream.bytes(), crc);
        List<String> got = new ArrayList<>();
        for (DecodedPdu pdu : decode.pdus()) {
            if (pdu.kind() == DecodedPdu.Kind.FPDU) {
                got.add(pdu.summary() + " " + HexFormat.of().formatHex(pdu.octets()));
                for (String problem : pdu.problems()) {
                    assertEquals(FpduDecoder.MARKER_DEVIATION, problem, where + ": " + pdu.summary());
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < built.ulpdus.size(); i++) {
            byte[] ulpdu = built.ulpdus.get(i);
            expected.add(i < got.size() ? got.get(i).substring(0, got.get(i).lastIndexOf(' ') + 1)
                    + HexFormat.of().formatHex(ulpdu) : HexFormat.of().formatHex(ulpdu));
        }
        String target = got.size() > built.target ? got.get(built.target) : "(not decoded)";
        assertEquals(expected, got, where + " (FPDU " + built.target + ", decoded as " + target + "); notes "
                + decode.notes());
    }

    /** One direction's FPDUs with a marker at a chosen offset of one FPDU's header, and the ULPDUs sent. */
    private static final class Case {
        final MarkerStreams stream;
        final List<byte[]> ulpdus = new ArrayList<>();
        final SplittableRandom random;
        int target;
        int targetHeader;
        boolean freeLookAlikes = true;
        private long sendMsn;
        private long writeTo = 0x7000_0000L;

        private Case(Sender sender, boolean crc, long seed) {
            this.stream = new MarkerStreams(sender, crc);
            this.random = new SplittableRandom(seed);
        }

        static Case build(Sender sender, boolean crc, Decoys decoys, boolean gridLearned, Kind kind,
                int markerOffset) {
            Case c = new Case(sender, crc, kind.ordinal() * 1000L + markerOffset);
            c.freeLookAlikes = gridLearned;
            if (gridLearned) {
                // Enough octets first for the grid's drift to be learned from a few markers.
                for (int i = 0; i < 5; i++) {
                    c.write(c.write(256));
                }
            }
            int msnWire = wire(DdpHeaders.MSN_OFFSET, markerOffset);
            boolean msnLookAlike = kind.opcode.queueNumber() == DdpHeaders.QN_SEND
                    || (gridLearned && kind.opcode == RdmapOpcode.RDMA_READ_REQUEST); // 11 of them fill 512 octets
            long msn = msnLookAlike ? msnWire : 1;
            // The messages before it on its queue, so that its MSN, a marker look-alike, is the next one.
            for (long m = 1; m < msn; m++) {
                c.write(kind.opcode == RdmapOpcode.RDMA_READ_REQUEST ? readRequest(m, c.random) : c.send(0));
            }
            int guard = 0;
            while (c.stream.toNextMarker() != markerOffset) {
                int before = c.stream.toNextMarker();
                int wanted = before > markerOffset ? before - markerOffset : before;
                int body = wanted - (c.stream.counted(0));
                c.write(c.write(body >= 16 ? body : 64));
                assertTrue(++guard < 20, "no filler lines the marker up");
            }
            c.target = c.ulpdus.size();
            c.targetHeader = c.stream.bytes().length;
            c.write(target(kind, markerOffset, msn, decoys == Decoys.OTHER_ORDER != sender.littleEndian, c));
            for (int i = 0; i < 3; i++) {
                c.write(c.send(12 + 4 * i));
            }
            return c;
        }

        /**
         * For a field {@code pointer} octets after the ULPDU_LENGTH field whose value is free (an
         * STag, a TO, a Read Request's fields): a word that reads as a marker with that FPDUPTR,
         * big- or little-endian; a word that cannot when only the header's consistency with its
         * neighbours, not the grid, can tell a marker from such a field.
         */
        int lookAlike(int pointer, boolean littleEndian) {
            if (!freeLookAlikes) {
                return random.nextInt() | 0x0100_0000;
            }
            return littleEndian ? pointer << 8 : pointer;
        }

        void write(byte[] ulpdu) {
            ulpdus.add(ulpdu);
            stream.write(ulpdu);
        }

        /** A Write whose FPDU is {@code body} octets without markers (a multiple of 4, at least 16). */
        byte[] write(int body) {
            ByteBuf out = Unpooled.buffer();
            DdpHeaders.writeTagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), 0x5EED, writeTo);
            int payload = body - Fpdu.HEADER_LENGTH - DdpHeaders.TAGGED_HEADER_LENGTH;
            writeTo += payload;
            byte[] bytes = new byte[payload];
            random.nextBytes(bytes);
            out.writeBytes(bytes);
            return drain(out);
        }

        byte[] send(int payload) {
            ByteBuf out = Unpooled.buffer();
            DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND,
                    ++sendMsn, 0);
            byte[] bytes = new byte[payload];
            random.nextBytes(bytes);
            out.writeBytes(bytes);
            return drain(out);
        }
    }

    /** Where a field {@code ulpduOffset} octets into the ULPDU lies from the ULPDU_LENGTH field, past the marker. */
    private static int wire(int ulpduOffset, int markerOffset) {
        int wire = Fpdu.HEADER_LENGTH + ulpduOffset;
        return wire >= markerOffset ? wire + 4 : wire;
    }


    private static byte[] target(Kind kind, int markerOffset, long msn, boolean littleEndianDecoys, Case c) {
        ByteBuf out = Unpooled.buffer();
        int control = RdmapHeaders.controlByte(kind.opcode);
        if (kind.opcode.tagged()) {
            int stag = c.lookAlike(wire(DdpHeaders.STAG_OFFSET, markerOffset), littleEndianDecoys);
            long to = (long) c.lookAlike(wire(DdpHeaders.TAGGED_OFFSET_OFFSET, markerOffset), littleEndianDecoys) << 32
                    | c.lookAlike(wire(DdpHeaders.TAGGED_OFFSET_OFFSET + 4, markerOffset), littleEndianDecoys) & 0xFFFF_FFFFL;
            DdpHeaders.writeTagged(out, true, control, stag, to);
        } else {
            int word = kind.opcode.invalidates()
                    ? c.lookAlike(wire(DdpHeaders.RSVD_ULP_OFFSET + 1, markerOffset), littleEndianDecoys) : 0;
            if (kind.opcode.queueNumber() == DdpHeaders.QN_SEND) {
                msn = ++c.sendMsn;
            }
            DdpHeaders.writeUntagged(out, true, control, word, kind.opcode.queueNumber(), msn, 0);
        }
        int u = out.writerIndex();
        switch (kind) {
            case READ_REQUEST -> {
                for (int field = 0; field < 7; field++) {
                    out.writeInt(c.lookAlike(wire(u + 4 * field, markerOffset), littleEndianDecoys));
                }
            }
            case TERMINATE -> {
                out.writeInt(0x11004000); // DDP layer, tagged buffer error, invalid STag; D set
                out.writeShort(DdpHeaders.TAGGED_HEADER_LENGTH + 64);
                out.writeByte(DdpHeaders.controlByte(true, true));
                out.writeByte(RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE));
                for (int field = 0; field < 3; field++) {
                    out.writeInt(c.lookAlike(wire(u + 8 + 4 * field, markerOffset), littleEndianDecoys));
                }
            }
            default -> {
                byte[] payload = new byte[kind.payload];
                c.random.nextBytes(payload);
                out.writeBytes(payload);
            }
        }
        assertEquals(kind.ulpduLength(), out.readableBytes(), kind.toString());
        return drain(out);
    }

    private static byte[] readRequest(long msn, SplittableRandom random) {
        ByteBuf out = Unpooled.buffer();
        DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, msn, 0);
        out.writeInt(0x100 + (int) msn);
        out.writeLong(random.nextLong());
        out.writeInt(4096);
        out.writeInt(0x200 + (int) msn);
        out.writeLong(random.nextLong());
        return drain(out);
    }

    private static byte[] drain(ByteBuf out) {
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    /** The stream as the client's side of a capture whose MPA negotiation asked for markers toward the server. */
    static CaptureDecode decode(byte[] fpdus, boolean crc) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            PcapWriter writer = new PcapWriter(bytes, LinkType.ETHERNET, true);
            SyntheticTcpCapture tcp = MarkerGridTest.negotiated(writer, crc);
            for (int at = 0; at < fpdus.length; at += 1000) {
                tcp.clientSends(Arrays.copyOfRange(fpdus, at, Math.min(fpdus.length, at + 1000)));
            }
            tcp.close();
            writer.close();
            return IwarpStreamDecoder.decode(PcapFile.read(bytes.toByteArray()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
