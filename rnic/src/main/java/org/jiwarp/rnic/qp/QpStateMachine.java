package org.jiwarp.rnic.qp;

import java.util.EnumMap;
import java.util.Map;
import org.jiwarp.rnic.QpState;

/**
 * The queue pair state machine (RFC 5040 section 6 and the iWARP verbs; Linux siw's
 * {@code siw_qp_modify()}): every state change of a queue pair goes through {@link #apply}, which
 * looks the (state, event) pair up in one table and applies the move atomically. A pair the table
 * does not hold is refused: the state stays, and a user's modify gets an error.
 *
 * <pre>
 *            ESTABLISHED               MODIFY_TO_CLOSING
 *   IDLE ---------------------> RTS ---------------------> CLOSING
 *    |                          |  \                         |  \
 *    |      TERMINATE_SENT /    |   \  CONNECTION_CLOSED,    |   \ TERMINATE_SENT /
 *    |      _RECEIVED           v    \ MODIFY_TO_ERROR,      |    \ _RECEIVED
 *    |                      TERMINATE \ CQ_ERROR             |     v
 *    |                          |      \                     |   TERMINATE
 *    |   CONNECTION_CLOSED,     |       v                    v      |
 *    +----------------------------->  ERROR  <-------------------------+
 *        MODIFY_TO_ERROR, CQ_ERROR         (every state but IDLE goes to ERROR on
 *                                           CONNECTION_CLOSED, MODIFY_TO_ERROR, CQ_ERROR)
 * </pre>
 *
 * <p>Entering ERROR is the one place where outstanding work is flushed: {@link #apply} returns
 * {@link Transition#enteredError()} true exactly once per queue pair, so the caller flushes exactly
 * once. ERROR is final (a new connection takes a new queue pair, as with {@code rdma_cm}).
 */
public final class QpStateMachine {

    /** The result of {@link #apply}: what the state was, what it is now, whether the event was taken. */
    public record Transition(QpState from, QpState to, boolean accepted) {

        /** {@code true} for the one transition that entered ERROR. */
        public boolean enteredError() {
            return accepted && to == QpState.ERROR && from != QpState.ERROR;
        }
    }

    private static final Map<QpState, Map<QpEvent, QpState>> TABLE = new EnumMap<>(QpState.class);

    static {
        allow(QpState.IDLE, QpEvent.ESTABLISHED, QpState.RTS);
        allow(QpState.IDLE, QpEvent.MODIFY_TO_ERROR, QpState.ERROR);
        allow(QpState.IDLE, QpEvent.CONNECTION_CLOSED, QpState.ERROR);
        allow(QpState.IDLE, QpEvent.CQ_ERROR, QpState.ERROR);

        allow(QpState.RTS, QpEvent.MODIFY_TO_CLOSING, QpState.CLOSING);
        allow(QpState.RTS, QpEvent.TERMINATE_SENT, QpState.TERMINATE);
        allow(QpState.RTS, QpEvent.TERMINATE_RECEIVED, QpState.TERMINATE);
        toError(QpState.RTS);

        // A graceful close may still meet an error, or the peer's Terminate, on its way down.
        allow(QpState.CLOSING, QpEvent.MODIFY_TO_CLOSING, QpState.CLOSING);
        allow(QpState.CLOSING, QpEvent.TERMINATE_SENT, QpState.TERMINATE);
        allow(QpState.CLOSING, QpEvent.TERMINATE_RECEIVED, QpState.TERMINATE);
        toError(QpState.CLOSING);

        // RFC 5040 section 5.6: after a Terminate, nothing but the close (one Terminate per stream).
        toError(QpState.TERMINATE);

        // Asking again for ERROR is no error (ibv_modify_qp to ERROR is idempotent).
        allow(QpState.ERROR, QpEvent.MODIFY_TO_ERROR, QpState.ERROR);
        allow(QpState.ERROR, QpEvent.CONNECTION_CLOSED, QpState.ERROR);
        allow(QpState.ERROR, QpEvent.CQ_ERROR, QpState.ERROR);
    }

    private static void allow(QpState from, QpEvent event, QpState to) {
        TABLE.computeIfAbsent(from, s -> new EnumMap<>(QpEvent.class)).put(event, to);
    }

    private static void toError(QpState from) {
        allow(from, QpEvent.CONNECTION_CLOSED, QpState.ERROR);
        allow(from, QpEvent.MODIFY_TO_ERROR, QpState.ERROR);
        allow(from, QpEvent.CQ_ERROR, QpState.ERROR);
    }

    /** The state the table moves {@code from} to on {@code event}, or {@code null} when it refuses. */
    public static QpState next(QpState from, QpEvent event) {
        Map<QpEvent, QpState> row = TABLE.get(from);
        return row == null ? null : row.get(event);
    }

    private volatile QpState state = QpState.IDLE;

    /** The current state; a volatile read, for the data path. */
    public QpState state() {
        return state;
    }

    /** Applies {@code event} atomically: the table's move, or nothing when the table refuses it. */
    public synchronized Transition apply(QpEvent event) {
        QpState from = state;
        QpState to = next(from, event);
        if (to == null) {
            return new Transition(from, from, false);
        }
        state = to;
        return new Transition(from, to, true);
    }

    /** {@code true} in the states that still carry traffic (RTS, CLOSING). */
    public boolean running() {
        QpState s = state;
        return s == QpState.RTS || s == QpState.CLOSING;
    }

    /** {@code true} once the state is TERMINATE or ERROR. */
    public boolean down() {
        QpState s = state;
        return s == QpState.TERMINATE || s == QpState.ERROR;
    }
}
