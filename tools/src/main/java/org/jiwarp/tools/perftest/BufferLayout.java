package org.jiwarp.tools.perftest;

/**
 * perftest's data buffer, one per side: a send half and a receive half, each
 * {@code INC(BUFF_SIZE(size, cycle_buffer), cache_line)} octets, where BUFF_SIZE is the larger of
 * the message size and the cycle buffer (the page size, the larger of both sides') and INC rounds up
 * to a cache line (at least one). The peer writes (or reads) at {@code vaddr = buf + BUFF_SIZE}.
 *
 * <p>In the bandwidth tests, when a message fits twice in the cycle buffer, successive operations
 * walk through it in cache-line-rounded steps, on both sides in step: operation {@code k} uses
 * slot {@code k mod (cycle_buffer / INC(size))} locally and remotely ({@code increase_loc_addr},
 * {@code increase_rem_addr}); otherwise every operation uses offset 0.
 *
 * <pre>
 *   0                     BUFF_SIZE              2 x INC(BUFF_SIZE)
 *   | send slots 0 1 2 ...  | receive slots 0 1 2 ... |
 *                           ^ vaddr
 * </pre>
 */
record BufferLayout(int size, int cycleBuffer, int cacheLine, boolean cycling) {

    static BufferLayout of(int size, int cycleBuffer, int cacheLine, boolean bandwidth) {
        return new BufferLayout(size, cycleBuffer, cacheLine, bandwidth && size <= cycleBuffer / 2);
    }

    /** {@code INC(size, cache_line)}. */
    static int inc(int size, int cacheLine) {
        return size > cacheLine ? (size + cacheLine - 1) / cacheLine * cacheLine : cacheLine;
    }

    /** {@code BUFF_SIZE(size, cycle_buffer)}: where the receive half starts (the advertised vaddr). */
    int buffSize() {
        return Math.max(size, cycleBuffer);
    }

    int half() {
        return inc(buffSize(), cacheLine);
    }

    int total() {
        return 2 * half();
    }

    int stride() {
        return inc(size, cacheLine);
    }

    int slots() {
        return cycling ? cycleBuffer / stride() : 1;
    }

    /** Offset of operation {@code k}'s message within its half. */
    int offset(long k) {
        return cycling ? (int) (k % slots()) * stride() : 0;
    }

    /** Slots that {@code operations} operations touch. */
    int touchedSlots(long operations) {
        return (int) Math.min(operations, slots());
    }
}
