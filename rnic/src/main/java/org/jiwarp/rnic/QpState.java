package org.jiwarp.rnic;

/**
 * The queue pair state machine (RFC 5040 section 6 and the iWARP verbs): IDLE until connected, RTS
 * while running, CLOSING on a graceful disconnect, TERMINATE once a Terminate was sent or
 * received, ERROR at the end, where outstanding work completes in flush error.
 *
 * <pre>
 *   IDLE --connect/accept--> RTS --disconnect--> CLOSING --closed--> ERROR
 *                             |                                        ^
 *                             +--error or Terminate--> TERMINATE ------+
 * </pre>
 */
public enum QpState {
    IDLE, RTS, CLOSING, TERMINATE, ERROR
}
