package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;

/**
 * A protection domain (RFC 5040 section 2.1, {@code ibv_alloc_pd}): memory regions and queue pairs
 * of one domain only; a remote access through an STag of another domain is refused.
 */
public final class ProtectionDomain {

    private final Rnic rnic;
    private final int id;
    private final java.util.concurrent.atomic.AtomicInteger regions = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger queuePairs = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean destroyed;

    ProtectionDomain(Rnic rnic, int id) {
        this.rnic = rnic;
        this.id = id;
    }

    public int id() {
        return id;
    }

    public Rnic rnic() {
        return rnic;
    }

    /**
     * Registers a direct buffer's remaining bytes ({@code ibv_reg_mr}). The region's address (the
     * Tagged Offset of its first byte) is the buffer's native address, as for a real RNIC.
     *
     * @param access a combination of {@link Access} flags
     */
    public MemoryRegion register(ByteBuffer buffer, int access) {
        checkNotDestroyed();
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("register a direct ByteBuffer (or a ByteBuf)");
        }
        return rnic.register(this, Unpooled.wrappedBuffer(buffer.slice()), access);
    }

    /**
     * Registers a {@code ByteBuf}'s readable bytes. The caller keeps ownership: it must outlive the
     * registration.
     */
    public MemoryRegion register(ByteBuf buffer, int access) {
        checkNotDestroyed();
        return rnic.register(this, buffer.slice(), access);
    }

    /**
     * Allocates an unbound type 2 memory window ({@code ibv_alloc_mw(pd, IBV_MW_TYPE_2)}); bind it to
     * a queue pair with {@link QueuePair#bindWindow}.
     */
    public MemoryWindow allocateWindow() {
        checkNotDestroyed();
        return new MemoryWindow(rnic, this);
    }

    /**
     * Destroys the protection domain ({@code ibv_dealloc_pd}).
     *
     * @throws IllegalStateException while it has registered regions or queue pairs that are not
     *     destroyed
     */
    public void destroy() {
        int r = regions.get();
        int q = queuePairs.get();
        if (r > 0 || q > 0) {
            throw new IllegalStateException(this + " still has " + r + " registered region(s) and " + q
                    + " queue pair(s): deregister and destroy them first");
        }
        destroyed = true;
    }

    void checkNotDestroyed() {
        if (destroyed) {
            throw new IllegalStateException(this + " is destroyed");
        }
    }

    void regionAdded() {
        regions.incrementAndGet();
    }

    void regionRemoved() {
        regions.decrementAndGet();
    }

    void queuePairAdded() {
        checkNotDestroyed();
        queuePairs.incrementAndGet();
    }

    void queuePairRemoved() {
        queuePairs.decrementAndGet();
    }

    @Override
    public String toString() {
        return "PD " + id;
    }
}
