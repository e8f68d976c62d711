package org.jiwarp.rnic.tx;


/**
 * The issue numbers a {@link SendQueue} waits on, oldest first: one per pending channel promise,
 * and promises complete in write order. A ring that doubles when full; nothing is allocated once it
 * has grown to what the connection keeps in flight.
 *
 * <p>Not thread-safe: it belongs to the connection's thread.
 */
public final class IssueMarks {

    private long[] marks = new long[16];
    private int head;
    private int count;

    public void add(long upTo) {
        if (count == marks.length) {
            long[] grown = new long[marks.length * 2];
            for (int i = 0; i < count; i++) {
                grown[i] = marks[(head + i) & (marks.length - 1)];
            }
            marks = grown;
            head = 0;
        }
        marks[(head + count++) & (marks.length - 1)] = upTo;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** The oldest mark, taken out; call only when not {@link #isEmpty()}. */
    public long poll() {
        long upTo = marks[head];
        head = (head + 1) & (marks.length - 1);
        count--;
        return upTo;
    }

    public void clear() {
        head = 0;
        count = 0;
    }
}
