package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One registered region as DDP sees it (RFC 5041 section 3.2, the Tagged Buffer): its STag, the
 * protection domain it belongs to, its access rights, and the range of Tagged Offsets it covers,
 * {@code [baseTaggedOffset, baseTaggedOffset + length)}.
 *
 * <pre>
 *   Tagged Offset:  base                 TO                     base + length
 *                   |                    |                      |
 *   memory():       +--------------------+----------------------+--- (capacity may be larger)
 *   index:          0                    TO - base              length
 * </pre>
 *
 * <p>Created only by {@link StagTable#register}. Every field is final except one state word: the
 * valid flag, which {@link StagTable#invalidate}, {@link StagTable#deregister} and a remote
 * invalidation clear, and the count of placements in flight.
 *
 * <p>The placement fence: once an invalidation or deregistration returns, no byte of the region is
 * written again. {@link TaggedPlacement#place} enters the region (one atomic add on the state word:
 * no lock) and copies only if the region was still valid at that moment; invalidating sets the
 * invalid bit (one atomic or) and then waits until the placements that entered before it have left.
 * Both act on the same word, so either the placement's add comes first and the invalidation waits
 * for its copy, or the invalidation's bit comes first and the placement copies nothing. The wait is
 * at most one copy (a segment, at most 64 KiB) per event loop; it spins, then yields, then parks
 * briefly. Reading from the region (an RDMA Read's Data Source, a Send's gather list) is not fenced:
 * it writes nothing into the region.
 *
 * <p>Reference counting: the region does not own {@link #memory()}; whoever registered it keeps it
 * alive until after {@link StagTable#deregister}.
 */
public final class TaggedBuffer {

    private static final int INVALID = 1 << 31;
    private static final int IN_FLIGHT = ~INVALID;
    private static final int SPINS = 256;
    private static final int YIELDS = 64;
    private static final long PARK_NANOS = 10_000;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(TaggedBuffer.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int stag;
    private final int pd;
    private final int access;
    private final long baseTaggedOffset;
    private final long length;
    private final ByteBuf memory;
    private final boolean remoteInvalidationAllowed;
    private final int stream;
    /** Bit 31: invalid. Bits 0 to 30: placements in flight. Accessed through {@link #STATE}. */
    @SuppressWarnings("unused")
    private volatile int state;

    TaggedBuffer(int stag, int pd, int access, long baseTaggedOffset, long length, ByteBuf memory,
            boolean remoteInvalidationAllowed, int stream) {
        this.stream = stream;
        this.stag = stag;
        this.pd = pd;
        this.access = access;
        this.baseTaggedOffset = baseTaggedOffset;
        this.length = length;
        this.memory = memory;
        this.remoteInvalidationAllowed = remoteInvalidationAllowed;
    }

    /** The STag: 24-bit index and 8-bit key, {@code index << 8 | key}. */
    public int stag() {
        return stag;
    }

    /** The protection domain the region belongs to. */
    public int pd() {
        return pd;
    }

    /** The {@link Access} flags. */
    public int access() {
        return access;
    }

    /** The Tagged Offset of the region's first byte (unsigned 64-bit). */
    public long baseTaggedOffset() {
        return baseTaggedOffset;
    }

    /** The region's length in octets. */
    public long length() {
        return length;
    }

    /** The region's memory: index 0 is its first byte; the capacity is at least {@link #length()}. */
    public ByteBuf memory() {
        return memory;
    }

    /** {@code false} once invalidated (locally or remotely) or deregistered. */
    public boolean valid() {
        return state >= 0;
    }

    /** Whether a Send with Invalidate from the peer may invalidate this STag. */
    /**
     * The DDP stream the STag is associated with (RFC 5041 section 8.2), as a positive stream
     * number, or {@link #ANY_STREAM} when it serves every stream of its protection domain.
     */
    public int stream() {
        return stream;
    }

    /** {@link #stream()} of a region that serves every stream of its protection domain. */
    public static final int ANY_STREAM = 0;

    public boolean remoteInvalidationAllowed() {
        return remoteInvalidationAllowed;
    }

    /** {@code true} when the region's access holds every flag of {@code required}. */
    public boolean grants(int required) {
        return Access.grants(access, required);
    }

    /**
     * The index in {@link #memory()} of a Tagged Offset inside the region (check it first, with
     * {@link TaggedPlacement}).
     */
    public int memoryIndex(long taggedOffset) {
        return (int) (taggedOffset - baseTaggedOffset);
    }

    /**
     * Enters a placement: {@code true} when the region is valid, and then the caller must
     * {@link #exitPlacement()} once its copy is done; {@code false} (nothing to exit) when it is not.
     */
    boolean enterPlacement() {
        int before = (int) STATE.getAndAdd(this, 1);
        if (before < 0) {
            STATE.getAndAdd(this, -1);
            return false;
        }
        return true;
    }

    void exitPlacement() {
        STATE.getAndAdd(this, -1);
    }

    /** Turns the region invalid, then waits out the placements in flight. */
    void invalidate() {
        STATE.getAndBitwiseOr(this, INVALID);
        awaitPlacements();
    }

    /** Turns the region invalid without waiting (the caller waits, outside its lock). */
    void markInvalid() {
        STATE.getAndBitwiseOr(this, INVALID);
    }

    /** Returns once no placement entered before the region turned invalid is still copying. */
    void awaitPlacements() {
        for (int round = 0; (state & IN_FLIGHT) != 0; round++) {
            if (round < SPINS) {
                Thread.onSpinWait();
            } else if (round < SPINS + YIELDS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }

    @Override
    public String toString() {
        return String.format("STag 0x%08x [pd %d, %s, TO 0x%x + %d%s]", stag, pd, Access.describe(access),
                baseTaggedOffset, length, valid() ? "" : ", invalid");
    }
}
