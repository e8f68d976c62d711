package org.jiwarp.rnic.cm;

import java.util.Arrays;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * Cuts one direction of a connection's byte stream into the units {@link PcapCapture} writes as
 * TCP segments: first the MPA Request or Reply (RFC 5044 section 7.1), then one FPDU each
 * (section 4.1), markers included (section 4.3). Bytes come in as TCP delivered or the pipeline
 * wrote them, split or merged anyhow; units come out whole.
 *
 * <pre>
 *   FRAME ----(Request/Reply cut)----&gt; NEGOTIATING ---framing(markers)---&gt; FPDUS
 *     |                                     |
 *     +--- not an MPA frame, or raw() ------+-----------------------------&gt; RAW
 * </pre>
 *
 * <p>An FPDU's length follows from its ULPDU_LENGTH field, the pad rule and, when markers run in
 * this direction, the markers that fall inside it counted from the first octet after the MPA frame.
 * Whether markers run is known only once both frames are seen (the peer's M flag), so FPDUs wait in
 * NEGOTIATING until {@link #framing(boolean)}; the protocol sends none before that anyway. RAW
 * hands bytes on as they come: a stream that is not MPA, or one after a rejected setup.
 *
 * <p>A debugging aid, off the data path: it copies bytes. Not thread-safe; one per direction, used
 * on the connection's event loop.
 */
public final class PcapSegmenter {

    private enum State {
        FRAME, NEGOTIATING, FPDUS, RAW
    }

    private static final byte[] REQUEST_KEY = MpaFrames.requestKey();
    private static final byte[] REPLY_KEY = MpaFrames.replyKey();

    private final int maxSegment;
    private byte[] pending = new byte[2048];
    private int start;
    private int end;
    private State state = State.FRAME;
    private boolean markers;
    private long streamPosition;
    private int frameFlags = -1;
    /** Octets of a unit longer than {@code maxSegment} still to hand out. */
    private int carry;

    /** @param maxSegment the largest unit handed out; longer ones come out in pieces of this size */
    public PcapSegmenter(int maxSegment) {
        this.maxSegment = maxSegment;
    }

    /** Appends {@code length} bytes. */
    public void append(byte[] bytes, int offset, int length) {
        if (end + length > pending.length) {
            int live = end - start;
            if (live + length > pending.length) {
                pending = Arrays.copyOfRange(pending, start, start + Math.max(2 * pending.length, live + length));
            } else {
                System.arraycopy(pending, start, pending, 0, live);
            }
            start = 0;
            end = live;
        }
        System.arraycopy(bytes, offset, pending, end, length);
        end += length;
    }

    /** The next complete unit, or {@code null} when none is complete yet. */
    public byte[] poll() {
        int length = carry > 0 ? carry : nextLength();
        if (length <= 0) {
            return null;
        }
        int piece = Math.min(length, maxSegment);
        carry = length - piece;
        return take(piece);
    }

    /** Everything still pending (a partial unit at the end of the stream), or {@code null}. */
    public byte[] rest() {
        carry = 0;
        return end == start ? null : take(Math.min(end - start, maxSegment));
    }

    /** The flags octet of the MPA Request or Reply once it has been cut, else -1. */
    public int frameFlags() {
        return frameFlags;
    }

    /** {@code true} until the Request or Reply has been cut (or the stream went raw). */
    public boolean awaitingFrame() {
        return state == State.FRAME;
    }

    /** {@code true} when the stream turned out not to be MPA, or was set raw. */
    public boolean raw() {
        return state == State.RAW;
    }

    /**
     * Full operation: FPDUs follow, with markers in this direction or not (RFC 5044 section 7.1).
     * {@code false} when the framing was already set (or the stream is raw).
     */
    public boolean framing(boolean markersInThisDirection) {
        if (state != State.NEGOTIATING) {
            return false;
        }
        markers = markersInThisDirection;
        state = State.FPDUS;
        return true;
    }

    /** No FPDUs will follow (a rejected setup, or a peer that is not MPA): pass bytes on as they come. */
    public void setRaw() {
        state = State.RAW;
    }

    private int nextLength() {
        int available = end - start;
        switch (state) {
            case FRAME:
                return frameLength(available);
            case FPDUS:
                return fpduLength(available);
            case RAW:
                return available;
            case NEGOTIATING:
            default:
                return -1;
        }
    }

    private int frameLength(int available) {
        int keyed = Math.min(available, MpaFrames.KEY_LENGTH);
        if (!Arrays.equals(pending, start, start + keyed, REQUEST_KEY, 0, keyed)
                && !Arrays.equals(pending, start, start + keyed, REPLY_KEY, 0, keyed)) {
            state = State.RAW;
            return available;
        }
        if (available < MpaFrames.HEADER_LENGTH) {
            return -1;
        }
        int length = MpaFrames.HEADER_LENGTH + uint16(start + MpaFrames.PRIVATE_DATA_LENGTH_OFFSET);
        if (available < length) {
            return -1;
        }
        frameFlags = pending[start + MpaFrames.FLAGS_OFFSET] & 0xFF;
        state = State.NEGOTIATING;
        return length;
    }

    private int fpduLength(int available) {
        // RFC 5044 section 4.3: a marker due where the FPDU begins precedes its ULPDU_LENGTH field.
        int header = markers && Markers.isMarkerPosition(streamPosition) ? Markers.LENGTH : 0;
        if (available < header + Fpdu.HEADER_LENGTH) {
            return -1;
        }
        int unmarked = Fpdu.length(uint16(start + header));
        int length = markers ? Markers.markedLength(streamPosition, unmarked) : unmarked;
        if (available < length) {
            return -1;
        }
        streamPosition += length;
        return length;
    }

    private byte[] take(int length) {
        byte[] unit = Arrays.copyOfRange(pending, start, start + length);
        start += length;
        if (start == end) {
            start = 0;
            end = 0;
        }
        return unit;
    }

    private int uint16(int index) {
        return (pending[index] & 0xFF) << 8 | (pending[index + 1] & 0xFF);
    }
}
