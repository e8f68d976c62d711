package org.jiwarp.rdmap;

import java.util.EnumMap;
import java.util.Map;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * RDMAP's checks on the tagged buffers its messages name (RFC 5040 sections 5.1 to 5.3 and 7.2),
 * around DDP's own ({@link TaggedPlacement}):
 *
 * <ul>
 *   <li>the Data Sink of an RDMA Write or a Read Response: DDP's checks, with RDMAP's access check
 *       between DDP's STag and range checks, so the order is valid STag, stream, access, TO wrap,
 *       bounds (siw's);</li>
 *   <li>the Data Source of an RDMA Read Request: the same checks, all reported at RDMAP as remote
 *       protection errors (the Read Request is an RDMAP message; DDP never sees the source STag),
 *       through {@link #RDMAP_FOR_DDP}, the one table that maps a DDP tagged error to RDMAP's;</li>
 *   <li>the target of an RFC 7306 Atomic Request: the same remote protection errors, access
 *       {@link Access#REMOTE_ATOMIC}, and an 8-octet aligned Tagged Offset;</li>
 *   <li>the STag of a Send with Invalidate (section 5.3).</li>
 * </ul>
 *
 * <p>All methods are static and allocation-free until they throw.
 */
public final class TaggedAccess {

    /** The RDMAP remote protection error (RFC 5040 section 7.2) for each DDP tagged buffer error. */
    static final Map<TerminateError, TerminateError> RDMAP_FOR_DDP = new EnumMap<>(Map.of(
            TerminateError.DDP_TAGGED_INVALID_STAG, TerminateError.RDMAP_INVALID_STAG,
            TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, TerminateError.RDMAP_STAG_NOT_ASSOCIATED,
            TerminateError.DDP_TAGGED_TO_WRAP, TerminateError.RDMAP_TO_WRAP,
            TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION));

    private TaggedAccess() {
    }

    /**
     * Checks an inbound tagged segment against its Data Sink: DDP tagged buffer errors, except
     * missing access, which is RDMAP's remote protection error 0x02.
     *
     * @param requiredAccess {@link Access#REMOTE_WRITE} for an RDMA Write; {@link Access#LOCAL_WRITE}
     *     for a Read Response, which lands in the buffer this side named as its Read sink
     * @return the region to place into
     */
    public static TaggedBuffer checkSink(StagTable table, int stag, long taggedOffset, int length, int pd,
            int requiredAccess) {
        return checkSink(table, stag, taggedOffset, length, pd, TaggedBuffer.ANY_STREAM, requiredAccess);
    }

    /** As {@link #checkSink(StagTable, int, long, int, int, int)} for a segment of stream {@code stream}. */
    public static TaggedBuffer checkSink(StagTable table, int stag, long taggedOffset, int length, int pd, int stream,
            int requiredAccess) {
        TaggedBuffer region = TaggedPlacement.lookup(table, stag, pd, stream);
        checkAccess(region, stag, requiredAccess);
        TaggedPlacement.checkRange(region, taggedOffset, length);
        return region;
    }

    /**
     * Checks the Data Source of an inbound RDMA Read Request (RFC 5040 section 5.2): it needs
     * {@link Access#REMOTE_READ}; every failure is an RDMAP remote protection error (layer 0, error
     * type 1).
     *
     * @param length the RDMA Read Message Size, unsigned 32-bit
     * @return the region to read from
     */
    public static TaggedBuffer checkSource(StagTable table, int stag, long taggedOffset, long length, int pd) {
        return checkSource(table, stag, taggedOffset, length, pd, TaggedBuffer.ANY_STREAM);
    }

    /** As {@link #checkSource(StagTable, int, long, long, int)} for a Read Request of stream {@code stream}. */
    public static TaggedBuffer checkSource(StagTable table, int stag, long taggedOffset, long length, int pd,
            int stream) {
        try {
            TaggedBuffer region = TaggedPlacement.lookup(table, stag, pd, stream);
            checkAccess(region, stag, Access.REMOTE_READ);
            TaggedPlacement.checkRange(region, taggedOffset, length);
            return region;
        } catch (TerminateException e) {
            TerminateError rdmap = RDMAP_FOR_DDP.get(e.error());
            if (rdmap == null) {
                throw e;
            }
            throw new TerminateException(rdmap, "Read source: " + e.getMessage());
        }
    }

    /**
     * Checks the target of an inbound Atomic Request (RFC 7306 sections 5.2.1 and 8.2): the 8
     * octets at {@code taggedOffset} in a region that grants {@link Access#REMOTE_ATOMIC}, at an
     * 8-octet aligned Tagged Offset. The STag, access and bounds failures are RDMAP remote
     * protection errors, as for a Read's Data Source; a misaligned offset is, as RFC 7306 section
     * 8.2 says, a remote operation error "Catastrophic error, localized to RDMAP Stream" (0/2/0x07).
     *
     * @return the region holding the target
     */
    public static TaggedBuffer checkAtomicTarget(StagTable table, int stag, long taggedOffset, int pd) {
        return checkAtomicTarget(table, stag, taggedOffset, pd, TaggedBuffer.ANY_STREAM);
    }

    /** As {@link #checkAtomicTarget(StagTable, int, long, int)} for a request of stream {@code stream}. */
    public static TaggedBuffer checkAtomicTarget(StagTable table, int stag, long taggedOffset, int pd, int stream) {
        try {
            TaggedBuffer region = TaggedPlacement.lookup(table, stag, pd, stream);
            checkAccess(region, stag, Access.REMOTE_ATOMIC);
            TaggedPlacement.checkRange(region, taggedOffset, Long.BYTES);
            // RFC 7306 section 8.2: the target is 64-bit aligned, else 0/2/0x07.
            if ((taggedOffset & (Long.BYTES - 1)) != 0) {
                throw new TerminateException(TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM, String.format(
                        "atomic target TO 0x%x is not 8-octet aligned", taggedOffset));
            }
            return region;
        } catch (TerminateException e) {
            TerminateError rdmap = RDMAP_FOR_DDP.get(e.error());
            if (rdmap == null) {
                throw e;
            }
            throw new TerminateException(rdmap, "Atomic target: " + e.getMessage());
        }
    }

    private static void checkAccess(TaggedBuffer region, int stag, int requiredAccess) {
        // RFC 5040 section 7.2: the region must grant the operation's access.
        if (!region.grants(requiredAccess)) {
            throw new TerminateException(TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION, String.format(
                    "STag 0x%08x grants %s, needs %s", stag, Access.describe(region.access()),
                    Access.describe(requiredAccess)));
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
     */
    public static void invalidate(StagTable table, int stag, int pd) {
        invalidate(table, stag, pd, TaggedBuffer.ANY_STREAM, true);
    }

    /**
     * As {@link #invalidate(StagTable, int, int)} for a Send with Invalidate of stream {@code stream}.
     * RFC 5040 section 8.1.1 rule 7: a peer cannot invalidate an STag associated with another stream
     * (a memory window bound elsewhere), nor, unless {@code sharedInvalidation}, one that serves every
     * stream of its domain (a memory region); both are protection failures 0/1/0x09.
     *
     * @param sharedInvalidation whether a region serving every stream may be invalidated remotely (Linux
     *     siw lets a peer invalidate any region; strict mode does not)
     */
    public static void invalidate(StagTable table, int stag, int pd, int stream, boolean sharedInvalidation) {
        TaggedBuffer region = table.lookup(stag);
        if (region == null) {
            throw new TerminateException(TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x is unknown", stag));
        }
        if (region.pd() != pd) {
            throw new TerminateException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x belongs to pd %d, the stream to pd %d", stag,
                            region.pd(), pd));
        }
        if (!region.remoteInvalidationAllowed()) {
            throw new TerminateException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x may not be invalidated remotely", stag));
        }
        if ((region.access() & (Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) == 0) {
            // RFC 5040 section 8.1.1: invalidation is of an STag enabled for remote access; a local-only
            // region (posted receives, a Read's sink) was never the peer's to take away.
            throw new TerminateException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                    String.format("Send with Invalidate: STag 0x%08x grants no remote access", stag));
        }
        boolean shared = region.stream() == TaggedBuffer.ANY_STREAM;
        if (shared ? !sharedInvalidation : region.stream() != stream) {
            throw new TerminateException(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, String.format(
                    "Send with Invalidate: STag 0x%08x %s", stag, shared ? "is shared by every stream of its domain"
                            : "is bound to stream " + region.stream() + ", not " + stream));
        }
        table.invalidate(stag);
    }
}
