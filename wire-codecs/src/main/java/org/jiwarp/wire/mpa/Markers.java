package org.jiwarp.wire.mpa;

import io.netty.buffer.ByteBuf;

/**
 * MPA markers (RFC 5044 section 4.3).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |           RESERVED            |            FPDUPTR            |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>A marker sits at every 512th octet of the TCP stream, counted from the first octet of the
 * first FPDU of full operation; markers are negotiated per direction. A marker that falls exactly
 * where an FPDU begins goes in front of its ULPDU_LENGTH field with FPDUPTR 0, and belongs to that
 * FPDU: it is covered by the FPDU's CRC, as in the Wireshark sample captures and Wireshark's own
 * CRC check. A marker inside an FPDU carries in FPDUPTR the octet distance back from the marker to
 * the FPDU's ULPDU_LENGTH field.
 *
 * <p>Stream positions here are {@code long}s counted from the marker origin.
 */
public final class Markers {

    /** Octets from one marker to the next. */
    public static final int INTERVAL = 512;
    /** Length of a marker. */
    public static final int LENGTH = 4;
    public static final int RESERVED_OFFSET = 0;
    public static final int FPDUPTR_OFFSET = 2;
    /** The largest distance a 16-bit FPDUPTR can express. */
    public static final int MAX_FPDUPTR = 0xFFFF;

    private Markers() {
    }

    public static int reserved(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + RESERVED_OFFSET);
    }

    public static int fpduPtr(ByteBuf buf, int offset) {
        return buf.getUnsignedShort(offset + FPDUPTR_OFFSET);
    }

    /** Appends a marker. */
    public static void write(ByteBuf out, int fpduPtr) {
        out.writeInt(fpduPtr & 0xFFFF);
    }

    /** {@code true} when a marker belongs at this stream position. */
    public static boolean isMarkerPosition(long streamPosition) {
        return (streamPosition & (INTERVAL - 1)) == 0;
    }

    /** Octets from {@code streamPosition} to the next marker position (0 when at one). */
    public static int untilNextMarker(long streamPosition) {
        return (int) (-streamPosition & (INTERVAL - 1));
    }

    /**
     * How many markers an FPDU of {@code unmarkedLength} octets (see {@link Fpdu#length(int)})
     * carries when it starts at {@code streamPosition}, a leading marker included.
     */
    public static int count(long streamPosition, int unmarkedLength) {
        int markers = 0;
        long next = streamPosition + untilNextMarker(streamPosition);
        while (next < streamPosition + unmarkedLength + (long) markers * LENGTH) {
            markers++;
            next += INTERVAL;
        }
        return markers;
    }

    /** Octets on the wire of an FPDU of {@code unmarkedLength} octets that starts at {@code streamPosition}. */
    public static int markedLength(long streamPosition, int unmarkedLength) {
        return unmarkedLength + LENGTH * count(streamPosition, unmarkedLength);
    }

    /**
     * The largest FPDUPTR among the markers of an FPDU of {@code unmarkedLength} octets starting at
     * {@code streamPosition} (0 when it has none, or only a leading one).
     */
    public static long maxFpduPtr(long streamPosition, int unmarkedLength) {
        int markers = count(streamPosition, unmarkedLength);
        long first = streamPosition + untilNextMarker(streamPosition);
        boolean leading = first == streamPosition;
        if (markers == 0 || (leading && markers == 1)) {
            return 0;
        }
        long header = leading ? streamPosition + LENGTH : streamPosition;
        return first + (long) (markers - 1) * INTERVAL - header;
    }
}
