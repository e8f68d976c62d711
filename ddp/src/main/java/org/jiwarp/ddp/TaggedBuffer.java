package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;

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
 * <p>Created only by {@link StagTable#register}. Every field is final except the valid flag, which
 * {@link StagTable#invalidate}, {@link StagTable#deregister} and a remote invalidation clear; the
 * flag is volatile, so an event loop sees an invalidation made on a user thread.
 *
 * <p>Reference counting: the region does not own {@link #memory()}; whoever registered it keeps it
 * alive until after {@link StagTable#deregister}.
 */
public final class TaggedBuffer {

    private final int stag;
    private final int pd;
    private final int access;
    private final long baseTaggedOffset;
    private final long length;
    private final ByteBuf memory;
    private final boolean remoteInvalidationAllowed;
    private volatile boolean valid = true;

    TaggedBuffer(int stag, int pd, int access, long baseTaggedOffset, long length, ByteBuf memory,
            boolean remoteInvalidationAllowed) {
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
        return valid;
    }

    /** Whether a Send with Invalidate from the peer may invalidate this STag. */
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

    void invalidate() {
        valid = false;
    }

    @Override
    public String toString() {
        return String.format("STag 0x%08x [pd %d, %s, TO 0x%x + %d%s]", stag, pd, Access.describe(access),
                baseTaggedOffset, length, valid ? "" : ", invalid");
    }
}
