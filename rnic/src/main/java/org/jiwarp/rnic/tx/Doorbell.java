package org.jiwarp.rnic.tx;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * One connection's doorbell, as an RNIC's: work posted from other threads waits here and the event
 * loop takes it in one batch per ring, so a post costs no task object and a burst of posts goes to
 * TCP with one flush. The slots wait linked through themselves ({@link SendSlot#nextRung}; Vyukov's
 * intrusive many-producer, one-consumer queue): the doorbell holds no array sized by the send queue's
 * depth and allocates nothing per post.
 */
public final class Doorbell {

    private static final AtomicReferenceFieldUpdater<Doorbell, SendSlot> TAIL =
            AtomicReferenceFieldUpdater.newUpdater(Doorbell.class, SendSlot.class, "tail");

    /** Stands in the queue when it would otherwise be empty. */
    private final SendSlot stub = new SendSlot();
    /** The oldest slot (or the stub); the event loop's only. */
    private SendSlot head = stub;
    /** The newest slot (or the stub); posting threads swap themselves in. */
    private volatile SendSlot tail = stub;
    private final AtomicBoolean rung = new AtomicBoolean();
    private final Runnable answer;

    /** @param answer what the event loop does for a ring: take the slots, issue and flush */
    public Doorbell(Runnable answer) {
        this.answer = () -> {
            // Cleared first: a slot added after this point rings again (at worst an empty answer).
            rung.set(false);
            answer.run();
        };
    }

    /** From any thread: queues {@code slot} behind the others (it is in no queue now). */
    public void offer(SendSlot slot) {
        slot.nextRung = null;
        SendSlot previous = TAIL.getAndSet(this, slot);
        previous.nextRung = slot;
    }

    /** From any thread: wakes {@code eventLoop} unless a wake-up is pending. */
    public void ring(Executor eventLoop) {
        if (!rung.get() && rung.compareAndSet(false, true)) {
            eventLoop.execute(answer);
        }
    }

    /** On the event loop: hands what waits to {@code sendQueue}, in posting order. */
    public void takeInto(SendQueue sendQueue) {
        for (SendSlot slot; (slot = poll()) != null; ) {
            if (slot.prepared != null) {
                slot.reset(); // a prepared slot is reset where all its uses happen, here
            }
            sendQueue.enqueue(slot);
        }
    }

    /**
     * The oldest slot, or {@code null}: also while a posting thread is between its swap and its link,
     * which then rings (after {@link #offer}) and so brings the event loop back for it.
     */
    private SendSlot poll() {
        SendSlot first = head;
        SendSlot next = first.nextRung;
        if (first == stub) {
            if (next == null) {
                return null;
            }
            head = next;
            first = next;
            next = next.nextRung;
        }
        if (next != null) {
            head = next;
            return first;
        }
        if (first != tail) {
            return null; // a post is linking itself behind first
        }
        offer(stub);
        next = first.nextRung;
        if (next != null) {
            head = next;
            return first;
        }
        return null;
    }
}
