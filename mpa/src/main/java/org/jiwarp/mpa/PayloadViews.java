package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;

/**
 * Views of outbound payload memory, recycled per connection: what the DDP segmenter (RFC 5041
 * section 5.2) and the MPA framer (RFC 5044 section 4.3, cuts at markers) hand to the transport
 * instead of a new {@code retainedSlice} per segment, so that sending a segment allocates nothing.
 *
 * <p>Registered memory is an unpooled direct buffer, whose slices Netty makes anew each time (its
 * pooled buffers' slices are recycled, an unpooled one's are not). A view here is a direct buffer
 * over the whole of a source's memory, its reader and writer indices set to the octets sent (view
 * index {@code i} is source index {@code i}), holding a reference to the source until released;
 * released on the event loop (by the transport once written), it goes back to this connection's
 * free list for that source. Views are kept for the last {@value #SOURCES} sources used, at most
 * {@value #MAX_IDLE} idle each, so a connection holds a bounded number whatever it sends from.
 *
 * <p>The same views carry the connection's own overhead octets (DDP headers, MPA's ULPDU_LENGTH,
 * markers, pad and CRC: {@link #overhead}), cut one after the other from a small direct slab of
 * {@value #SLAB} octets. A full slab is swapped for the previous one once nothing of that one is
 * in flight (its reference count says so); when something still is, a new slab is made and the old
 * one freed once its last view is released.
 *
 * <p>Only for sources whose identity stands for their memory for as long as this holds them:
 * unpooled direct buffers with a memory address (Netty reuses a pooled buffer object for other
 * memory once it is released). Anything else, and any call off the event loop, gets a plain
 * {@code retainedSlice} (a pooled buffer's is recycled already). Not thread-safe beyond that: the
 * free lists belong to the event loop.
 */
public final class PayloadViews {

    /** Sources a connection keeps views for: the regions it sends from and its two overhead slabs. */
    static final int SOURCES = 6;
    /** Octets of an overhead slab: the overhead of about 300 MSS-sized FPDUs, 400 KiB of payload. */
    static final int SLAB = 8192;
    /**
     * Idle views kept per source. A connection's unsent octets are bounded by its write buffer's high
     * water mark plus a message (about 200 KiB in jiwarp): views of MSS-sized FPDUs cut at markers
     * (one per 508 octets) fit, about 140 octets each, kept only as many as were once in flight.
     */
    static final int MAX_IDLE = 512;

    private final EventExecutor loop;
    private final ByteBuf[] sources = new ByteBuf[SOURCES];
    private final View[][] idle = new View[SOURCES][];
    private final int[] idleCount = new int[SOURCES];
    private int nextSlot;
    private ByteBuf slab;
    private ByteBuf spareSlab;
    private int slabUsed;

    /** @param loop the connection's event loop, the only thread whose views are recycled */
    public PayloadViews(EventExecutor loop) {
        this.loop = loop;
    }

    /**
     * {@code length} octets of {@code buffer} at {@code index}, as a buffer of their own holding a
     * reference to the memory (like {@link ByteBuf#retainedSlice(int, int)}); the caller releases it.
     */
    public ByteBuf slice(ByteBuf buffer, int index, int length) {
        ByteBuf source = buffer instanceof View ? ((View) buffer).source : buffer;
        if (!PlatformDependent.hasUnsafe() || !loop.inEventLoop() || !recyclable(source)) {
            return buffer.retainedSlice(index, length);
        }
        int slot = slotOf(source);
        source.retain();
        View view;
        if (idleCount[slot] > 0) {
            view = idle[slot][--idleCount[slot]];
            idle[slot][idleCount[slot]] = null;
            view.reuse();
        } else {
            view = new View(this, source);
        }
        return view.setIndex(index, index + length);
    }

    /**
     * An empty buffer with room for {@code length} octets of overhead, and {@code before} octets
     * before its reader index that the caller may write too; released by whoever it is passed to.
     * Off the event loop, a buffer of {@code alloc}'s.
     */
    public ByteBuf overhead(ByteBufAllocator alloc, int before, int length) {
        int size = before + length;
        if (!PlatformDependent.hasUnsafe() || !loop.inEventLoop() || size > SLAB) {
            ByteBuf buffer = alloc.directBuffer(size);
            return buffer.setIndex(before, before);
        }
        if (slab == null || slabUsed + size > SLAB) {
            nextSlab();
        }
        int at = slabUsed + before;
        slabUsed += size;
        return slice(slab, at, 0);
    }

    private void nextSlab() {
        ByteBuf next = spareSlab;
        if (next == null || next.refCnt() != 1) {
            // Views of the spare still in flight (or none yet): it goes once they are released.
            if (next != null) {
                next.release();
            }
            next = Unpooled.directBuffer(SLAB, SLAB);
        }
        spareSlab = slab;
        slab = next;
        slabUsed = 0;
    }

    /** Forgets every source (a connection that closes lets go of the memory it sent from). */
    public void clear() {
        for (int slot = 0; slot < SOURCES; slot++) {
            forget(slot);
        }
        if (slab != null) {
            slab.release();
            slab = null;
        }
        if (spareSlab != null) {
            spareSlab.release();
            spareSlab = null;
        }
    }

    /** Whether {@code buffer} can stand for its memory by identity: see the class comment. */
    static boolean recyclable(ByteBuf buffer) {
        return buffer.isDirect() && buffer.hasMemoryAddress() && buffer.nioBufferCount() == 1
                && !buffer.isReadOnly() && !buffer.alloc().isDirectBufferPooled();
    }

    private int slotOf(ByteBuf source) {
        for (int slot = 0; slot < SOURCES; slot++) {
            if (sources[slot] == source) {
                return slot;
            }
        }
        int slot = nextSlot;
        nextSlot = (nextSlot + 1) % SOURCES;
        forget(slot);
        sources[slot] = source;
        return slot;
    }

    private void forget(int slot) {
        sources[slot] = null;
        View[] views = idle[slot];
        if (views != null) {
            java.util.Arrays.fill(views, 0, idleCount[slot], null);
        }
        idleCount[slot] = 0;
    }

    /** A released view: back to its source's free list when that source is still kept, else dropped. */
    private void giveBack(View view) {
        if (!loop.inEventLoop()) {
            return;
        }
        for (int slot = 0; slot < SOURCES; slot++) {
            if (sources[slot] == view.source) {
                int count = idleCount[slot];
                if (count == MAX_IDLE) {
                    return;
                }
                if (idle[slot] == null) {
                    idle[slot] = new View[16];
                } else if (count == idle[slot].length) {
                    idle[slot] = java.util.Arrays.copyOf(idle[slot], Math.min(MAX_IDLE, 2 * count));
                }
                idle[slot][idleCount[slot]++] = view;
                return;
            }
        }
    }

    /**
     * A direct buffer over all of its source's memory. Netty's wrapping constructor never frees the
     * memory; {@link #deallocate} hands the view back instead of letting it go.
     */
    static final class View extends UnpooledUnsafeDirectByteBuf {

        private final PayloadViews owner;
        private final ByteBuf source;

        View(PayloadViews owner, ByteBuf source) {
            super(source.alloc(), source.nioBuffer(0, source.capacity()), source.capacity());
            this.owner = owner;
            this.source = source;
        }

        void reuse() {
            resetRefCnt();
        }

        @Override
        protected void deallocate() {
            ByteBuf memory = source;
            owner.giveBack(this);
            memory.release();
        }
    }
}
