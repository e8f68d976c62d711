package org.jiwarp.capture.decode;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapFormatException;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;

/**
 * Fuzz targets for the capture reader and the iWARP stream decoder: whatever the bytes, reading
 * either fails with {@link PcapFormatException} or yields a decode, and decoding never throws.
 *
 * <p>In a normal test run (CI) Jazzer replays the committed seed corpus under
 * {@code src/test/resources/org/jiwarp/capture/decode/IwarpStreamDecoderFuzzTestInputs/}. To fuzz,
 * run with {@code JAZZER_FUZZ=1} (see the README).
 */
class IwarpStreamDecoderFuzzTest {

    /** Arbitrary bytes as a whole pcap file. */
    @FuzzTest(maxDuration = "20s")
    void pcapFile(byte[] bytes) {
        PcapFile file;
        try {
            file = PcapFile.read(bytes);
        } catch (PcapFormatException expected) {
            return;
        }
        check(IwarpStreamDecoder.decode(file));
    }

    /**
     * A well-formed MPA handshake (flags and private data chosen by the fuzzer) followed by
     * arbitrary bytes in both directions, cut into arbitrary TCP segments: this reaches the FPDU,
     * marker, CRC, DDP and RDMAP decoding.
     */
    @FuzzTest(maxDuration = "20s")
    void iwarpStream(FuzzedDataProvider data) throws IOException {
        int requestFlags = data.consumeInt(0, 255);
        int replyFlags = data.consumeInt(0, 255) & ~MpaFrames.REJECT_FLAG | (data.consumeInt(0, 15) == 0
                ? MpaFrames.REJECT_FLAG : 0);
        int revision = data.consumeInt(0, 3);
        byte[] requestData = data.consumeBytes(data.consumeInt(0, 40));
        byte[] replyData = data.consumeBytes(data.consumeInt(0, 40));
        ByteArrayOutputStream pcap = new ByteArrayOutputStream();
        try (PcapWriter writer = new PcapWriter(pcap, LinkType.ETHERNET, false);
                SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                        new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 1}), 40000),
                        new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 2}), 4791),
                        data.consumeLong(0, 0xFFFF_FFFFL), data.consumeLong(0, 0xFFFF_FFFFL))) {
            tcp.handshake();
            tcp.clientSends(frame(false, requestFlags, revision, requestData));
            tcp.serverSends(frame(true, replyFlags, revision, replyData));
            while (data.remainingBytes() > 0) {
                boolean fromClient = data.consumeBoolean();
                byte[] payload = data.consumeBytes(data.consumeInt(1, 3000));
                if (payload.length == 0) {
                    break;
                }
                if (fromClient) {
                    tcp.clientSends(payload);
                } else {
                    tcp.serverSends(payload);
                }
            }
        }
        check(IwarpStreamDecoder.decode(PcapFile.read(pcap.toByteArray())));
    }

    private static byte[] frame(boolean reply, int flags, int revision, byte[] privateData) {
        ByteBuf out = Unpooled.buffer();
        try {
            MpaFrames.write(out, reply, flags, revision, Unpooled.wrappedBuffer(privateData));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** Invariants of any decode. */
    private static void check(CaptureDecode decode) {
        int previous = 0;
        for (DecodedPdu pdu : decode.pdus()) {
            if (pdu.frameNumber() < previous) {
                throw new AssertionError("PDUs out of frame order: " + pdu);
            }
            previous = pdu.frameNumber();
            if (pdu.summary() == null || pdu.fields() == null) {
                throw new AssertionError("incomplete PDU " + pdu);
            }
            for (String field : pdu.fields().keySet()) {
                if (!field.startsWith("iwarp_")) {
                    throw new AssertionError("field outside Wireshark's iWARP names: " + field);
                }
            }
        }
        decode.fieldsByFrame();
        decode.crcVerdictsByFrame();
    }
}
