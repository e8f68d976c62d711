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
 * in order; later changes to the segments' indices do not move it. A queue pair may also keep one
 * buffer and fill it again for each post ({@link #ReceiveBuffer(int)}, {@link #repost}, {@link #add}). The buffer does not retain or
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

    private long workRequestId;
    /** The memory each segment lies in; its octets [starts[i], starts[i] + lengths[i]) receive data. */
    private ByteBuf[] segments;
    /** The region each segment lies in, entered around each copy; {@code null} entries: unfenced. */
    private TaggedBuffer[] regions;
    private int[] starts;
    private int[] lengths;
    /** Segments in use (the arrays may be longer: a recycled buffer keeps its largest). */
    private int count;
    private long capacity;

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
        this(segments.length);
        if (regions != null && regions.length != segments.length) {
            throw new IllegalArgumentException(regions.length + " regions for " + segments.length + " segments");
        }
        repost(workRequestId);
        for (int i = 0; i < segments.length; i++) {
            ByteBuf segment = Objects.requireNonNull(segments[i], "segment");
            add(segment, segment.readerIndex(), segment.readableBytes(), regions == null ? null : regions[i]);
        }
    }

    /**
     * An empty buffer for a queue pair to fill ({@link #repost}, {@link #add}) for each post of a
     * receive and use again once the receive has completed: nothing allocated per post.
     *
     * @param maxSegments the scatter list's usual longest (a longer one grows the buffer)
     */
    public ReceiveBuffer(int maxSegments) {
        int n = Math.max(1, maxSegments);
        this.segments = new ByteBuf[n];
        this.regions = new TaggedBuffer[n];
        this.starts = new int[n];
        this.lengths = new int[n];
    }

    /** Starts a new receive: its work request id and, from {@link #add}, its scatter list. */
    public ReceiveBuffer repost(long workRequestId) {
        for (int i = 0; i < count; i++) {
            segments[i] = null; // no reference to memory the receive no longer uses
            regions[i] = null;
        }
        this.workRequestId = workRequestId;
        this.count = 0;
        this.capacity = 0;
        reset();
        return this;
    }

    /**
     * Adds {@code length} octets of {@code memory} at {@code index} as the scatter list's next
     * segment, fenced by {@code region} ({@code null}: unfenced).
     */
    public ReceiveBuffer add(ByteBuf memory, int index, int length, TaggedBuffer region) {
        if (count == segments.length) {
            int n = 2 * count;
            segments = java.util.Arrays.copyOf(segments, n);
            regions = java.util.Arrays.copyOf(regions, n);
            starts = java.util.Arrays.copyOf(starts, n);
            lengths = java.util.Arrays.copyOf(lengths, n);
        }
        segments[count] = Objects.requireNonNull(memory, "memory");
        regions[count] = region;
        starts[count] = index;
        lengths[count] = length;
        count++;
        capacity += length;
        return this;
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

    /** The scatter list: a view of each segment's octets (sharing the memory, indices its own). */
    public ByteBuf[] segments() {
        ByteBuf[] views = new ByteBuf[count];
        for (int i = 0; i < count; i++) {
            views[i] = segments[i].slice(starts[i], lengths[i]);
        }
        return views;
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
            TaggedBuffer region = regions[segment];
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

    /**
     * Opens {@code window} over where the next octets of the message go, at most {@code length} of
     * them and never past the current segment of the scatter list, for a read straight into place;
     * {@link #placed} then counts what arrived.
     *
     * @return the window, or {@code null} when that memory cannot be read into straight or its region
     *     went (the octets then come through {@link #append}, which reports the region gone)
     */
    PlacementWindow window(PlacementWindow window, int length) {
        int segment = cursorSegment;
        int offset = cursorOffset;
        while (segment < count && lengths[segment] == offset) {
            segment++;
            offset = 0;
        }
        if (segment == count || !PlacementWindow.canWindow(segments[segment])) {
            return null;
        }
        cursorSegment = segment;
        cursorOffset = offset;
        int n = Math.min(length, lengths[segment] - offset);
        return window.open(segments[segment], starts[segment] + offset, n, regions[segment]);
    }

    /** {@code length} octets arrived straight in the window {@link #window} opened. */
    void placed(int length) {
        cursorOffset += length;
        bytesPlaced += length;
    }

    @Override
    public String toString() {
        return "ReceiveBuffer[wr " + workRequestId + ", " + count + " segments, " + bytesPlaced + "/"
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
