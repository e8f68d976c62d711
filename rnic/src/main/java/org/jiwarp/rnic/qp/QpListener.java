package org.jiwarp.rnic.qp;

import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * What a {@link QpConnection} tells the queue pair it serves (siw's engine calling the verbs' event
 * handler): the queue pair implements it privately, and the connection never calls the queue pair
 * otherwise. Called on the connection's event loop.
 */
public interface QpListener {

    /** The connection is established and the queue pair RTS: it may post to the connection now. */
    void established(QpConnection connection);

    /** The peer sent a Terminate (RFC 5040 section 5.6); {@code report} is {@code null} when it is too short to read. */
    void terminateReceived(RemoteTerminate report);

    /** This end found {@code error} and terminates the stream with one Terminate (RFC 5040 section 5.6). */
    void terminating(TerminateError error);

    /** The connection failed below RDMAP (a reset, a local failure), where no Terminate can go. */
    void llpFailed(Throwable cause);
}
