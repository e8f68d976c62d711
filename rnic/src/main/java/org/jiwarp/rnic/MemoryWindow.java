package org.jiwarp.rnic;

import org.jiwarp.ddp.TaggedBuffer;

/**
 * A type 2 memory window ({@code ibv_mw} of {@code IBV_MW_TYPE_2}): a remote view of part of a
 * {@link MemoryRegion} whose STag is associated with one queue pair's stream, as RFC 5041 section
 * 8.2 and RFC 5040 section 8.1.1 intend. Allocated unbound by {@link ProtectionDomain#allocateWindow()}
 * ({@code ibv_alloc_mw}), bound with {@link QueuePair#bindWindow} (the verbs' {@code IBV_WR_BIND_MW},
 * done at once here), which gives it a fresh rkey.
 *
 * <p>Through a bound window's rkey, only its queue pair's peer reaches the memory: a tagged segment
 * or Read Request naming it on any other stream is not placed or answered, and that stream is
 * terminated with DDP "STag not associated with DDP Stream" (1/1/2) or, for a Read's source, RDMAP's
 * 0/1/3. The window's own peer may invalidate it with a Send with Invalidate, as a type 2 window
 * allows; no other peer can. Rebinding, {@link #invalidate()} and {@link #deallocate()} end the old
 * rkey. The window does not keep its region alive: deallocate it before deregistering the region.
 */
public final class MemoryWindow {

    private final Rnic rnic;
    private final ProtectionDomain pd;
    private volatile TaggedBuffer bound;
    private volatile boolean deallocated;

    /** A window of {@code pd}, whose hold on it the caller took ({@link ProtectionDomain#regionAdded}). */
    MemoryWindow(Rnic rnic, ProtectionDomain pd) {
        this.rnic = rnic;
        this.pd = pd;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** The rkey of the current binding, or 0 while unbound. */
    public int rkey() {
        TaggedBuffer b = bound;
        return b == null ? 0 : b.stag();
    }

    /** The number of the queue pair the window is bound to, or 0 while unbound. */
    public int queuePair() {
        TaggedBuffer b = bound;
        return b == null ? 0 : b.stream();
    }

    /** The Tagged Offset of the window's first byte (the region's address plus the bound offset). */
    public long address() {
        TaggedBuffer b = bound;
        return b == null ? 0 : b.baseTaggedOffset();
    }

    public long length() {
        TaggedBuffer b = bound;
        return b == null ? 0 : b.length();
    }

    /** {@code true} while bound and not invalidated (locally or by its peer). */
    public boolean valid() {
        TaggedBuffer b = bound;
        return b != null && b.valid() && rnic.stags().lookup(b.stag()) == b;
    }

    /** Local invalidation ({@code IBV_WR_LOCAL_INV}): the rkey stops working; bind again for a new one. */
    public boolean invalidate() {
        TaggedBuffer b = bound;
        return b != null && rnic.stags().invalidate(b.stag());
    }

    /** Releases the window ({@code ibv_dealloc_mw}); its rkey never matches again. */
    public synchronized void deallocate() {
        if (deallocated) {
            throw new IllegalStateException(this + " is already deallocated");
        }
        deallocated = true;
        unbind();
        pd.regionRemoved();
    }

    synchronized int bind(QueuePair qp, MemoryRegion region, long offset, long length, int access) {
        if (deallocated) {
            throw new IllegalStateException(this + " is deallocated");
        }
        if (qp.pd() != pd || region.pd() != pd) {
            throw new IllegalArgumentException("the window, its queue pair and its region must share one "
                    + "protection domain");
        }
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("[" + offset + ", " + offset + " + " + length + ") is not inside "
                    + region);
        }
        int remote = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
        if ((access & ~remote) != 0 || (access & ~region.access()) != 0) {
            throw new IllegalArgumentException("a window grants remote access its region grants: "
                    + Access.describe(access) + " on " + region);
        }
        unbind();
        bound = rnic.stags().register(pd.id(), region.buffer().slice((int) offset, (int) length),
                region.address() + offset, length, access, true, qp.number());
        return bound.stag();
    }

    private void unbind() {
        TaggedBuffer b = bound;
        if (b != null) {
            rnic.stags().deregister(b.stag());
            bound = null;
        }
    }

    @Override
    public String toString() {
        TaggedBuffer b = bound;
        return b == null ? "MW{unbound, " + pd + "}" : String.format("MW{rkey=0x%08x, QP %d, address=0x%x, length=%d, %s, %s}",
                b.stag(), b.stream(), b.baseTaggedOffset(), b.length(), Access.describe(b.access()), pd);
    }
}
