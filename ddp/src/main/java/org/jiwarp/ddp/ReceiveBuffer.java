package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import java.util.Objects;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * A posted receive: an untagged buffer (RFC 5041 section 3.3) made of a scatter list.
 *
 * <pre>
 *   message:   | MO 0 ...                                                   capacity |
 *              +----------------+------+----------------------------+
 *   segments:  | segments[0]    | [1]  | segments[2]                |   (readable regions,
 *              +----------------+------+----------------------------+    in order)
 * </pre>
 *
 * <p>Each segment's readable region, as it is when the buffer is constructed, is where data goes,
 * in order; later changes to the segments' indices do not move it. The buffer does not retain or
 * release the segments: the poster keeps their memory alive until the buffer completes or is
 * flushed.
 *
 * <p>Fenced, when built with the regions its segments lie in: like a tagged placement (see
 * {@link TaggedBuffer}), each copy enters its region first, so once a region is invalidated or
 * deregistered no byte of it is written through a receive posted before; the message then fails
 * with {@link MemoryGoneException}.
 *
 * <p>Placement state ({@link #bytesPlaced()}) belongs to the thread that places into the
 * {@link UntaggedQueue} the buffer is posted to; posting resets it, so a completed buffer may be
 * posted again.
 */
public final class ReceiveBuffer {

    private final long workRequestId;
    private final ByteBuf[] segments;
    /** The region each segment lies in, entered around each copy; {@code null}: unfenced. */
    private final TaggedBuffer[] regions;
    private final int[] starts;
    private final int[] lengths;
    private final long capacity;

    private long bytesPlaced;
    /** The segment and offset in it where the next byte goes. */
    private int cursorSegment;
    private int cursorOffset;

    /**
     * @param workRequestId the work request's id, reported with its completion
     * @param segments the scatter list; each one's readable region receives data, in order
     */
    public ReceiveBuffer(long workRequestId, ByteBuf... segments) {
        this(workRequestId, segments, null);
    }

    /**
     * A fenced buffer.
     *
     * @param workRequestId the work request's id, reported with its completion
     * @param segments the scatter list; each one's readable region receives data, in order
     * @param regions the region each segment lies in, in the same order; {@code null} for none
     */
    public ReceiveBuffer(long workRequestId, ByteBuf[] segments, TaggedBuffer[] regions) {
        if (regions != null && regions.length != segments.length) {
            throw new IllegalArgumentException(regions.length + " regions for " + segments.length + " segments");
        }
        this.workRequestId = workRequestId;
        this.regions = regions == null ? null : regions.clone();
        this.segments = segments.clone();
        this.starts = new int[segments.length];
        this.lengths = new int[segments.length];
        long total = 0;
        for (int i = 0; i < segments.length; i++) {
            ByteBuf segment = Objects.requireNonNull(segments[i], "segment");
            starts[i] = segment.readerIndex();
            lengths[i] = segment.readableBytes();
            total += lengths[i];
        }
        this.capacity = total;
    }

    public long workRequestId() {
        return workRequestId;
    }

    /** The total of the segments' readable bytes: the longest message the buffer takes. */
    public long capacity() {
        return capacity;
    }

    /** Octets of the current message placed so far (its length once the buffer completed). */
    public long bytesPlaced() {
        return bytesPlaced;
    }

    /** The scatter list (a copy of the array; the buffers themselves are shared). */
    public ByteBuf[] segments() {
        return segments.clone();
    }

    void reset() {
        bytesPlaced = 0;
        cursorSegment = 0;
        cursorOffset = 0;
    }

    /**
     * Copies {@code length} readable bytes of {@code source} (indices unchanged) behind the bytes
     * placed so far; the caller has checked that they fit.
     *
     * @throws MemoryGoneException when a segment's region was invalidated or deregistered since the
     *     post; what went before it in this call stays placed
     */
    void append(ByteBuf source, int index, int length) {
        int from = index;
        int left = length;
        int segment = cursorSegment;
        int offset = cursorOffset;
        while (left > 0) {
            int room = lengths[segment] - offset;
            if (room == 0) {
                segment++;
                offset = 0;
                continue;
            }
            int n = Math.min(room, left);
            TaggedBuffer region = regions == null ? null : regions[segment];
            if (region != null && !region.enterPlacement()) {
                cursorSegment = segment;
                cursorOffset = offset;
                throw new MemoryGoneException(this, region);
            }
            try {
                segments[segment].setBytes(starts[segment] + offset, source, from, n);
            } finally {
                if (region != null) {
                    region.exitPlacement();
                }
            }
            from += n;
            offset += n;
            left -= n;
        }
        cursorSegment = segment;
        cursorOffset = offset;
        bytesPlaced += length;
    }

    @Override
    public String toString() {
        return "ReceiveBuffer[wr " + workRequestId + ", " + segments.length + " segments, " + bytesPlaced + "/"
                + capacity + "]";
    }

    /**
     * A receive whose memory was invalidated or deregistered after it was posted: a local error of
     * the data sink (RFC 5041 section 7.2's local catastrophic error, as Linux siw reports it). The
     * receive is used up; its work completion is a local protection error.
     */
    public static final class MemoryGoneException extends TerminateException {
        private static final long serialVersionUID = 1L;

        private final transient ReceiveBuffer buffer;

        MemoryGoneException(ReceiveBuffer buffer, TaggedBuffer region) {
            super(TerminateError.DDP_LOCAL_CATASTROPHIC, String.format("receive %d: its memory (STag 0x%08x) was "
                    + "invalidated or deregistered after the post", buffer.workRequestId, region.stag()));
            this.buffer = buffer;
        }

        /** The receive that failed. */
        public ReceiveBuffer buffer() {
            return buffer;
        }
    }
}
