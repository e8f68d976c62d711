package org.jiwarp.mpa;

import static org.jiwarp.mpa.FpduDeframerTest.assertUlpdus;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.jiwarp.testing.Prerequisites;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.TcpConversation;
import org.jiwarp.capture.pcap.TcpConversations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The deframer and framer on real traffic: the Wireshark wiki iWARP captures (CRC and marker
 * variants) and the Linux soft-iWARP captures under {@code $JIWARP_EXTERNAL_PCAPS} (or
 * {@code -Djiwarp.externalPcaps}); skipped with a message when neither names a folder.
 *
 * <p>For each connection and direction: the MPA Request and Reply give CRC (either C flag) and
 * markers (the Reply's M asks the initiator for them, the Request's M the responder); rejected
 * connections carry no FPDUs and are skipped. The octets after the Request or Reply go through
 * {@link FpduDeframer} whole, one octet at a time and in random splits, and must give exactly the
 * ULPDUs of the copying {@link FpduReader}, which conformance-tests holds to tshark field by field.
 * Those ULPDUs, framed again by {@link FpduFramer} with the negotiated options, must reproduce the
 * captured FPDUs octet for octet, markers and CRC included, with one stated exception: octets the
 * RFC has the receiver ignore. Linux siw leaves garbage in pad octets (RFC 5044 section 4.1: the
 * pad is zero on transmit, ignored on receive; {@code pair-ib_send_bw} shows pad {@code 0040}), and
 * our framer writes zero pad; with CRC on, such a CRC then covers different pad octets. So before
 * comparing, captured pad octets are zeroed, the CRC of an FPDU whose pad was zeroed is recomputed,
 * and with CRC off the CRC field is zeroed (siw sends zero there anyway). The test prints what it
 * normalised per capture; marker octets and ULPDU octets are always compared as captured.
 */
class ExternalCaptureReframingTest {

    private static Path root() {
        return Prerequisites.externalPcaps();
    }

    @Test
    void everyCaptureDeframesAndReframesExactly() throws IOException {
        Path root = root();
        List<Path> files = new ArrayList<>();
        for (String folder : new String[] {"wireshark-wiki", "siw"}) {
            Path dir = root.resolve(folder);
            Prerequisites.require(Files.isDirectory(dir), "no " + folder + "/ under " + root);
            try (Stream<Path> list = Files.list(dir)) {
                list.filter(p -> p.getFileName().toString().endsWith(".pcap")).sorted().forEach(files::add);
            }
        }
        Prerequisites.require(!files.isEmpty(), "no captures under " + root);
        List<Executable> checks = new ArrayList<>();
        for (Path path : files) {
            checks.add(() -> Property.onShallowStack(() -> check(root, path)));
        }
        assertAll("captures under " + root, checks);
    }

    private static void check(Path root, Path path) {
        PcapFile file;
        try {
            file = PcapFile.read(path);
        } catch (IOException e) {
            throw new AssertionError(path + ": " + e, e);
        }
        List<TcpConversation> conversations = TcpConversations.of(file).conversations();
        assertFalse(conversations.isEmpty(), path + " holds no TCP connection");
        for (TcpConversation conversation : conversations) {
            String name = root.relativize(path) + " #" + conversation.index();
            byte[] up = conversation.clientToServer().toByteArray();
            byte[] down = conversation.serverToClient().toByteArray();
            ByteBuf request = Unpooled.wrappedBuffer(up);
            ByteBuf reply = Unpooled.wrappedBuffer(down);
            try {
                assertTrue(up.length >= MpaFrames.HEADER_LENGTH && MpaFrames.isRequest(request, 0), name + ": Request");
                assertTrue(down.length >= MpaFrames.HEADER_LENGTH && MpaFrames.isReply(reply, 0), name + ": Reply");
                if (MpaFrames.rejectFlag(reply, 0)) {
                    System.out.println(name + ": rejected, no FPDUs");
                    continue;
                }
                // RFC 5044 section 7.1: CRC both ways if either side asks; M asks the peer for markers.
                boolean crc = MpaFrames.crcFlag(request, 0) || MpaFrames.crcFlag(reply, 0);
                boolean initiatorMarkers = MpaFrames.markerFlag(reply, 0);
                boolean responderMarkers = MpaFrames.markerFlag(request, 0);
                checkDirection(name + " initiator->responder", up, MpaFrames.frameLength(request, 0), crc,
                        initiatorMarkers);
                checkDirection(name + " responder->initiator", down, MpaFrames.frameLength(reply, 0), crc,
                        responderMarkers);
            } finally {
                request.release();
                reply.release();
            }
        }
    }

