package org.jiwarp.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.mpa.FpduDeframer;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.UlpduSink;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Fuzzes the live {@link FpduDeframer} against the copying reference reader {@link FpduReader}
 * (RFC 5044 sections 4.1-4.4, 6, 8): whatever the octets and however TCP cuts them, the deframer
 * passes up exactly the ULPDUs the reference finds valid, in order, then reports exactly the first
 * error (an over-long ULPDU_LENGTH or a bad marker as 0x03, a bad CRC as 0x02; a marker as soon as
 * it has arrived, also in an FPDU the stream ends inside) as an
 * {@link MpaException}, passes nothing after it and closes the channel. No other exception, no leak.
 *
 * <p>Input: a mode octet (bit 0 CRC, bit 1 markers, bit 2 build the stream from ULPDUs with
 * {@link FpduWriter} so that it starts out valid, bit 3 stream the ULPDUs to a {@link UlpduSink}), the ULPDU length limit (u16, 0 meaning 65535), a
 * segmentation seed, then either raw stream octets or a list of edits: {@code 0x00-0xEF} a ULPDU of
 * u16 % 2048 octets, {@code 0xF0-0xFE} flip one octet of what was built so far, {@code 0xFF} raw
 * octets. CI replays the seeds under {@code FpduDeframerFuzzTestInputs/deframe/}; see FUZZING.md.
 */
class FpduDeframerFuzzTest {

