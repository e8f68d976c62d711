package org.jiwarp.wire.rdmap;

/**
 * The operations an Atomic Request asks for (RFC 7306 sections 5.1 and 10.1, the "RDMAP Message
 * Atomic Operation Subcodes": 0x0 FetchAdd, 0x1 reserved, 0x2 CmpSwap), and what each does to the
 * 64-bit value at the Remote Tagged Offset.
 *
 * <ul>
 *   <li>{@link #FETCH_ADD} (section 5.1.1): adds Add Data; a bit set in Add Mask ends a field: the
 *       carry out of that bit is dropped, so one request adds to several independent counters (Add
 *       Mask 0 is a plain 64-bit add);</li>
 *   <li>{@link #COMPARE_SWAP} (section 5.1.2): when the bits Compare Mask selects equal those of
 *       Compare Data, writes the Swap Data bits Swap Mask selects; otherwise leaves the value. With
 *       Compare Mask 0 it always writes: an unconditional (masked) swap, which RFC 7306 has no
 *       subcode of its own for.</li>
 * </ul>
 *
 * <p>Every operation returns the value as it was before (the Atomic Response's Original Remote
 * Data Value).
 */
public enum AtomicOperation {
    FETCH_ADD(0x0, "FetchAdd"),
    COMPARE_SWAP(0x2, "CmpSwap");

    private final int code;
    private final String rfcName;

    AtomicOperation(int code, String rfcName) {
        this.code = code;
        this.rfcName = rfcName;
    }

    /** The 4-bit wire value. */
    public int code() {
        return code;
    }

    /** The name RFC 7306 gives it. */
    public String rfcName() {
        return rfcName;
    }

    /** The operation for a 4-bit value, or {@code null} for the reserved values 0x1 and 0x3..0xF. */
    public static AtomicOperation valueOf(int code) {
        switch (code) {
            case 0x0: return FETCH_ADD;
            case 0x2: return COMPARE_SWAP;
            default: return null;
        }
    }

    /**
     * The new value of {@code original} after this operation.
     *
     * @param data        Add Data or Swap Data
     * @param dataMask    Add Mask (field ends) or Swap Mask (bits to write)
     * @param compare     Compare Data (Compare and Swap only)
     * @param compareMask Compare Mask (Compare and Swap only)
     */
    public long apply(long original, long data, long dataMask, long compare, long compareMask) {
        switch (this) {
            case FETCH_ADD:
                return maskedAdd(original, data, dataMask);
            default:
                if (((original ^ compare) & compareMask) != 0) {
                    return original;
                }
                return (original & ~dataMask) | (data & dataMask);
        }
    }

    /**
     * {@code a + b} where a set bit of {@code fieldEnds} drops the carry out of that bit: the sum
     * without carries ({@code a ^ b}) plus the carries, iterated until none is left.
     */
    static long maskedAdd(long a, long b, long fieldEnds) {
        long sum = a;
        long addend = b;
        while (addend != 0) {
            long carry = (sum & addend) & ~fieldEnds;
            sum ^= addend;
            addend = carry << 1;
        }
        return sum;
    }
}
