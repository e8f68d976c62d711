package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.mpa.FpduWriter;

/**
 * What one running case has at hand: the target, its regions and the server queue pair, the raw
 * connection, what MPA setup said, and what the action sent.
 */
final class CaseContext {

    final AdversarialCase testCase;
    final JiwarpTarget target;
    JiwarpTarget.Regions regions;
    JiwarpTarget.Served served;
    /** The raw peer's connection: initiator side (OPERATION, SETUP) or responder side (INITIATOR). */
    RawConnection peer;
    /** OPERATION: jiwarp's Reply. INITIATOR: jiwarp's Request. */
    MpaBytes.Parsed mpaFrame;
    /** The ULPDU a Terminate must carry (the last one sent through {@link #send}). */
    byte[] offending;
    /** INITIATOR: jiwarp's queue pair and its connect. */
    QueuePair clientQp;
    CompletionQueue clientCq;
    CompletableFuture<QueuePair> connect;
    /** Receive work request ids the case took from the server's completion queue. */
    final java.util.List<Long> receivesTaken = new java.util.ArrayList<>();

    CaseContext(AdversarialCase testCase, JiwarpTarget target) {
        this.testCase = testCase;
        this.target = target;
    }

    /** Frames and sends one ULPDU; it becomes the offending ULPDU a Terminate must carry. */
    byte[] send(byte[] ulpdu) throws IOException {
        offending = peer.send(ulpdu);
        return ulpdu;
    }

    /** Sends a ULPDU that must not cause an error (it is not the offending one). */
    void sendGood(byte[] ulpdu) throws IOException {
        peer.send(ulpdu);
    }

    /** SETUP: sends raw startup octets. */
    void sendSetup(byte[] bytes) throws IOException {
        peer.write(bytes);
    }

    /** The token the raw peer's private data carries, by which the target routes the connection. */
    String token() {
        return "case-" + testCase.name();
    }

    /**
     * The raw initiator's MPA startup: an enhanced revision 2 Request as the {@link AdversarialCase.Spec}
     * says (IRD = ORD = 4, the token as private data), then jiwarp's Reply, then full operation.
     *
     * @param early a ULPDU to send as an FPDU right behind the Request, without waiting for the
     *     Reply (CRC on, no markers), or {@code null}
     * @param words RFC 6581 words replacing the ones the spec implies, or {@code null}
     */
    void handshake(byte[] early, MpaBytes.Words words) throws Exception {
        handshake(early, words, 0);
    }

    /** As {@link #handshake(byte[], MpaBytes.Words)}, with {@code extraFlags} set in the Request. */
    void handshake(byte[] early, MpaBytes.Words words, int extraFlags) throws Exception {
        AdversarialCase.Spec spec = testCase.spec();
        MpaBytes.Frame request = MpaBytes.request(spec.crc(), spec.markersFromJiwarp(), JiwarpTarget.IRD,
                token().getBytes(StandardCharsets.US_ASCII));
        if (spec.p2p() != null) {
            request = request.withWords(MpaBytes.Words.of(JiwarpTarget.IRD, JiwarpTarget.ORD)
                    .p2p(spec.p2p()[0], spec.p2p()[1], spec.p2p()[2]));
        }
        if (words != null) {
            request = request.withWords(words);
        }
        if (extraFlags != 0) {
            request = request.withFlags(request.flags() | extraFlags);
        }
        byte[] bytes = request.bytes();
        if (early != null) {
            ByteBuf u = Unpooled.wrappedBuffer(early);
            ByteBuf out = Unpooled.buffer();
            try {
                out.writeBytes(bytes);
                new FpduWriter(true, false).write(u, out);
                bytes = ByteBufUtil.getBytes(out);
            } finally {
                u.release();
                out.release();
            }
        }
        peer.write(bytes);
        mpaFrame = peer.readMpaFrame(Outcome.WAIT_MILLIS);
        assertFalse(mpaFrame.reject(), "jiwarp rejected the Request");
        boolean crc = spec.crc() || mpaFrame.crc();
        peer.startFullOperation(crc, mpaFrame.marker(), spec.markersFromJiwarp());
        served.awaitEstablished();
    }

    /**
     * Sends a 4-octet Send with {@code msn} and waits for receive {@code receiveIndex} to complete
     * with it: everything sent before it has been placed by then (RFC 5041 section 5.3).
     */
    WorkCompletion fence(long msn, int receiveIndex) throws Exception {
        peer.send(Ulpdus.send(msn, 4));
        return awaitReceive(receiveIndex, WcStatus.SUCCESS);
    }

    /** The next completion of the server queue pair, which must be receive {@code index} with {@code status}. */
    WorkCompletion awaitReceive(int index, WcStatus status) throws Exception {
        WorkCompletion wc = served.cq.take(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
        assertNotNull(wc, "no completion on the server; received " + peer.describe());
        assertEquals(JiwarpTarget.FIRST_RECEIVE_ID + index, wc.workRequestId(), wc.toString());
        assertEquals(WcOpcode.RECEIVE, wc.opcode(), wc.toString());
        assertEquals(status, wc.status(), wc.toString());
        receivesTaken.add(wc.workRequestId());
        return wc;
    }

    /**
     * Waits, {@link Outcome#WAIT_MILLIS} at most, until receive {@code index} begins with {@code
     * expected} (octets the arena's pattern does not hold there): jiwarp has read and placed them.
     */
    void awaitPlacedInReceive(int index, byte[] expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Outcome.WAIT_MILLIS);
        while (!regions.receiveHolds(index, expected)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("receive " + index + " did not get its " + expected.length + " octets within "
                        + Outcome.WAIT_MILLIS + " ms; received " + peer.describe());
            }
            Thread.sleep(1);
        }
    }

    /** The write region's STag and the Tagged Offset {@code offset} octets into it. */
    int writeStag() {
        return regions.write.stag();
    }

    long writeTo(long offset) {
        return regions.write.address() + offset;
    }
}
