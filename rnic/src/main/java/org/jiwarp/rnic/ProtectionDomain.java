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
    /**
     * Guards the counts and {@link #destroyed} together: {@link #destroy} (nothing held, then
     * destroyed) and each hold ({@link #regionAdded}, {@link #queuePairAdded}: not destroyed, then
     * one more) are one step each, so nothing joins a domain that is destroyed.
     */
    private final Object lock = new Object();
    /** Registered regions and allocated windows, counted from before their STag is registered. */
    private int regions;
    private int queuePairs;
    private int sharedReceiveQueues;
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
        regionAdded();
        try {
            if (!buffer.isDirect()) {
                throw new IllegalArgumentException("register a direct ByteBuffer (or a ByteBuf)");
            }
            return rnic.register(this, Unpooled.wrappedBuffer(buffer.slice()), access);
        } catch (Throwable e) {
            regionRemoved();
            throw e;
        }
    }

    /**
     * Registers a {@code ByteBuf}'s readable bytes. The caller keeps ownership: it must outlive the
     * registration.
     */
    public MemoryRegion register(ByteBuf buffer, int access) {
        regionAdded();
        try {
            return rnic.register(this, buffer.slice(), access);
        } catch (Throwable e) {
            regionRemoved();
            throw e;
        }
    }

    /**
     * Allocates an unbound type 2 memory window ({@code ibv_alloc_mw(pd, IBV_MW_TYPE_2)}); bind it to
     * a queue pair with {@link QueuePair#bindWindow}.
     */
    public MemoryWindow allocateWindow() {
        regionAdded();
        return new MemoryWindow(rnic, this);
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}) of at most {@code maxWr} receives of
     * {@code maxSge} SGEs each, whose receives' memory must lie in this domain; a {@code limit}
     * other than 0 arms its limit at once (as siw does with {@code srq_limit}).
     *
     * @throws IllegalArgumentException for a {@code maxWr} or {@code maxSge} below 1, or a limit
     *     outside [0, maxWr]
     */
    public SharedReceiveQueue createSrq(int maxWr, int maxSge, int limit) {
        synchronized (lock) {
            checkNotDestroyed();
            SharedReceiveQueue srq = rnic.newSrq(this, maxWr, maxSge, limit);
            sharedReceiveQueues++;
            return srq;
        }
    }

    /**
     * Destroys the protection domain ({@code ibv_dealloc_pd}).
     *
     * @throws IllegalStateException while it has registered regions, queue pairs or shared receive
     *     queues that are not destroyed
     */
    public void destroy() {
        synchronized (lock) {
            if (regions > 0 || queuePairs > 0 || sharedReceiveQueues > 0) {
                throw new IllegalStateException(this + " still has " + regions + " registered region(s), "
                        + queuePairs + " queue pair(s) and " + sharedReceiveQueues
                        + " shared receive queue(s): deregister and destroy them first");
            }
            destroyed = true;
        }
    }

    void checkNotDestroyed() {
        if (destroyed) {
            throw new IllegalStateException(this + " is destroyed");
        }
    }

    /**
     * A region or window holds the domain from now on, taken before its STag is registered (and
     * given back with {@link #regionRemoved} if the registration fails), so that no STag is left
     * registered under a domain destroyed meanwhile.
     *
     * @throws IllegalStateException when the domain is destroyed
     */
    void regionAdded() {
        synchronized (lock) {
            checkNotDestroyed();
            regions++;
        }
    }

    void regionRemoved() {
        synchronized (lock) {
            regions--;
        }
    }

    /**
     * A queue pair holds the domain from now on (given back with {@link #queuePairRemoved}, also
     * when its creation fails).
     *
     * @throws IllegalStateException when the domain is destroyed
     */
    void queuePairAdded() {
        synchronized (lock) {
            checkNotDestroyed();
            queuePairs++;
        }
    }

    void queuePairRemoved() {
        synchronized (lock) {
            queuePairs--;
        }
    }

    /** A shared receive queue of the domain is destroyed. */
    void srqRemoved() {
        synchronized (lock) {
            sharedReceiveQueues--;
        }
    }

    @Override
    public String toString() {
        return "PD " + id;
    }
}
