package org.jiwarp.rdmap;

import org.jiwarp.ddp.TaggedBuffer;

/**
 * The RDMA Read Requests (and RFC 7306 Atomic Requests) a peer has sent to this endpoint and not yet
 * been fully answered: the IRD entries (RFC 5040 section 5.2), answered strictly in request order.
 *
 * <pre>
 *   head                      next                       head + size
 *    |  issued, not all sent   |  waiting or half issued  |
 *    +-------------------------+--------------------------+--- (ring, a power of two long)
 *    retire(sent) frees these    the responder issues these while the connection takes them
 * </pre>
 *
 * <p>An entry is taken when a request is accepted and holds what its response needs (the Read's
 * sink and source, or the Atomic Response's two values); the responder issues responses from
 * {@link #next()} on as the connection's writability allows, a long Read Response in parts
 * ({@link #issuedOctets}), and marks an entry {@link #issued} with the output's position after its
 * last segment. {@link #retire(long)} frees, oldest first, every issued entry whose position the
 * output has sent. So a peer that stops reading holds at most IRD entries here and the octets its
 * connection's write buffer takes, whatever it asks for.
 *
 * <p>An entry holds a reference to its Read's source memory until its response is all written, so
 * that memory deregistered meanwhile stays readable to the responder (which checks the region is
 * still valid before each part it writes).
 *
 * <p>The ring starts small and doubles up to the IRD, so a queue pair with a large IRD costs little
 * until its peer uses it, and nothing is allocated per request in steady state. A Read Request
 * beyond the IRD has no buffer on queue 1: DDP refuses it with its untagged buffer error "invalid
 * MSN - no buffer available" (RFC 5041 section 7.1; see {@link org.jiwarp.ddp.SingleSegmentQueue}).
 * Linux siw answers the same overflow with RDMAP remote operation error 0x07 instead.
 *
 * <p>Not thread-safe: it belongs to the connection's thread.
 */
public final class InboundReads {

    private static final int FIRST_CAPACITY = 16;
    /** {@link #sentAt} of an entry whose response is not all written yet. */
    private static final long NOT_ISSUED = Long.MAX_VALUE;

    private final int ird;
    private int head;
    private int size;
    /** Entries from the head whose response is all written. */
    private int issued;
    // One slot per entry, parallel arrays (no object per request).
    private long[] sentAt;
    private boolean[] atomic;
    /** A Read's sink STag, or an Atomic Response's Original Request Identifier. */
    private int[] sinkStag;
    /** A Read's sink Tagged Offset, or an Atomic Response's Original Remote Data Value. */
    private long[] sinkOffset;
    /** A Read's Data Source ({@code null} for a zero-length Read), the index of its first octet, its size. */
    private TaggedBuffer[] source;
    private int[] sourceIndex;
    private int[] length;
    /** Octets of a Read Response written so far. */
    private int[] done;

    public InboundReads(int ird) {
        this.ird = ird;
        allocate(FIRST_CAPACITY);
    }

    public int ird() {
        return ird;
    }

    /** Whether one more request fits the IRD (RFC 5040 section 5.2); retire what was sent first. */
    public boolean hasRoom() {
        return size < ird;
    }

    /**
     * Takes an entry for a validated Read Request: {@code length} octets of {@code source} at
     * {@code index} go to the requester's {@code sinkStag} at {@code sinkOffset}.
     *
     * @param source the Data Source, or {@code null} for a zero-length Read (RFC 5040 section 5.2.1)
     * @throws IllegalStateException when the IRD is full: check {@link #hasRoom()} first
     */
    public void acceptRead(int sinkStag, long sinkOffset, TaggedBuffer source, int index, int length) {
        int slot = take();
        this.sinkStag[slot] = sinkStag;
        this.sinkOffset[slot] = sinkOffset;
        this.source[slot] = source;
        if (source != null) {
            source.memory().retain();
        }
        this.sourceIndex[slot] = index;
        this.length[slot] = length;
    }

