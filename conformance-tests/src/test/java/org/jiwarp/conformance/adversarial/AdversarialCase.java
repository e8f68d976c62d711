package org.jiwarp.conformance.adversarial;

import java.util.List;
import java.util.function.Function;

/**
 * One entry of the adversarial catalogue: what to send, what jiwarp must do about it, and the RFC
 * section that says so.
 *
 * <p>Three kinds, by which side jiwarp plays and when the trouble starts:
 * <ul>
 *   <li>{@link Kind#OPERATION}: jiwarp responds; the raw initiator completes MPA setup
 *       ({@link Spec}), then the action sends ULPDUs or octets in full operation;</li>
 *   <li>{@link Kind#SETUP}: jiwarp responds; the action sends raw startup octets (a broken Request,
 *       or nothing);</li>
 *   <li>{@link Kind#INITIATOR}: jiwarp initiates towards a raw responder, whose action answers the
 *       Request with a crafted Reply.</li>
 * </ul>
 *
 * <p>A case whose expected outcome is jiwarp's current behaviour where the RFC asks for something
 * else carries a {@link #deviation()} note; all other cases expect what the RFC requires.
 *
 * @param name a unique, stable name (the requirement matrix refers to it)
 * @param section the RFC and section, e.g. {@code "RFC 5041 7.1"}
 * @param kind which side jiwarp plays
 * @param spec how the raw peer sets up MPA ({@link Kind#OPERATION} and {@link Kind#SETUP})
 * @param action what the raw peer does
 * @param outcome what jiwarp must do
 * @param allowedWrites arena ranges the case may legitimately change
 * @param deviation why the expected outcome differs from the RFC, or {@code null}
 */
record AdversarialCase(String name, String section, Kind kind, Spec spec, Action action, Outcome outcome,
        Function<JiwarpTarget.Regions, List<JiwarpTarget.Range>> allowedWrites, String deviation) {

    enum Kind {
        OPERATION, SETUP, INITIATOR
    }

    /** What the raw peer does. */
    @FunctionalInterface
    interface Action {
        void run(CaseContext ctx) throws Exception;
    }

    /**
     * How the raw initiator sets up MPA.
     *
     * @param crc set C in the Request
     * @param markersFromJiwarp set M in the Request
     * @param markersTarget run against the target that asks the peer for markers
     * @param receives receives posted on the server queue pair
     * @param p2p RTR offers (send, write, read) for a peer-to-peer Request, or {@code null}
     * @param receiveBuffer a fixed SO_RCVBUF for the raw socket, or 0
     * @param hold the server application does not decide on the Request
     * @param manual the action performs MPA setup itself ({@link CaseContext#handshake})
     */
    record Spec(boolean crc, boolean markersFromJiwarp, boolean markersTarget, int receives, boolean[] p2p,
            int receiveBuffer, boolean hold, boolean manual) {

        static final Spec DEFAULT = new Spec(true, false, false, 4, null, 0, false, false);

        Spec crc(boolean on) {
            return new Spec(on, markersFromJiwarp, markersTarget, receives, p2p, receiveBuffer, hold, manual);
        }

        Spec askingJiwarpForMarkers() {
            return new Spec(crc, true, markersTarget, receives, p2p, receiveBuffer, hold, manual);
        }

        Spec onTheMarkersTarget() {
            return new Spec(crc, markersFromJiwarp, true, receives, p2p, receiveBuffer, hold, manual);
        }

        Spec receives(int n) {
            return new Spec(crc, markersFromJiwarp, markersTarget, n, p2p, receiveBuffer, hold, manual);
        }

        Spec p2p(boolean send, boolean write, boolean read) {
            return new Spec(crc, markersFromJiwarp, markersTarget, receives, new boolean[] {send, write, read},
                    receiveBuffer, hold, manual);
        }

        Spec receiveBuffer(int octets) {
            return new Spec(crc, markersFromJiwarp, markersTarget, receives, p2p, octets, hold, manual);
        }

        Spec holding() {
            return new Spec(crc, markersFromJiwarp, markersTarget, receives, p2p, receiveBuffer, true, manual);
        }

        Spec manualSetup() {
            return new Spec(crc, markersFromJiwarp, markersTarget, receives, p2p, receiveBuffer, hold, true);
        }
    }

    @Override
    public String toString() {
        return name + " (" + section + (deviation != null ? ", deviation" : "") + ")";
    }
}
