package org.jiwarp.rnic;

import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One connection's doorbell, as an RNIC's: work posted from other threads waits here and the event
 * loop takes it in one batch per ring, so a post costs no task object and a burst of posts goes to
 * TCP with one flush. Bounded by the send queue's depth (a slot in it has been admitted), so it never
 * grows and never allocates.
 */
final class Doorbell {

    private final Queue<SendSlot> slots;
    private final AtomicBoolean rung = new AtomicBoolean();
    private final Runnable answer;

    /** @param answer what the event loop does for a ring: take the slots, issue and flush */
    Doorbell(int sendDepth, Runnable answer) {
        this.slots = PlatformDependent.newFixedMpscQueue(Math.max(sendDepth, 2));
        this.answer = () -> {
            // Cleared first: a slot added after this point rings again (at worst an empty answer).
            rung.set(false);
            answer.run();
        };
    }

    /** From any thread: {@code false} when full, which admission rules out. */
    boolean offer(SendSlot slot) {
        return slots.offer(slot);
    }

    /** From any thread: wakes {@code eventLoop} unless a wake-up is pending. */
    void ring(Executor eventLoop) {
        if (!rung.get() && rung.compareAndSet(false, true)) {
            eventLoop.execute(answer);
        }
    }

    /** On the event loop: hands what waits to {@code sendQueue}, in posting order. */
    void takeInto(SendQueue sendQueue) {
        for (SendSlot slot; (slot = slots.poll()) != null; ) {
            if (slot.prepared != null) {
                slot.reset(); // a prepared slot is reset where all its uses happen, here
            }
            sendQueue.enqueue(slot);
        }
    }
}
