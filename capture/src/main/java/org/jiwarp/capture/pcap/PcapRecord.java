package org.jiwarp.capture.pcap;

import java.util.Arrays;
import java.util.Objects;

/**
 * One packet record of a pcap file.
 *
 * <pre>
 *   record header (16 bytes, in the file's byte order)
 *   +-----------------+-----------------+-----------------+-----------------+
 *   | ts_sec          | ts_usec/ts_nsec | incl_len        | orig_len        |
 *   +-----------------+-----------------+-----------------+-----------------+
 *   | packet data: incl_len bytes ...
 * </pre>
 *
 * @param frameNumber    1-based position in the file, as Wireshark's {@code frame.number}
 * @param timestampNanos capture time in nanoseconds since the Unix epoch (microsecond files give
 *                       multiples of 1000)
 * @param originalLength the length of the packet on the wire ({@code orig_len}); larger than
 *                       {@code data.length} when the capture was cut at the snap length
 * @param data           the captured bytes ({@code incl_len} of them); not copied, do not modify
 * @param interfaceId    the pcapng interface that captured it (its link type is
 *                       {@link PcapFile#linkType(PcapRecord)}); 0 in a classic pcap file
 */
public record PcapRecord(int frameNumber, long timestampNanos, int originalLength, byte[] data, int interfaceId) {

    /** Checks that {@code data} is present. */
    public PcapRecord {
        Objects.requireNonNull(data, "data");
    }

    /** A record of a classic pcap file (interface 0). */
    public PcapRecord(int frameNumber, long timestampNanos, int originalLength, byte[] data) {
        this(frameNumber, timestampNanos, originalLength, data, 0);
    }

    /** The number of captured bytes ({@code incl_len}). */
    public int capturedLength() {
        return data.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PcapRecord other
                && frameNumber == other.frameNumber
                && timestampNanos == other.timestampNanos
                && originalLength == other.originalLength
                && interfaceId == other.interfaceId
                && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(frameNumber, timestampNanos, originalLength, interfaceId) * 31 + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "PcapRecord[frame " + frameNumber + ", " + timestampNanos + " ns, "
                + data.length + " of " + originalLength + " bytes]";
    }
}
