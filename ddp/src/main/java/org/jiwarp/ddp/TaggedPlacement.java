package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The checks and the copy of the tagged buffer model (RFC 5041 sections 3.2, 7.1 and 7.2; RFC 5040
 * sections 5.1, 5.2 and 7.2).
 *
 * <p>Every check runs in the same order and reports the first failure:
 *
 * <ol>
 *   <li>the STag names a registered region that is still valid (not invalidated);</li>
 *   <li>the region belongs to the stream's protection domain;</li>
 *   <li>the region grants the access the operation needs;</li>
 *   <li>TO + length does not pass 2^64 (unsigned);</li>
 *   <li>the segment lies inside {@code [base, base + length)} of the region.</li>
 * </ol>
 *
 * <p>This is siw's order (valid, PD, access, bounds) with the wrap check made explicitly, first
 * within "bounds": a region never wraps ({@link StagTable#register} refuses one), so a segment that
 * wraps is always out of bounds as well, and checking wrap after bounds would never report it.
 *
 * <p>Zero-length segments are checked like any other: the STag must be valid, in the domain and
 * grant the access, and the TO must lie in {@code [base, base + length]} (an empty segment may sit
 * right at the end). RFC 5041 section 7.1 asks for these checks on non-zero-length tagged segments
 * only, and siw skips them for a zero-length Write; an engine that wants that leniency skips the
 * call, as there is nothing to place. (The zero-length Write RTR with STag 1 never gets here: the
 * MPA RTR handler consumes it.)
 *
 * <p>All methods are static and allocation-free until they throw.
 */
public final class TaggedPlacement {

    private static final TerminateError[] SINK_ERRORS = {
        TerminateError.DDP_TAGGED_INVALID_STAG,
        TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
        // RFC 5041 defines no access code; RFC 5040 section 7.2 reports it at RDMAP.
        TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
        TerminateError.DDP_TAGGED_TO_WRAP,
        TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION,
    };

    private static final TerminateError[] SOURCE_ERRORS = {
        TerminateError.RDMAP_INVALID_STAG,
        TerminateError.RDMAP_STAG_NOT_ASSOCIATED,
        TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
        TerminateError.RDMAP_TO_WRAP,
        TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION,
    };

    private static final int INVALID_STAG = 0;
    private static final int NOT_ASSOCIATED = 1;
    private static final int ACCESS = 2;
    private static final int TO_WRAP = 3;
    private static final int BOUNDS = 4;

    private TaggedPlacement() {
    }

    /**
     * Checks an inbound tagged segment against its Data Sink (RFC 5041 section 7.1): DDP tagged
     * buffer errors (layer 1, error type 1), except missing access, which is RDMAP's remote
     * protection error 0x02.
     *
     * @param requiredAccess {@link Access#REMOTE_WRITE} for an RDMA Write; {@link Access#LOCAL_WRITE}
     *     for a Read Response, which lands in the buffer this side advertised as its Read sink
     * @return the region to {@link #place} into
     * @throws DdpException on the first failed check
     */
    public static TaggedBuffer checkSink(StagTable table, int stag, long taggedOffset, int length, int pd,
            int requiredAccess) {
        return check(table, stag, taggedOffset, length, pd, requiredAccess, SINK_ERRORS);
    }

    /**
     * Checks the Data Source of an inbound RDMA Read Request (RFC 5040 section 5.2): it needs
     * {@link Access#REMOTE_READ}; failures are RDMAP remote protection errors (layer 0, error type 1,
     * RFC 5040 section 7.2).
     *
     * @param length the RDMA Read Message Size, unsigned 32-bit
     * @return the region to read from
     * @throws DdpException on the first failed check
     */
    public static TaggedBuffer checkSource(StagTable table, int stag, long taggedOffset, long length, int pd) {
        return check(table, stag, taggedOffset, length, pd, Access.REMOTE_READ, SOURCE_ERRORS);
    }

    private static TaggedBuffer check(StagTable table, int stag, long taggedOffset, long length, int pd,
            int requiredAccess, TerminateError[] errors) {
        TaggedBuffer region = table.lookup(stag);
        // RFC 5041 section 7.1: the STag must be valid.
        if (region == null || !region.valid()) {
            throw error(errors, INVALID_STAG, region == null ? "unknown" : "invalidated", stag, taggedOffset, length);
        }
        // RFC 5041 section 7.2 / RFC 5040 section 7.2: the STag must be associated with this stream.
        if (region.pd() != pd) {
            throw error(errors, NOT_ASSOCIATED, "belongs to pd " + region.pd() + ", the stream to pd " + pd, stag,
                    taggedOffset, length);
        }
        // RFC 5040 section 7.2: the region must grant the operation's access.
        if (!region.grants(requiredAccess)) {
            throw error(errors, ACCESS, "grants " + Access.describe(region.access()) + ", needs "
                    + Access.describe(requiredAccess), stag, taggedOffset, length);
        }
        // RFC 5041 section 7.1: TO + length must not wrap (the last byte would lie past 2^64 - 1).
        if (length > 0 && Long.compareUnsigned(taggedOffset, -length) > 0) {
            throw error(errors, TO_WRAP, "wraps past 2^64", stag, taggedOffset, length);
        }
        // RFC 5041 section 7.1: the segment must lie within the buffer's base and bounds.
        if (!inside(region, taggedOffset, length)) {
            throw error(errors, BOUNDS, String.format("outside [0x%x, 0x%x)", region.baseTaggedOffset(),
                    region.baseTaggedOffset() + region.length()), stag, taggedOffset, length);
        }
        return region;
    }

    /** {@code [TO, TO + length)} within {@code [base, base + regionLength)}, in unsigned arithmetic. */
    private static boolean inside(TaggedBuffer region, long taggedOffset, long length) {
        long base = region.baseTaggedOffset();
        long relative = taggedOffset - base;
        return Long.compareUnsigned(taggedOffset, base) >= 0
                && Long.compareUnsigned(relative, region.length()) <= 0
                && length <= region.length() - relative;
    }

    private static DdpException error(TerminateError[] errors, int which, String why, int stag, long taggedOffset,
            long length) {
        return new DdpException(errors[which], String.format("STag 0x%08x, TO 0x%x, %d octets: %s", stag,
                taggedOffset, length, why));
    }

    /**
     * Copies the payload's readable bytes into the region at {@code taggedOffset}: the one copy
     * into registered memory, straight from the payload (a slice of what MPA received) with no
     * buffer in between. Neither the payload's indices nor its reference count change.
     *
     * @throws IllegalArgumentException when the payload does not fit (call a check first)
     */
    public static void place(TaggedBuffer target, long taggedOffset, ByteBuf payload) {
        place(target, taggedOffset, payload, payload.readerIndex(), payload.readableBytes());
    }

    /** As {@link #place(TaggedBuffer, long, ByteBuf)}, for {@code length} octets of {@code source} at {@code index}. */
    public static void place(TaggedBuffer target, long taggedOffset, ByteBuf source, int index, int length) {
        if (!inside(target, taggedOffset, length)) {
            throw new IllegalArgumentException(String.format("%d octets at TO 0x%x do not fit %s", length,
                    taggedOffset, target));
        }
        if (length > 0) {
            target.memory().setBytes(target.memoryIndex(taggedOffset), source, index, length);
        }
    }

    /**
     * Invalidates an STag on behalf of a Send with Invalidate (or Send with SE and Invalidate) at the
     * Data Sink (RFC 5040 section 5.3; the Invalidate STag field of section 4.1).
     *
     * <p>RFC 5040 section 7.2 lists "STag cannot be invalidated" (0x09) under both remote protection
     * (error type 1) and remote operation (error type 2) errors. Following Linux siw, the peer jiwarp
     * interoperates with:
     *
     * <ul>
     *   <li>no region has the STag (unknown index, or a stale key):
     *       {@link TerminateError#RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED} (0x0/0x2/0x09);</li>
     *   <li>the region belongs to another protection domain, or does not allow remote invalidation:
     *       a protection failure, {@link TerminateError#RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED}
     *       (0x0/0x1/0x09);</li>
     *   <li>a region that is already invalid is invalidated again without error (as siw, and the
     *       verbs, allow).</li>
     * </ul>
     *
     * @return 0 on success
     * @throws DdpException carrying one of the two RDMAP errors above
     */
    public static int invalidateRemote(StagTable table, int stag, int pd) {
        TaggedBuffer region = table.lookup(stag);
        if (region == null) {
            throw new DdpException(TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x is unknown", stag));
        }
        if (region.pd() != pd) {
            throw new DdpException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x belongs to pd %d, the stream to pd %d", stag,
                            region.pd(), pd));
        }
        if (!region.remoteInvalidationAllowed()) {
            throw new DdpException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x may not be invalidated remotely", stag));
        }
        region.invalidate();
        return 0;
    }
}
