package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * One direction of Sends framed with markers the way RFC 5044 section 4.3 puts them, or the way an
 * early implementation got them wrong: a sender whose marker counter leaves out each FPDU's CRC
 * field (so its grid drifts 4 octets further with every FPDU), or one that writes FPDUPTR
 * little-endian. Records where every FPDU and marker went.
 */
final class MarkerStreams {

    /** How the sender places its markers. */
    enum Sender {
        RFC(false, false), DRIFTING(true, false), LITTLE_ENDIAN(false, true), DRIFTING_LITTLE_ENDIAN(true, true);

        final boolean drift;
        final boolean littleEndian;

        Sender(boolean drift, boolean littleEndian) {
            this.drift = drift;
            this.littleEndian = littleEndian;
        }
    }

    final Sender sender;
    final boolean crc;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private long counted;
    /** Where each FPDU starts (its leading marker, if any), and where its ULPDU_LENGTH field is. */
    final List<Integer> starts = new ArrayList<>();
    final List<Integer> headers = new ArrayList<>();
    /** Each marker: its position, its FPDUPTR and the FPDU it belongs to. */
    final List<int[]> markers = new ArrayList<>();

    MarkerStreams(Sender sender, boolean crc) {
        this.sender = sender;
        this.crc = crc;
    }

    /** A stream of {@code count} Sends (MSN 1 on) with random payloads of 1 to {@code maxPayload} octets. */
    static MarkerStreams of(Sender sender, boolean crc, int count, int maxPayload, long seed) {
        MarkerStreams stream = new MarkerStreams(sender, crc);
        SplittableRandom random = new SplittableRandom(seed);
        for (int msn = 1; msn <= count; msn++) {
            byte[] payload = new byte[1 + random.nextInt(maxPayload)];
            random.nextBytes(payload);
            ByteBuf ulpdu = Unpooled.buffer();
            DdpHeaders.writeUntagged(ulpdu, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, 0, msn, 0);
            ulpdu.writeBytes(payload);
            stream.write(ByteBufUtil.getBytes(ulpdu));
            ulpdu.release();
        }
        return stream;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    /**
     * How many octets of the next FPDU's ULPDU_LENGTH field, ULPDU and pad go before the next
     * marker: the marker's FPDUPTR when it falls inside that FPDU, 0 when the FPDU begins with one.
     */
    int toNextMarker() {
        return (int) Math.floorMod(-counted, 512L);
    }

    /** How many octets of the sender's marker count an FPDU of {@code body} octets without markers takes. */
    int counted(int body) {
        return body + (sender.drift ? 0 : Fpdu.CRC_LENGTH);
    }

    void write(byte[] ulpdu) {
        int pad = Fpdu.padLength(ulpdu.length);
        byte[] body = new byte[Fpdu.HEADER_LENGTH + ulpdu.length + pad];
        body[0] = (byte) (ulpdu.length >>> 8);
        body[1] = (byte) ulpdu.length;
        System.arraycopy(ulpdu, 0, body, Fpdu.HEADER_LENGTH, ulpdu.length);
        int start = out.size();
        int fpdu = starts.size();
        starts.add(start);
        int header = -1;
        for (byte b : body) {
            if (counted % 512 == 0) {
                marker(header < 0 ? 0 : out.size() - header, fpdu);
            }
            if (header < 0) {
                header = out.size();
                headers.add(header);
            }
            out.write(b);
            counted++;
        }
        byte[] so_far = out.toByteArray();
        int value = crc ? Crc32c.compute(so_far, start, so_far.length - start) : 0;
        for (int i = 0; i < 4; i++) {
            if (!sender.drift && counted % 512 == 0) {
                marker(out.size() - header, fpdu);
            }
            out.write(value >>> (8 * i)); // RFC 5044 section 4.4: the CRC goes little-endian
            if (!sender.drift) {
                counted++; // the drifting sender forgets to count its CRC octets
            }
        }
    }

    private void marker(int pointer, int fpdu) {
        markers.add(new int[] {out.size(), pointer, fpdu});
        out.write(0);
        out.write(0);
        if (sender.littleEndian) {
            out.write(pointer);
            out.write(pointer >>> 8);
        } else {
            out.write(pointer >>> 8);
            out.write(pointer);
        }
        counted += 4;
    }
}
