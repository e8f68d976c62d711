package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.rdmap.AtomicOperation;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The DDP checks and the copy of the tagged buffer model (RFC 5041 sections 3.2, 7.1 and 7.2).
 *
 * <p>A tagged segment is checked in two steps, which RDMAP calls with its own access check between
 * them (RFC 5041 defines no access error; RFC 5040 section 7.2 reports it at RDMAP), so the whole
 * order is siw's: valid STag, stream, access, then TO wrap and bounds.
 *
 * <ol>
 *   <li>{@link #lookup}: the STag names a registered region that is still valid (not
 *       invalidated), and the region belongs to the stream's protection domain;</li>
 *   <li>{@link #checkRange}: TO + length does not pass 2^64 (unsigned), and the segment lies
 *       inside {@code [base, base + length)} of the region.</li>
 * </ol>
 *
 * <p>Every failure is a {@link TerminateException} with a DDP tagged buffer error (layer 1, error
 * type 1). The wrap check comes first within "bounds": a region never wraps ({@link
 * StagTable#register} refuses one), so a segment that wraps is always out of bounds as well, and
 * checking wrap after bounds would never report it.
 *
 * <p>Zero-length segments passed in are checked like any other: the STag must be valid and in the
 * domain, and the TO must lie in {@code [base, base + length]}. RFC 5041 section 5.2 says the STag
 * and TO of a zero-length tagged message are not checked, so RDMAP does not call these for one (as
 * siw skips them for a zero-length Write): there is nothing to place.
 *
 * <p>All methods are static and allocation-free until they throw.
 */
public final class TaggedPlacement {

    private TaggedPlacement() {
    }

    /**
     * The valid region that {@code stag} names in protection domain {@code pd}.
     *
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_INVALID_STAG} or
     *     {@link TerminateError#DDP_TAGGED_STAG_NOT_ASSOCIATED}
     */
    public static TaggedBuffer lookup(StagTable table, int stag, int pd) {
        return lookup(table, stag, pd, TaggedBuffer.ANY_STREAM);
    }

    /**
     * As {@link #lookup(StagTable, int, int)} for a segment of DDP stream {@code stream}: an STag
     * associated with another stream fails too (RFC 5041 section 8.2: the segment is not placed).
     */
    public static TaggedBuffer lookup(StagTable table, int stag, int pd, int stream) {
        TaggedBuffer region = table.lookup(stag);
        // RFC 5041 section 7.1: the STag must be valid.
        if (region == null || !region.valid()) {
            throw new TerminateException(TerminateError.DDP_TAGGED_INVALID_STAG, String.format(
                    "STag 0x%08x is %s", stag, region == null ? "unknown" : "invalidated"));
        }
        // RFC 5041 section 7.2: the STag must be associated with this stream.
        if (region.pd() != pd) {
            throw new TerminateException(TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, String.format(
                    "STag 0x%08x belongs to pd %d, the stream to pd %d", stag, region.pd(), pd));
        }
        // RFC 5041 section 8.2: an STag associated with one stream serves no other.
        if (region.stream() != TaggedBuffer.ANY_STREAM && region.stream() != stream) {
            throw new TerminateException(TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, String.format(
                    "STag 0x%08x is bound to stream %d, the segment came on stream %d", stag, region.stream(), stream));
        }
        return region;
    }

    /**
     * Checks that {@code length} octets at {@code taggedOffset} lie inside {@code region}.
     *
     * @param length unsigned 32-bit (an RDMA Read Message Size may exceed {@code Integer.MAX_VALUE})
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_TO_WRAP} or
     *     {@link TerminateError#DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION}
     */
    public static void checkRange(TaggedBuffer region, long taggedOffset, long length) {
        // RFC 5041 section 7.1: TO + length must not wrap (the last byte would lie past 2^64 - 1).
        if (length > 0 && Long.compareUnsigned(taggedOffset, -length) > 0) {
            throw new TerminateException(TerminateError.DDP_TAGGED_TO_WRAP, String.format(
                    "STag 0x%08x, TO 0x%x, %d octets: wraps past 2^64", region.stag(), taggedOffset, length));
        }
        // RFC 5041 section 7.1: the segment must lie within the buffer's base and bounds.
        if (!inside(region, taggedOffset, length)) {
            throw new TerminateException(TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, String.format(
                    "STag 0x%08x, TO 0x%x, %d octets: outside [0x%x, 0x%x)", region.stag(), taggedOffset, length,
                    region.baseTaggedOffset(), region.baseTaggedOffset() + region.length()));
        }
    }

    /** {@code [TO, TO + length)} within {@code [base, base + regionLength)}, in unsigned arithmetic. */
    private static boolean inside(TaggedBuffer region, long taggedOffset, long length) {
        long base = region.baseTaggedOffset();
        long relative = taggedOffset - base;
        return Long.compareUnsigned(taggedOffset, base) >= 0
                && Long.compareUnsigned(relative, region.length()) <= 0
                && length <= region.length() - relative;
    }

    /**
     * Copies the payload's readable bytes into the region at {@code taggedOffset}: the one copy
     * into registered memory, straight from the payload (a slice of what MPA received) with no
     * buffer in between. Neither the payload's indices nor its reference count change.
     *
     * @throws IllegalArgumentException when the payload does not fit (call a check first)
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_INVALID_STAG} when the region was
     *     invalidated or deregistered since its check
     */
    public static void place(TaggedBuffer target, long taggedOffset, ByteBuf payload) {
        place(target, taggedOffset, payload, payload.readerIndex(), payload.readableBytes());
    }

    /**
     * As {@link #place(TaggedBuffer, long, ByteBuf)}, for {@code length} octets of {@code source} at
     * {@code index}.
     *
     * <p>The copy is fenced against invalidation (see {@link TaggedBuffer}): when the region turned
     * invalid after its check (a deregistration or invalidation raced the segment), nothing is copied
     * and the segment fails as it would have failed the check, with an invalid STag.
     *
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_INVALID_STAG} when the region is no longer
     *     valid
     */
    public static void place(TaggedBuffer target, long taggedOffset, ByteBuf source, int index, int length) {
        if (!inside(target, taggedOffset, length)) {
            throw new IllegalArgumentException(String.format("%d octets at TO 0x%x do not fit %s", length,
                    taggedOffset, target));
        }
        // RFC 5041 section 7.1: the STag must be valid, also when it was invalidated after the check.
        if (!target.enterPlacement()) {
            throw new TerminateException(TerminateError.DDP_TAGGED_INVALID_STAG, String.format(
                    "STag 0x%08x, TO 0x%x, %d octets: invalidated before placement", target.stag(), taggedOffset,
                    length));
        }
        try {
            if (length > 0) {
                target.memory().setBytes(target.memoryIndex(taggedOffset), source, index, length);
            }
        } finally {
            target.exitPlacement();
        }
    }

    /**
     * Applies an RFC 7306 atomic operation to the 64-bit value (big-endian, network order, as a
     * {@link java.nio.ByteBuffer} reads it by default) at {@code taggedOffset}, fenced against
     * invalidation as {@link #place} is. Atomic only with respect to others that hold the same lock
     * around it: the caller serializes (RDMAP's {@code AtomicResponder}).
     *
     * @return the value before the operation
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_INVALID_STAG} when the region is no longer
     *     valid
     */
    public static long readModifyWrite(TaggedBuffer target, long taggedOffset, AtomicOperation operation, long data,
            long dataMask, long compare, long compareMask) {
        if (!inside(target, taggedOffset, Long.BYTES)) {
            throw new IllegalArgumentException(String.format("8 octets at TO 0x%x do not fit %s", taggedOffset,
                    target));
        }
        // RFC 5041 section 7.1: the STag must be valid, also when it was invalidated after the check.
        if (!target.enterPlacement()) {
            throw new TerminateException(TerminateError.DDP_TAGGED_INVALID_STAG, String.format(
                    "STag 0x%08x, TO 0x%x: invalidated before the atomic operation", target.stag(), taggedOffset));
        }
        try {
            int index = target.memoryIndex(taggedOffset);
            long original = target.memory().getLong(index);
            target.memory().setLong(index, operation.apply(original, data, dataMask, compare, compareMask));
            return original;
        } finally {
            target.exitPlacement();
        }
    }
}
