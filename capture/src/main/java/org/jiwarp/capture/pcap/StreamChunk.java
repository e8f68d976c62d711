package org.jiwarp.capture.pcap;

import java.util.Arrays;
import java.util.Objects;

/**
 * A run of in-order bytes of one direction of a TCP connection, as {@link TcpDirection} delivers
 * them.
 *
 * @param frameNumber  the frame whose arrival made these bytes contiguous with everything before
 *                     them: the segment that carried them, or, for bytes that waited out of order,
 *                     the segment that filled the hole in front of them
 * @param streamOffset offset of {@code data[0]} in the direction's byte stream, 0 being the first
 *                     byte after the SYN (sequence number ISN+1)
 * @param data         the bytes; may share its array with the captured segment, do not modify
 */
public record StreamChunk(int frameNumber, long streamOffset, byte[] data) {

    /** Checks that {@code data} is present. */
    public StreamChunk {
        Objects.requireNonNull(data, "data");
    }

    /** The stream offset just past this chunk. */
    public long endOffset() {
        return streamOffset + data.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StreamChunk other
                && frameNumber == other.frameNumber
                && streamOffset == other.streamOffset
                && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(frameNumber, streamOffset) * 31 + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "StreamChunk[frame " + frameNumber + ", offset " + streamOffset + ", " + data.length + " bytes]";
    }
}
