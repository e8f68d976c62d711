/**
 * The queue pair's state machine and its side effects (Linux siw's {@code siw_qp.c}): every state
 * change goes through {@link org.jiwarp.rnic.qp.QpStateMachine#apply}, one table of allowed (state,
 * {@link org.jiwarp.rnic.qp.QpEvent event}) pairs (RFC 5040 section 6 and the verbs), and
 * {@link org.jiwarp.rnic.qp.QpConnection}, the connection's engine and the last handler of its
 * pipeline, does what a change brings: one Terminate for a local error (RFC 5040 section 5.6), the
 * flush of outstanding work once on the way to ERROR, the close, the async event. It wires the
 * rooms of one connection together: the receive path ({@code rx}), the send queue and the segment
 * output ({@code tx}), the completions ({@code cq}).
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API. What it reports to the queue pair it serves goes through the listeners it was
 * built with, never through a call up.
 */
package org.jiwarp.rnic.qp;
