package org.jiwarp.rnic;

import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A Terminate the peer sent (RFC 5040 sections 4.8 and 5.6), as the verbs report it.
 *
 * @param layer     the Layer field as sent
 * @param errorType the Error Type field as sent
 * @param errorCode the Error Code field as sent
 * @param error     the RFC error these name, or {@code null} when they name none
 * @param hdrct     the Terminate's HdrCt bits (M, D, R: which headers it carries)
 * @param siwLayout whether the control word only makes sense in Linux siw 6.1's little-endian bit
 *                  layout (then {@code error} is the one siw meant)
 */
public record RemoteTerminate(int layer, int errorType, int errorCode, TerminateError error, int hdrct, boolean siwLayout) {

    /** What RDMAP read from a Terminate, or {@code null} for one too short to read. */
    public static RemoteTerminate of(TerminateMessages.Received received) {
        return received == null ? null : new RemoteTerminate(received.layer(), received.errorType(),
                received.errorCode(), received.error(), received.hdrct(), received.siwLayout());
    }

    /** "LAYER / error type / error" with the RFC names, or the raw values when unnamed. */
    public String describe() {
        if (error != null) {
            return error.describe();
        }
        return String.format("layer %d / error type %d / code 0x%02x%s", layer, errorType, errorCode,
                siwLayout ? " (reads as Linux siw's bit layout)" : "");
    }

    @Override
    public String toString() {
        return describe();
    }
}
