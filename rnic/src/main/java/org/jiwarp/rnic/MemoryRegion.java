package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import org.jiwarp.ddp.TaggedBuffer;

/**
 * A registered memory region ({@code ibv_mr}): its STag serves as both lkey and rkey (24-bit index,
 * 8-bit key), its address is the Tagged Offset of its first byte.
 */
public final class MemoryRegion {

    private final Rnic rnic;
    private final ProtectionDomain pd;
    private final TaggedBuffer tagged;
    private final ByteBuf memory;
    private final java.util.concurrent.atomic.AtomicBoolean deregistered = new java.util.concurrent.atomic.AtomicBoolean();

    /** A region of {@code pd}, whose hold on it the caller took ({@link ProtectionDomain#regionAdded}). */
    MemoryRegion(Rnic rnic, ProtectionDomain pd, TaggedBuffer tagged, ByteBuf memory) {
        this.rnic = rnic;
        this.pd = pd;
        this.tagged = tagged;
        this.memory = memory;
    }

    /** The STag: the rkey a peer names this region by, and the lkey for local use. */
    public int stag() {
        return tagged.stag();
    }

    public int rkey() {
        return tagged.stag();
    }

    public int lkey() {
        return tagged.stag();
    }

    /** The Tagged Offset of the region's first byte. */
    public long address() {
        return tagged.baseTaggedOffset();
    }

    public long length() {
        return tagged.length();
    }

    public int access() {
        return tagged.access();
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** {@code false} once invalidated (locally or by a peer's Send with Invalidate) or deregistered. */
    public boolean valid() {
        return tagged.valid() && rnic.stags().lookup(tagged.stag()) == tagged;
    }

    /** The region's memory; index 0 is the first registered byte. */
    public ByteBuf buffer() {
        return memory;
    }

    /** Invalidates the STag locally: no further remote access through it. */
    public boolean invalidate() {
        return rnic.stags().invalidate(tagged.stag());
    }

    /**
     * Deregisters ({@code ibv_dereg_mr}); the STag never matches again.
     *
     * @throws IllegalStateException when it was deregistered already
     */
    public void deregister() {
        if (!deregistered.compareAndSet(false, true)) {
            throw new IllegalStateException(this + " is already deregistered");
        }
        rnic.stags().deregister(tagged.stag());
        pd.regionRemoved();
    }

    TaggedBuffer tagged() {
        return tagged;
    }

    @Override
    public String toString() {
        return String.format("MR{stag=0x%08x, address=0x%x, length=%d, %s, %s}", stag(), address(), length(),
                Access.describe(access()), pd);
    }
}
