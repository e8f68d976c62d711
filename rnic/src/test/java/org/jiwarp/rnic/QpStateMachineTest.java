package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jiwarp.rnic.qp.QpEvent;
import org.jiwarp.rnic.qp.QpStateMachine;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.Test;

/**
 * Every (state, event) cell of the queue pair state machine, against the table restated here from
 * RFC 5040 section 6 and the verbs (independently of {@link QpStateMachine}'s own), and the
 * guarantee that ERROR is entered exactly once however events race.
 */
class QpStateMachineTest {

    /**
     * Rows: the state; columns: the events in {@link QpEvent} order; "-" where the event is refused.
     * ESTABLISHED only from IDLE; a graceful close from RTS (and again from CLOSING); one Terminate per
     * stream, from RTS or CLOSING; every state reaches ERROR on a close, an abortive modify or a CQ
     * error; ERROR is final.
     */
    private static final String[] EXPECTED = {
        //          ESTABLISHED MODIFY_TO_CLOSING MODIFY_TO_ERROR TERMINATE_SENT TERMINATE_RECEIVED CONNECTION_CLOSED CQ_ERROR
        "IDLE       RTS         -                 ERROR           -              -                  ERROR             ERROR",
        "RTS        -           CLOSING           ERROR           TERMINATE      TERMINATE          ERROR             ERROR",
        "CLOSING    -           CLOSING           ERROR           TERMINATE      TERMINATE          ERROR             ERROR",
        "TERMINATE  -           -                 ERROR           -              -                  ERROR             ERROR",
        "ERROR      -           -                 ERROR           -              -                  ERROR             ERROR",
    };

    /** How each state is reached from IDLE. */
    private static final Map<QpState, List<QpEvent>> PATH = new EnumMap<>(Map.of(
            QpState.IDLE, List.of(),
            QpState.RTS, List.of(QpEvent.ESTABLISHED),
            QpState.CLOSING, List.of(QpEvent.ESTABLISHED, QpEvent.MODIFY_TO_CLOSING),
            QpState.TERMINATE, List.of(QpEvent.ESTABLISHED, QpEvent.TERMINATE_SENT),
            QpState.ERROR, List.of(QpEvent.CONNECTION_CLOSED)));

    @Test
    void everyCellMovesAsTheTableSays() {
        QpEvent[] events = QpEvent.values();
        assertEquals(QpState.values().length, EXPECTED.length, "a row per state");
        int cells = 0;
        for (String row : EXPECTED) {
            String[] cols = row.trim().split("\\s+");
            assertEquals(events.length + 1, cols.length, "a column per event: " + row);
            QpState from = QpState.valueOf(cols[0]);
            for (int i = 0; i < events.length; i++) {
                QpStateMachine machine = at(from);
                QpStateMachine.Transition t = machine.apply(events[i]);
                String cell = from + " x " + events[i];
                if (cols[i + 1].equals("-")) {
                    assertFalse(t.accepted(), cell + " is refused");
                    assertEquals(from, machine.state(), cell + " leaves the state");
                    assertFalse(t.enteredError(), cell);
                } else {
                    QpState to = QpState.valueOf(cols[i + 1]);
                    assertTrue(t.accepted(), cell + " is accepted");
                    assertEquals(to, machine.state(), cell);
                    assertEquals(to, t.to(), cell);
                    assertEquals(to == QpState.ERROR && from != QpState.ERROR, t.enteredError(),
                            cell + ": entering ERROR is reported once, on the move into it");
                }
                cells++;
            }
        }
        assertEquals(QpState.values().length * events.length, cells);
    }

    private static QpStateMachine at(QpState state) {
        QpStateMachine machine = new QpStateMachine();
        for (QpEvent e : PATH.get(state)) {
            assertTrue(machine.apply(e).accepted(), "path to " + state);
        }
        assertEquals(state, machine.state());
        return machine;
    }

    /**
     * Racing events: for each of many machines in RTS, one thread per core meets at a start line, then
     * apply an event that leads to ERROR (and a few random ones) at the same instant. Each machine
     * must report entering ERROR exactly once.
     */
    @Test
    void errorIsEnteredExactlyOnceUnderRaces() throws Exception {
        long seed = 0x5EED_0F_57A7EL;
        int machines = 50_000;
        // As many as there are cores: the threads spin at the start line, so that they really do
        // apply their events at the same instant (a blocking barrier wakes them microseconds apart).
        int threads = Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));
        QpEvent[] toError = {QpEvent.CONNECTION_CLOSED, QpEvent.MODIFY_TO_ERROR, QpEvent.CQ_ERROR};
        List<QpStateMachine> all = new ArrayList<>();
        AtomicInteger[] entered = new AtomicInteger[machines];
        for (int i = 0; i < machines; i++) {
            QpStateMachine machine = new QpStateMachine();
            machine.apply(QpEvent.ESTABLISHED);
            all.add(machine);
            entered[i] = new AtomicInteger();
        }
        AtomicInteger arrivals = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            SplittableRandom random = new SplittableRandom(seed + t);
            Thread worker = new Thread(() -> {
                try {
                    QpEvent[] events = QpEvent.values();
                    for (int i = 0; i < machines; i++) {
                        QpStateMachine machine = all.get(i);
                        QpEvent first = random.nextInt(4) == 0 ? events[random.nextInt(events.length)]
                                : toError[random.nextInt(toError.length)];
                        arrivals.incrementAndGet();
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                        while (arrivals.get() < threads * (i + 1)) {
                            Deadlines.check(deadline, "machine " + i + ": the other workers did not arrive within 30 s");
                            Thread.onSpinWait();
                        }
                        if (machine.apply(first).enteredError()) {
                            entered[i].incrementAndGet();
                        }
                        if (machine.apply(QpEvent.CONNECTION_CLOSED).enteredError()) {
                            entered[i].incrementAndGet();
                        }
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(e);
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            Deadlines.join(worker, Duration.ofSeconds(60));
        }
        assertTrue(failures.isEmpty(), "" + failures);
        for (int i = 0; i < machines; i++) {
            assertEquals(QpState.ERROR, all.get(i).state(), "machine " + i + " (seed " + Long.toHexString(seed) + ")");
            assertEquals(1, entered[i].get(), "machine " + i + " entered ERROR once (seed "
                    + Long.toHexString(seed) + ")");
        }
    }
}
