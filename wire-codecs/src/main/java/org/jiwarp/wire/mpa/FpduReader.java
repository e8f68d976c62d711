package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.jiwarp.wire.crc.Crc32c;

/**
 * Reads FPDUs from one direction of a reassembled stream: finds each FPDU's length, strips the
 * markers, checks every marker's FPDUPTR and the CRC (RFC 5044 sections 4.1, 4.3, 4.4, 6).
 *
 * <p>The offline counterpart of {@link FpduWriter}, used by the pcap stream decoder and tests. It
 * copies each ULPDU out (the live deframer in the {@code mpa} module emits retained slices).
 */
public final class FpduReader {

    /** One FPDU as read. */
    public static final class Frame {
        /** Stream position of the FPDU's first octet (its leading marker, if any). */
        public long streamPosition;
        /** Octets on the wire, markers included. */
        public int wireLength;
        public int ulpduLength;
        /** The ULPDU with markers removed. */
        public byte[] ulpdu;
        /** The pad octets as received. */
        public byte[] pad;
        /** The CRC field as received. */
        public int crcField;
        /** The CRC-32C computed over the FPDU. */
        public int crcComputed;
        /** FPDUPTR of each marker inside the FPDU, in order. */
        public int[] markerPointers;
        /** Stream position of each marker. */
        public long[] markerPositions;
        /** Reserved field of each marker. */
        public int[] markerReserved;
        /** {@code true} when every marker's FPDUPTR points at this FPDU's ULPDU_LENGTH field. */
        public boolean markersValid;
        /**
         * The receiver's view (RFC 5044 section 4.2: it treats the two low bits of FPDUPTR as zero):
         * {@code true} when every FPDUPTR so read points at ULPDU_LENGTH. {@link #markersValid} is the
         * sender's check, which wants those bits zero.
         */
        public boolean markersLocate;

        public boolean crcGood() {
            return crcField == crcComputed;
        }
    }

    private final boolean markersEnabled;
    private final Crc32c crc = new Crc32c();
    private long streamPosition;

    public FpduReader(boolean markersEnabled) {
        this(markersEnabled, 0);
    }

    /**
     * A reader whose next FPDU sits {@code streamPosition} octets after the start of the first FPDU
     * of full operation (where the marker grid begins, RFC 5044 section 4.3): for reading on after
     * octets that were skipped, such as a gap in a capture.
     */
    public FpduReader(boolean markersEnabled, long streamPosition) {
        this.markersEnabled = markersEnabled;
        this.streamPosition = streamPosition;
    }

    /** The stream position of the next FPDU. */
    public long streamPosition() {
        return streamPosition;
    }

    /**
     * Reads the FPDU that starts at {@code buf.readerIndex()} and advances the reader index past it.
     *
     * @return the frame, or {@code null} (nothing consumed) when the buffer does not yet hold all of it
     */
    public Frame read(ByteBuf buf) {
        int start = buf.readerIndex();
        long fpduStart = streamPosition;
        long header = fpduStart;
        int index = start;
        if (markersEnabled && Markers.isMarkerPosition(fpduStart)) {
            header += Markers.LENGTH;
            index += Markers.LENGTH;
        }
        if (buf.writerIndex() - index < Fpdu.HEADER_LENGTH) {
            return null;
        }
        int ulpduLength = Fpdu.ulpduLength(buf, index);
        int unmarked = Fpdu.length(ulpduLength);
        int markers = markersEnabled ? Markers.count(fpduStart, unmarked) : 0;
        int wireLength = unmarked + Markers.LENGTH * markers;
        if (buf.writerIndex() - start < wireLength) {
            return null;
        }
        Frame frame = new Frame();
        frame.streamPosition = fpduStart;
        frame.wireLength = wireLength;
        frame.ulpduLength = ulpduLength;
        frame.markerPointers = new int[markers];
        frame.markerPositions = new long[markers];
        frame.markerReserved = new int[markers];
        frame.markersValid = true;
        frame.markersLocate = true;
        byte[] body = new byte[unmarked - Fpdu.CRC_LENGTH];
        int bodyFilled = 0;
        int m = 0;
        long position = fpduStart;
        int end = start + wireLength - Fpdu.CRC_LENGTH;
        for (int i = start; i < end; ) {
            if (markersEnabled && Markers.isMarkerPosition(position)) {
                int pointer = Markers.fpduPtr(buf, i);
                frame.markerPositions[m] = position;
                frame.markerReserved[m] = Markers.reserved(buf, i);
                frame.markerPointers[m++] = pointer;
                long expected = position == fpduStart ? 0 : position - header;
                if (pointer != expected) {
                    frame.markersValid = false;
                }
                if ((pointer & ~0x3) != expected) {
                    frame.markersLocate = false;
                }
                i += Markers.LENGTH;
                position += Markers.LENGTH;
                continue;
            }
            // Not at a marker position here, so the next one is at least one octet away.
            int chunk = markersEnabled ? Math.min(end - i, Markers.untilNextMarker(position)) : end - i;
            buf.getBytes(i, body, bodyFilled, chunk);
            bodyFilled += chunk;
            i += chunk;
            position += chunk;
        }
        frame.ulpdu = Arrays.copyOfRange(body, Fpdu.HEADER_LENGTH, Fpdu.HEADER_LENGTH + ulpduLength);
        frame.pad = Arrays.copyOfRange(body, Fpdu.HEADER_LENGTH + ulpduLength, body.length);
        frame.crcField = Fpdu.crc(buf, end);
        frame.crcComputed = crc.reset().update(buf, start, end - start).value();
        buf.readerIndex(start + wireLength);
        streamPosition = fpduStart + wireLength;
        return frame;
    }
}
