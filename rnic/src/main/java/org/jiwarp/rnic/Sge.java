package org.jiwarp.rnic;

/**
 * A scatter/gather entry: {@code length} octets of a registered region at {@code offset} from its
 * start.
 */
public record Sge(MemoryRegion region, long offset, int length) {

    public Sge {
        if (region == null || offset < 0 || length < 0) {
            throw new IllegalArgumentException("bad SGE: region " + region + ", offset " + offset + ", length " + length);
        }
    }

    /** The whole region. */
    public static Sge of(MemoryRegion region) {
        return new Sge(region, 0, (int) Math.min(Integer.MAX_VALUE, region.length()));
    }
}
