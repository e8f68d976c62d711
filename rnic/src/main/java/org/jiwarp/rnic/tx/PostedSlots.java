package org.jiwarp.rnic.tx;


/**
 * A send queue's posted work in posting order: a ring of slots that grows as needed, walked by
 * index. The passes over it after each flush (which work has reached TCP) allocate nothing; an
 * {@code ArrayDeque}'s for-each made an iterator per pass. Not thread-safe: the event loop's.
 */
public final class PostedSlots {

    private SendSlot[] ring = new SendSlot[16];
    private int head;
    private int size;

    public void addLast(SendSlot slot) {
        if (size == ring.length) {
            SendSlot[] grown = new SendSlot[2 * ring.length];
            for (int i = 0; i < size; i++) {
                grown[i] = get(i);
            }
            ring = grown;
            head = 0;
        }
        ring[(head + size) & (ring.length - 1)] = slot;
        size++;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public int size() {
        return size;
    }

    /** The {@code i}th oldest slot, {@code 0 <= i < size()}. */
    public SendSlot get(int i) {
        return ring[(head + i) & (ring.length - 1)];
    }

    public SendSlot peekFirst() {
        return size == 0 ? null : ring[head];
    }

    public SendSlot pollFirst() {
        SendSlot slot = ring[head];
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
        return slot;
    }
}
