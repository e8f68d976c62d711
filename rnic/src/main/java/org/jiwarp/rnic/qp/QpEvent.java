package org.jiwarp.rnic.qp;

import org.jiwarp.rnic.QpState;

/**
 * What moves a queue pair between {@link QpState}s: a user's modify, or something the connection
 * did. {@link QpStateMachine} holds the table of which event each state accepts.
 */
public enum QpEvent {
    /** The MPA setup completed ({@code rdma_connect} / {@code rdma_accept} returned). */
    ESTABLISHED,
    /** The user asked for a graceful close: no new work, then the connection closes (modify to CLOSING). */
    MODIFY_TO_CLOSING,
    /** The user asked for an abortive close (modify to ERROR). */
    MODIFY_TO_ERROR,
    /** This end found an error and sends a Terminate (RFC 5040 section 5.6). */
    TERMINATE_SENT,
    /** The peer sent a Terminate (RFC 5040 section 5.6). */
    TERMINATE_RECEIVED,
    /** The connection (TCP) is gone, or never came up. */
    CONNECTION_CLOSED,
    /** The completion queue the queue pair reports to has overrun. */
    CQ_ERROR,
}