    /** Takes an entry for an executed Atomic Request (RFC 7306 section 5.4: it counts against the IRD). */
    public void acceptAtomic(int requestIdentifier, long originalValue) {
        int slot = take();
        atomic[slot] = true;
        sinkStag[slot] = requestIdentifier;
        sinkOffset[slot] = originalValue;
    }

    private int take() {
        if (!hasRoom()) {
            throw new IllegalStateException("IRD " + ird + " is full");
        }
        if (size == sentAt.length) {
            grow();
        }
        int slot = slot(size);
        size++;
        sentAt[slot] = NOT_ISSUED;
        atomic[slot] = false;
        source[slot] = null;
        done[slot] = 0;
        return slot;
    }

    /** Whether an entry waits for (the rest of) its response. */
    public boolean hasUnissued() {
        return issued < size;
    }

    /** The slot of the oldest entry whose response is not all written; check {@link #hasUnissued()} first. */
    public int next() {
        return slot(issued);
    }

    public boolean atomic(int slot) {
        return atomic[slot];
    }

    public int sinkStag(int slot) {
        return sinkStag[slot];
    }

    public long sinkOffset(int slot) {
        return sinkOffset[slot];
    }

    public TaggedBuffer source(int slot) {
        return source[slot];
    }

    public int sourceIndex(int slot) {
        return sourceIndex[slot];
    }

    public int length(int slot) {
        return length[slot];
    }

    /** Octets of the entry's Read Response written so far. */
    public int issuedOctets(int slot) {
        return done[slot];
    }

    /** {@code n} more octets of the entry's Read Response were written. */
    public void progress(int slot, int n) {
        done[slot] += n;
    }

    /** The {@link #next()} entry's response is all written, ending at output position {@code sentAt}. */
    public void issued(int slot, long sentAt) {
        if (slot != next()) {
            throw new IllegalStateException("responses are issued in request order");
        }
        this.sentAt[slot] = sentAt;
        dropSource(slot);
        issued++;
    }

    /**
     * Frees, oldest first, every entry whose response has all gone to TCP: whose position is at most
     * {@code sent} (octets count up from the connection's start; a position is never reached again).
     *
     * @return how many entries were freed
     */
    public int retire(long sent) {
        int freed = 0;
        while (issued > 0 && sentAt[head] <= sent) {
            head = (head + 1) & (sentAt.length - 1);
            size--;
            issued--;
            freed++;
        }
        return freed;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Drops every entry (the stream is going down). */
    public void clear() {
        for (int i = 0; i < size; i++) {
            dropSource(slot(i));
        }
        head = 0;
        size = 0;
        issued = 0;
    }

    private void dropSource(int slot) {
        TaggedBuffer held = source[slot];
        if (held != null) {
            source[slot] = null;
            held.memory().release();
        }
    }

    private int slot(int i) {
        return (head + i) & (sentAt.length - 1);
    }

    private void grow() {
        int n = sentAt.length;
        long[] oldSentAt = sentAt;
        boolean[] oldAtomic = atomic;
        int[] oldSinkStag = sinkStag;
        long[] oldSinkOffset = sinkOffset;
        TaggedBuffer[] oldSource = source;
        int[] oldSourceIndex = sourceIndex;
        int[] oldLength = length;
        int[] oldDone = done;
        allocate(2 * n);
        for (int i = 0; i < size; i++) {
            int from = (head + i) & (n - 1);
            sentAt[i] = oldSentAt[from];
            atomic[i] = oldAtomic[from];
            sinkStag[i] = oldSinkStag[from];
            sinkOffset[i] = oldSinkOffset[from];
            source[i] = oldSource[from];
            sourceIndex[i] = oldSourceIndex[from];
            length[i] = oldLength[from];
            done[i] = oldDone[from];
        }
        head = 0;
    }

    private void allocate(int capacity) {
        sentAt = new long[capacity];
        atomic = new boolean[capacity];
        sinkStag = new int[capacity];
        sinkOffset = new long[capacity];
        source = new TaggedBuffer[capacity];
        sourceIndex = new int[capacity];
        length = new int[capacity];
        done = new int[capacity];
    }
}