    @FuzzTest(maxDuration = "20s")
    void deframe(byte[] bytes) {
        FuzzInput in = new FuzzInput(bytes);
        int mode = in.u8();
        boolean crc = (mode & 1) != 0;
        boolean markers = (mode & 2) != 0;
        int limit = in.u16();
        int maxUlpdu = limit == 0 ? Fpdu.MAX_ULPDU_LENGTH : limit;
        int cutSeed = in.u8();
        byte[] stream = (mode & 4) != 0 ? build(in, crc, markers) : in.rest();

        Expected expected = reference(stream, crc, markers, maxUlpdu);

        FpduDeframer deframer = new FpduDeframer(crc, markers, maxUlpdu);
        Collector up = new Collector();
        if ((mode & 8) != 0) {
            deframer.deliverTo(up); // the sink: header, payload pieces, end (held until the CRC when on)
        }
        EmbeddedChannel channel = new EmbeddedChannel(deframer, up);
        try {
            int at = 0;
            int step = 0;
            while (at < stream.length && channel.isOpen()) {
                int cut = Math.min(stream.length - at, cutLength(cutSeed, step++));
                channel.writeInbound(Unpooled.wrappedBuffer(stream, at, cut));
                at += cut;
            }
            check(expected.ulpdus.size() == up.ulpdus.size(), "ULPDU count", expected, up);
            for (int i = 0; i < expected.ulpdus.size(); i++) {
                check(Arrays.equals(expected.ulpdus.get(i), up.ulpdus.get(i)), "ULPDU " + i, expected, up);
            }
            check(up.others.isEmpty(), "only MpaExceptions may come up: " + up.others, expected, up);
            if (expected.error == null) {
                check(up.errors.isEmpty(), "no error expected", expected, up);
                check(channel.isOpen() && !deframer.failed(), "the channel stays open", expected, up);
                // Streaming: every octet is consumed as it arrives, a trailing partial FPDU's too.
                check(deframer.streamPosition() == stream.length, "stream position " + deframer.streamPosition(),
                        expected, up);
            } else {
                check(up.errors.size() == 1 && up.errors.get(0) == expected.error, "exactly the first error",
                        expected, up);
                // RFC 5044 section 8: MPA reports the error and leaves closing to DDP's ULP; it discards the rest.
                check(channel.isOpen() && deframer.failed(), "MPA left the connection open, failed", expected, up);
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** What {@link FpduReader} makes of the whole stream, with the deframer's order of checks. */
    private static Expected reference(byte[] stream, boolean crc, boolean markers, int maxUlpdu) {
        Expected expected = new Expected();
        FpduReader reader = new FpduReader(markers);
        ByteBuf buf = Unpooled.wrappedBuffer(stream);
        try {
            while (true) {
                int header = buf.readerIndex()
                        + (markers && Markers.isMarkerPosition(reader.streamPosition()) ? Markers.LENGTH : 0);
                if (buf.writerIndex() - header < Fpdu.HEADER_LENGTH) {
                    expected.error = markersSoFar(buf, reader.streamPosition(), markers);
                    break;
                }
                // The length limit is checked as soon as ULPDU_LENGTH is in, before the FPDU is whole.
                if (Fpdu.ulpduLength(buf, header) > maxUlpdu) {
                    expected.error = TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH;
                    break;
                }
                FpduReader.Frame frame = reader.read(buf);
                if (frame == null) {
                    expected.error = markersSoFar(buf, reader.streamPosition(), markers);
                    break;
                }
                // A receiver takes FPDUPTR's two low bits as zero (RFC 5044 section 4.2).
                if (markers && !frame.markersLocate) {
                    expected.error = TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH;
                    break;
                }
                if (crc && !frame.crcGood()) {
                    expected.error = TerminateError.LLP_CRC_ERROR;
                    break;
                }
                expected.ulpdus.add(frame.ulpdu);
                expected.position = reader.streamPosition();
            }
        } finally {
            buf.release();
        }
        return expected;
    }

    /**
     * The streaming deframer checks each marker as it arrives: in the incomplete FPDU at the end of
     * the stream (at {@code buf}'s reader index, stream position {@code position}), the first marker
     * that has arrived whole and does not locate the FPDU is an error already.
     */
    private static TerminateError markersSoFar(ByteBuf buf, long position, boolean markers) {
        if (!markers) {
            return null;
        }
        int start = buf.readerIndex();
        int end = buf.writerIndex();
        long header = position + (Markers.isMarkerPosition(position) ? Markers.LENGTH : 0);
        int headerIndex = start + (int) (header - position);
        long fpduEnd = end - headerIndex >= Fpdu.HEADER_LENGTH
                ? position + Markers.markedLength(position, Fpdu.length(Fpdu.ulpduLength(buf, headerIndex)))
                : Long.MAX_VALUE;
        for (long marker = position + Markers.untilNextMarker(position); marker < fpduEnd; marker += Markers.INTERVAL) {
            int index = start + (int) (marker - position);
            if (index + Markers.LENGTH > end) {
                break;
            }
            long expected = marker == position ? 0 : marker - header;
            if ((Markers.fpduPtr(buf, index) & ~0x3) != expected) {
                return TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH;
            }
        }
        return null;
    }

    /** A stream of valid FPDUs with edits, as the class javadoc says. */
    private static byte[] build(FuzzInput in, boolean crc, boolean markers) {
        FpduWriter writer = new FpduWriter(crc, markers);
        ByteBuf out = Unpooled.buffer();
        try {
            while (!in.exhausted()) {
                int op = in.u8();
                if (op < 0xF0) {
                    byte[] ulpdu = in.bytes(in.u16() % 2048);
                    ByteBuf u = Unpooled.wrappedBuffer(ulpdu);
                    try {
                        writer.write(u, out);
                    } finally {
                        u.release();
                    }
                } else if (op < 0xFF) {
                    int at = in.u16();
                    int flip = in.u8() | 1;
                    if (out.writerIndex() > 0) {
                        at %= out.writerIndex();
                        out.setByte(at, out.getByte(at) ^ flip);
                    }
                } else {
                    out.writeBytes(in.bytes(in.u8()));
                }
            }
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** TCP segment lengths from a seed: 1-octet cuts, small ones, or big ones. */
    private static int cutLength(int seed, int step) {
        switch (seed & 3) {
            case 0:
                return Integer.MAX_VALUE; // one write
            case 1:
                return 1 + (seed >>> 2);
            case 2:
                return 1 + ((seed * 31 + step * 17) % 13);
            default:
                return 1 + ((seed * 131 + step * 977) % 1500);
        }
    }

    private static void check(boolean ok, String what, Expected expected, Collector up) {
        if (!ok) {
            throw new AssertionError(what + ": expected " + expected.ulpdus.size() + " ULPDUs then "
                    + expected.error + "; got " + up.ulpdus.size() + " ULPDUs, errors " + up.errors);
        }
    }

    private static final class Expected {
        final List<byte[]> ulpdus = new ArrayList<>();
        TerminateError error;
        long position;
    }

    /** Copies and releases what comes up. */
    private static final class Collector extends ChannelInboundHandlerAdapter implements UlpduSink {
        final List<byte[]> ulpdus = new ArrayList<>();
        private final ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        private int streamedLength = -1;

        // Sink mode: the header length comes from the ULPDU's first octet.
        @Override
        public int headerLength(int ddpControl, int rdmapControl, int ulpduLength) {
            return 1 + (ddpControl & 0x1F);
        }

        @Override
        public void begin(ByteBuf header, int ulpduLength) {
            if (streamedLength >= 0) {
                others.add(new IllegalStateException("begin inside a ULPDU"));
            }
            streamed.reset();
            streamed.writeBytes(ByteBufUtil.getBytes(header));
            streamedLength = ulpduLength;
        }

        @Override
        public void payload(ByteBuf source, int index, int length) {
            if (streamedLength < 0) {
                others.add(new IllegalStateException("payload outside a ULPDU"));
            }
            streamed.writeBytes(ByteBufUtil.getBytes(source, index, length));
        }

        @Override
        public void end() {
            if (streamed.size() != streamedLength) {
                others.add(new IllegalStateException("delivered " + streamed.size() + " of " + streamedLength));
            }
            streamedLength = -1;
            ulpdus.add(streamed.toByteArray());
        }

        final List<TerminateError> errors = new ArrayList<>();
        final List<Throwable> others = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf ulpdu = (ByteBuf) msg;
            try {
                ulpdus.add(ByteBufUtil.getBytes(ulpdu));
            } finally {
                ulpdu.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof MpaException) {
                errors.add(((MpaException) cause).error());
            } else {
                others.add(cause);
            }
        }
    }
}
