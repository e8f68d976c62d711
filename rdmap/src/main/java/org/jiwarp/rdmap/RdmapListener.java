package org.jiwarp.rdmap;

import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * What an {@link RdmapReceiver} reports upward to the verbs layer (codec-http2's
 * {@code Http2FrameListener} pattern: the receiver never calls back into whoever drives it). Called
 * on the connection's thread, in the order the messages completed.
 */
public interface RdmapListener {

    /**
     * A Send (of any kind) has completed into {@code buffer}.
     *
     * @param invalidatedStag the STag a Send with Invalidate invalidated, else 0
     */
    void receiveCompleted(ReceiveBuffer buffer, long length, int invalidatedStag, boolean solicited);

    /**
     * A Send with Invalidate used up {@code buffer}, but its STag could not be invalidated; the
     * stream terminates with {@code error} right after.
     */
    void receiveFailed(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error);

    /**
     * An Immediate Data message (RFC 7306 section 6.3) used up {@code buffer}: its 8 octets are
     * placed there and travel in the completion too.
     */
    void immediateDataReceived(ReceiveBuffer buffer, long immediateData, boolean solicited);

    /**
     * The Atomic Response for the outstanding Atomic Request carrying {@code context} arrived (RFC
     * 7306 section 4.4) with the value the target held before the operation.
     */
    void atomicCompleted(Object context, long originalRemoteDataValue);

    /** The Read Response for the outstanding Read Request carrying {@code context} is placed. */
    void readCompleted(Object context);

    /**
     * The peer sent a Terminate (RFC 5040 section 5.6).
     *
     * @param received what it says, or {@code null} when it is too short to say anything
     */
    void terminateReceived(TerminateMessages.Received received);

    /**
     * A Terminate that is not one well-formed segment (not L, MO not 0, not the first on queue 2): not
     * trusted, as Linux siw does not trust it; the stream just closes.
     */
    void malformedTerminate();
}
