package org.jiwarp.rnic;

import java.net.InetSocketAddress;
import org.jiwarp.wire.rdmap.TerminateError;

/** Learns of connections whose MPA setup failed on a listener ({@link RnicListener#onSetupFailure}). */
@FunctionalInterface
public interface SetupFailureListener {

    /**
     * @param remote the peer's address
     * @param error  the LLP error of RFC 5044 section 8 the failure maps to
     * @param reason what went wrong, in words
     */
    void onSetupFailure(InetSocketAddress remote, TerminateError error, String reason);
}
