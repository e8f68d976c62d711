package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.crc.Crc32c;

/**
 * Frames ULPDUs into FPDUs on one direction of a stream: length field, pad, markers and CRC
 * (RFC 5044 sections 4.1, 4.3, 4.4).
 *
 * <p>This is the simple, copying writer that captures, the adversarial peer and tests use; the
 * live stack frames with the zero-copy Netty framer of the {@code mpa} module, and tests hold the
 * two to the same bytes. It tracks the stream position of the direction (0 = the first octet of
 * the first FPDU, the marker origin).
 */
public final class FpduWriter {

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final Crc32c crc = new Crc32c();
    private long streamPosition;

    /**
     * @param crcEnabled compute the CRC; otherwise the field is sent as zero
     * @param markersEnabled insert markers (negotiated for this direction)
     */
    public FpduWriter(boolean crcEnabled, boolean markersEnabled) {
        this.crcEnabled = crcEnabled;
        this.markersEnabled = markersEnabled;
    }

    /** Octets written so far on this direction, markers included. */
    public long streamPosition() {
        return streamPosition;
    }

    /**
     * Appends one FPDU carrying the readable bytes of {@code ulpdu} (not consumed) to {@code out}.
     *
     * @return octets appended
     * @throws IllegalArgumentException when the ULPDU is longer than 65535 octets, or, with markers,
     *     so long that a marker's 16-bit FPDUPTR could not reach back to the length field
     */
    public int write(ByteBuf ulpdu, ByteBuf out) {
        int ulpduLength = ulpdu.readableBytes();
        if (ulpduLength > Fpdu.MAX_ULPDU_LENGTH) {
            throw new IllegalArgumentException("ULPDU of " + ulpduLength + " octets exceeds " + Fpdu.MAX_ULPDU_LENGTH);
        }
        if (markersEnabled && Markers.maxFpduPtr(streamPosition, Fpdu.length(ulpduLength)) > Markers.MAX_FPDUPTR) {
            throw new IllegalArgumentException("ULPDU of " + ulpduLength + " octets at stream position "
                    + streamPosition + " needs an FPDUPTR above " + Markers.MAX_FPDUPTR);
        }
        int start = out.writerIndex();
        long fpduStart = streamPosition;
        long header = fpduStart;
        if (markersEnabled && Markers.isMarkerPosition(streamPosition)) {
            // RFC 5044 section 4.3: a marker at the start of the FPDU precedes the length field.
            Markers.write(out, 0);
            streamPosition += Markers.LENGTH;
            header = streamPosition;
        }
        out.writeShort(ulpduLength);
        streamPosition += Fpdu.HEADER_LENGTH;
        copyWithMarkers(ulpdu, ulpdu.readerIndex(), ulpduLength, out, header);
        for (int pad = Fpdu.padLength(ulpduLength); pad > 0; pad--) {
            insertMarkerIfDue(out, header);
            out.writeByte(0);
            streamPosition++;
        }
        insertMarkerIfDue(out, header);
        int value = crcEnabled ? crc.reset().update(out, start, out.writerIndex() - start).value() : 0;
        Fpdu.writeCrc(out, value);
        streamPosition += Fpdu.CRC_LENGTH;
        return out.writerIndex() - start;
    }

    private void copyWithMarkers(ByteBuf src, int index, int length, ByteBuf out, long header) {
        while (length > 0) {
            insertMarkerIfDue(out, header);
            // Just past a marker (or with markers off), so the next one is at least one octet away.
            int chunk = markersEnabled ? Math.min(length, Markers.untilNextMarker(streamPosition)) : length;
            out.writeBytes(src, index, chunk);
            index += chunk;
            length -= chunk;
            streamPosition += chunk;
        }
    }

    private void insertMarkerIfDue(ByteBuf out, long header) {
        if (markersEnabled && Markers.isMarkerPosition(streamPosition)) {
            // RFC 5044 section 4.3: FPDUPTR counts back from the marker to the ULPDU_LENGTH field.
            Markers.write(out, (int) (streamPosition - header));
            streamPosition += Markers.LENGTH;
        }
    }
}