    private static void checkDirection(String name, byte[] direction, int frameLength, boolean crc, boolean markers) {
        byte[] wire = Arrays.copyOfRange(direction, frameLength, direction.length);
        List<FpduReader.Frame> frames = readReference(wire, markers);
        byte[][] expected = new byte[frames.size()][];
        int complete = 0;
        for (int i = 0; i < frames.size(); i++) {
            FpduReader.Frame frame = frames.get(i);
            expected[i] = frame.ulpdu;
            complete += frame.wireLength;
            assertTrue(frame.markersValid, name + ": FPDU " + i + " markers");
            if (crc) {
                assertTrue(frame.crcGood(), name + ": FPDU " + i + " CRC as captured");
            }
        }

        // Deframe: whole, octet by octet, and in random splits; always FpduReader's ULPDUs.
        SplittableRandom random = new SplittableRandom(name.hashCode());
        List<int[]> splits = new ArrayList<>();
        splits.add(new int[] {wire.length});
        splits.add(FpduTestSupport.fixedChunks(wire.length, 1));
        for (int i = 0; i < 8; i++) {
            splits.add(Property.split(random, wire.length, 1 + random.nextInt(1 + random.nextInt(3000))));
        }
        for (int[] chunks : splits) {
            if (wire.length == 0) {
                break;
            }
            FpduDeframer deframer = new FpduDeframer(crc, markers);
            EmbeddedChannel channel = new EmbeddedChannel(deframer);
            try {
                assertUlpdus(expected, FpduTestSupport.deframe(channel, wire, chunks));
                assertEquals(complete, deframer.streamPosition(), name + ": octets consumed");
            } finally {
                FpduTestSupport.finish(channel);
            }
        }

        // Re-frame and compare with the capture, pad (and CRC-off CRC fields) normalised.
        FpduFramer framer = new FpduFramer(crc, markers);
        EmbeddedChannel channel = new EmbeddedChannel(framer);
        byte[] reframed;
        try {
            reframed = FpduTestSupport.frame(channel, expected);
        } finally {
            FpduTestSupport.finish(channel);
        }
        byte[] captured = Arrays.copyOf(wire, complete);
        int garbagePads = 0;
        int nonZeroCrcFields = 0;
        int at = 0;
        for (FpduReader.Frame frame : frames) {
            int crcIndex = at + frame.wireLength - 4;
            if (normalisePad(captured, at, frame, markers)) {
                garbagePads++;
                if (crc) {
                    // The captured CRC covers the captured pad; ours covers a zero pad.
                    CRC32C crc32c = new CRC32C();
                    crc32c.update(captured, at, crcIndex - at);
                    int value = (int) crc32c.getValue();
                    for (int i = 0; i < 4; i++) {
                        captured[crcIndex + i] = (byte) (value >>> (8 * i));
                    }
                }
            }
            if (!crc && frame.crcField != 0) {
                nonZeroCrcFields++;
                Arrays.fill(captured, crcIndex, crcIndex + 4, (byte) 0);
            }
            at += frame.wireLength;
        }
        assertEquals(captured.length, reframed.length, name + ": re-framed length");
        int mismatch = Arrays.mismatch(captured, reframed);
        assertEquals(-1, mismatch, name + ": first differing octet after the Request/Reply");
        assertArrayEquals(captured, reframed);
        assertEquals(complete, framer.streamPosition());
        System.out.printf("%s: crc=%b markers=%b, %d FPDUs (%d octets, %d after the last whole FPDU) deframed"
                + " and re-framed exactly%s%s%n", name, crc, markers, frames.size(), complete, wire.length - complete,
                garbagePads == 0 ? "" : "; " + garbagePads + " captured pads were not zero (zeroed before comparing"
                        + (crc ? ", CRC recomputed)" : ")"),
                nonZeroCrcFields == 0 ? "" : "; " + nonZeroCrcFields + " CRC-off CRC fields were not zero (zeroed)");
    }

    private static List<FpduReader.Frame> readReference(byte[] wire, boolean markers) {
        List<FpduReader.Frame> frames = new ArrayList<>();
        ByteBuf buf = Unpooled.wrappedBuffer(wire);
        try {
            FpduReader reader = new FpduReader(markers);
            for (FpduReader.Frame frame; (frame = reader.read(buf)) != null; ) {
                frames.add(frame);
            }
        } finally {
            buf.release();
        }
        return frames;
    }

    /**
     * Zeroes the pad octets of the FPDU at {@code wire[at...]} and returns {@code true} when any was
     * not zero. The pad is the octets between the ULPDU and the CRC, minus a marker that may sit
     * right before the CRC.
     */
    private static boolean normalisePad(byte[] wire, int at, FpduReader.Frame frame, boolean markers) {
        boolean garbage = false;
        for (byte b : frame.pad) {
            garbage |= b != 0;
        }
        if (!garbage) {
            return false;
        }
        int crcIndex = at + frame.wireLength - 4;
        int padEnd = crcIndex;
        long crcPosition = frame.streamPosition + frame.wireLength - 4;
        if (markers && Markers.isMarkerPosition(crcPosition - Markers.LENGTH)
                && crcPosition - Markers.LENGTH > frame.streamPosition) {
            padEnd -= Markers.LENGTH;
        }
        for (int i = padEnd - frame.pad.length; i < padEnd; i++) {
            wire[i] = 0;
        }
        return true;
    }
}
