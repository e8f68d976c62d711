package org.jiwarp.rnic;

import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Something that happened to a queue pair or completion queue between verbs calls (libibverbs'
 * {@code ibv_get_async_event} in spirit), handed to the listeners of {@link Rnic#onAsyncEvent}.
 *
 * @param type        what happened
 * @param queuePair   the queue pair it happened to, or {@code null} for a CQ event
 * @param cq          the completion queue, for {@link Type#CQ_ERROR}; else {@code null}
 * @param srq         the shared receive queue, for {@link Type#SRQ_LIMIT_REACHED}; else {@code null}
 * @param error       the Terminate error, for {@link Type#QP_FATAL} and {@link Type#TERMINATE_RECEIVED};
 *                    else (or when the peer's Terminate names none) {@code null}
 * @param description one sentence in words
 */
public record AsyncEvent(Type type, QueuePair queuePair, CompletionQueue cq, SharedReceiveQueue srq,
        TerminateError error, String description) {

    /** An event of a queue pair or completion queue. */
    public AsyncEvent(Type type, QueuePair queuePair, CompletionQueue cq, TerminateError error, String description) {
        this(type, queuePair, cq, null, error, description);
    }

    /** The kinds of event. */
    public enum Type {
        /**
         * The queue pair found an error in what the peer sent (or in its own connection) and
         * terminated the stream with a Terminate (RFC 5040 section 5.6); {@code IBV_EVENT_QP_FATAL}.
         */
        QP_FATAL,
        /** The peer sent a Terminate (RFC 5040 section 5.6). */
        TERMINATE_RECEIVED,
        /** The completion queue overran: it is in error, and the queue pairs it serves moved to ERROR. */
        CQ_ERROR,
        /**
         * The queue pair reached ERROR and flushed its work: its connection closed (a disconnect by
         * either side, a Terminate, an abort) or never came up.
         */
        DISCONNECTED,
        /**
         * A queue pair on a shared receive queue reached ERROR and flushed the receive it was
         * filling: it takes no more from the queue ({@code IBV_EVENT_QP_LAST_WQE_REACHED}).
         */
        QP_LAST_WQE_REACHED,
        /**
         * Fewer receives than its armed limit are posted to a shared receive queue; the limit is
         * disarmed ({@code IBV_EVENT_SRQ_LIMIT_REACHED}).
         */
        SRQ_LIMIT_REACHED,
    }

    @Override
    public String toString() {
        return type + ": " + description;
    }
}
