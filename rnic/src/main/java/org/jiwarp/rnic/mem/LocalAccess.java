package org.jiwarp.rnic.mem;

import io.netty.buffer.ByteBuf;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.Sge;

/**
 * The checks on a local scatter/gather element before its memory is used (the verbs' local
 * protection: the region is valid, in the queue pair's protection domain, the element lies inside
 * it, and the region grants the access). A failure is an {@link IllegalArgumentException}, which the
 * caller reports as a local protection error.
 */
public final class LocalAccess {

    private LocalAccess() {
    }

    /** The region of {@code sge}, checked. */
    public static MemoryRegion checked(Sge sge, ProtectionDomain pd, int access) {
        MemoryRegion region = sge.region();
        if (!region.valid()) {
            throw new IllegalArgumentException("SGE region " + region + " is invalidated or deregistered");
        }
        if (region.pd() != pd) {
            throw new IllegalArgumentException("SGE region " + region + " is not in " + pd);
        }
        if (sge.offset() + sge.length() > region.length()) {
            throw new IllegalArgumentException("SGE [" + sge.offset() + ", +" + sge.length() + ") exceeds " + region);
        }
        if ((region.access() & access) != access) {
            throw new IllegalArgumentException(region + " lacks " + Access.describe(access));
        }
        return region;
    }

    /** A slice of {@code sge}'s memory, checked. */
    public static ByteBuf checkedSlice(Sge sge, ProtectionDomain pd, int access) {
        return checked(sge, pd, access).buffer().slice((int) sge.offset(), sge.length());
    }
}
