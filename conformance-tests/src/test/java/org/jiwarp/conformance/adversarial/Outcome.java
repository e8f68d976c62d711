package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.TerminateCheck.Carried;
import org.jiwarp.conform.peer.TerminateCheck;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaRejectedException;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * What jiwarp must do about a case: the expected outcome and its check.
 *
 * <ul>
 *   <li>{@link #terminate}: exactly one Terminate with this layer, error type and code, carrying
 *       exactly the headers named by {@link Carried}, then the connection closes;</li>
 *   <li>{@link #closed}: the connection closes without a Terminate from jiwarp (a lost LLP, or the
 *       peer's own Terminate);</li>
 *   <li>{@link #accepted}: nothing goes wrong; the case's check sees the effect;</li>
 *   <li>{@link #setupClosed}: during MPA startup, a close without a Reply, and the MPA error behind
 *       it (the Requests a black box refuses are the conformance library's cases);</li>
 *   <li>{@link #connectFails} / {@link #connected}: jiwarp as initiator.</li>
 * </ul>
 */
interface Outcome {

    long WAIT_MILLIS = 10_000;

    void verify(CaseContext ctx) throws Exception;

    String describe();

    /** A check a case adds to {@link #accepted}. */
    @FunctionalInterface
    interface Check {
        void run(CaseContext ctx) throws Exception;
    }

    static Outcome terminate(TerminateError error, Carried carried) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                RawConnection peer = ctx.peer;
                byte[] terminate = peer.await(Ulpdus::isTerminate, WAIT_MILLIS);
                assertNotNull(terminate, "no Terminate; received " + peer.describe());
                assertTerminate(terminate, error, carried, ctx.offending);
                assertTrue(peer.awaitClosed(WAIT_MILLIS), "the connection stays open after the Terminate");
                java.util.List<byte[]> all = peer.received();
                assertEquals(1, all.stream().filter(Ulpdus::isTerminate).count(), "exactly one Terminate");
                // RFC 5040 section 5.4: nothing follows a Terminate on the stream.
                assertTrue(Ulpdus.isTerminate(all.get(all.size() - 1)), "the Terminate is the last message: "
                        + peer.describe());
                assertOnlyPermittedTrafficBefore(ctx);
                peer.close();
                awaitServerDown(ctx);
                assertEquals(error, ctx.served.qp.terminateSent(), "the Terminate the queue pair reports");
            }

            @Override
            public String describe() {
                return "Terminate " + error.describe() + " carrying " + carried;
            }
        };
    }

    /**
     * Before its Terminate jiwarp may only have answered the good Read Requests the case sent (every
     * one but the offending ULPDU) and sent Read Requests of its own the case asked for: a Read
     * Response to the offending request (or more octets than the good ones asked), or any other message,
     * is data or a reply the error should have stopped (RFC 5040 section 5.4: the error ends the
     * stream; RFC 5041 section 7.2: nothing is placed or returned for a bad message).
     */
    private static void assertOnlyPermittedTrafficBefore(CaseContext ctx) {
        RawConnection peer = ctx.peer;
        long permitted = 0;
        java.util.List<byte[]> requests = peer.readRequestsSent();
        int offending = -1;
        for (int i = 0; i < requests.size(); i++) {
            offending = Arrays.equals(requests.get(i), ctx.offending) ? i : offending;
        }
        for (int i = 0; i < requests.size(); i++) {
            byte[] request = requests.get(i);
            if (i != offending) {
                ByteBuf b = Unpooled.wrappedBuffer(request);
                try {
                    permitted += ReadRequestHeader.readSize(b, DdpHeaders.UNTAGGED_HEADER_LENGTH);
                } finally {
                    b.release();
                }
            }
        }
        long leaked = peer.readResponseOctetsBeforeTerminate();
        assertTrue(leaked <= permitted, leaked + " Read Response octets preceded the Terminate; the case's good Read "
                + "Requests asked for " + permitted + ": " + peer.describe());
        // jiwarp's own Read and Atomic Requests (a case may have it read from the peer or run an
        // atomic there) carry none of its data.
        assertEquals(java.util.List.of(), peer.otherBeforeTerminate().stream()
                .filter(u -> !Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST, DdpHeaders.QN_READ_REQUEST)
                        && !Ulpdus.isUntagged(u, RdmapOpcode.ATOMIC_REQUEST, DdpHeaders.QN_READ_REQUEST))
                .map(JiwarpTarget::hex).toList(), "messages before the Terminate");
    }

    /** The connection closes; jiwarp sends no Terminate; the queue pair received {@code peerTerminate} (or none). */
    static Outcome closed(TerminateError peerTerminate) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                RawConnection peer = ctx.peer;
                assertTrue(peer.awaitClosed(WAIT_MILLIS), "jiwarp did not close the connection: " + peer.describe());
                assertTrue(peer.received().stream().noneMatch(Ulpdus::isTerminate),
                        "no Terminate from jiwarp: " + peer.describe());
                peer.close();
                awaitServerDown(ctx);
                assertNull(ctx.served.qp.terminateSent());
                RemoteTerminate received = ctx.served.qp.terminateReceived();
                if (peerTerminate == null) {
                    assertTrue(received == null || received.error() == null, "no Terminate was received: " + received);
                } else {
                    assertNotNull(received, "the peer's Terminate reached the queue pair");
                    assertEquals(peerTerminate, received.error(), received.describe());
                }
            }

            @Override
            public String describe() {
                return "close without a Terminate" + (peerTerminate == null ? "" : ", the peer's "
                        + peerTerminate.describe() + " delivered");
            }
        };
    }

    /** Nothing goes wrong: no Terminate, the queue pair stays RTS, and {@code check} passes. */
    static Outcome accepted(String what, Check check) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                check.run(ctx);
                assertEquals(QpState.RTS, ctx.served.qp.state(), "the queue pair carries on");
                assertNull(ctx.served.qp.terminateSent());
                assertTrue(ctx.peer.received().stream().noneMatch(Ulpdus::isTerminate),
                        "no Terminate: " + ctx.peer.describe());
            }

            @Override
            public String describe() {
                return "accepted: " + what;
            }
        };
    }

    /** MPA startup: jiwarp closes without a Reply; the live listener reports {@code mpaError}. */
    static Outcome setupClosed(TerminateError mpaError, Duration elapse) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                byte[] back = ctx.peer.readUntilClosed(WAIT_MILLIS);
                assertEquals(0, back.length, "no Reply to a bad Request: " + JiwarpTarget.hex(back));
                assertLiveSetupError(ctx, mpaError, elapse);
            }

            @Override
            public String describe() {
                return "close without a Reply, MPA error " + mpaError.describe();
            }
        };
    }

    /**
     * The live listener reported the setup failure of this connection with {@code mpaError} (with
     * {@code elapse}, a timer of that length ended the setup).
     */
    private static void assertLiveSetupError(CaseContext ctx, TerminateError mpaError, Duration elapse)
            throws InterruptedException {
        long wait = WAIT_MILLIS + (elapse == null ? 0 : elapse.toMillis());
        JiwarpTarget.SetupFailure failure = ctx.target.awaitSetupFailure(ctx.peer.socket().getLocalPort(), wait);
        assertNotNull(failure, "the listener reported no MPA setup failure for this connection");
        assertEquals(mpaError, failure.error(), "the MPA error: " + failure.reason());
    }

    /**
     * jiwarp as initiator fails with {@code mpaError} (an {@link MpaException}) and closes; the raw
     * responder receives nothing after its Reply (no Terminate).
     */
    static Outcome connectFails(TerminateError mpaError) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                Throwable cause = connectFailure(ctx);
                assertInstanceOf(MpaException.class, cause, String.valueOf(cause));
                assertFalse(cause instanceof MpaRejectedException, String.valueOf(cause));
                assertEquals(mpaError, ((MpaException) cause).error(), String.valueOf(cause));
                byte[] after = ctx.peer.readUntilClosed(WAIT_MILLIS);
                assertEquals(0, after.length, "jiwarp sent nothing after the Reply: " + JiwarpTarget.hex(after));
                ctx.clientQp.closeFuture().get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
                assertEquals(QpState.ERROR, ctx.clientQp.state());
            }

            @Override
            public String describe() {
                return "connect fails with MPA error " + mpaError.describe() + ", close, no Terminate";
            }
        };
    }

    /**
     * jiwarp as initiator fails the connect with this MPA error and, as RFC 6581 section 9 asks, sends
     * TERM (the Terminate of that LLP error, carrying nothing) as its only FPDU after the Reply, then
     * closes.
     */
    static Outcome connectFailsWithTerm(TerminateError mpaError) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                Throwable cause = connectFailure(ctx);
                assertInstanceOf(MpaException.class, cause, String.valueOf(cause));
                assertEquals(mpaError, ((MpaException) cause).error(), String.valueOf(cause));
                RawConnection peer = ctx.peer;
                peer.startFullOperation(false, false, false);
                byte[] terminate = peer.await(Ulpdus::isTerminate, WAIT_MILLIS);
                assertNotNull(terminate, "no TERM; received " + peer.describe());
                assertTerminate(terminate, mpaError, Carried.NOTHING, null);
                assertTrue(peer.awaitClosed(WAIT_MILLIS), "the connection stays open after the TERM");
                assertEquals(1, peer.received().size(), "the TERM is all jiwarp sent after the Reply: "
                        + peer.describe());
                assertEquals(List.of(), peer.problems(), "framing of what jiwarp sent");
                ctx.clientQp.closeFuture().get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
                assertEquals(QpState.ERROR, ctx.clientQp.state());
            }

            @Override
            public String describe() {
                return "connect fails with MPA error " + mpaError.describe() + ", TERM " + mpaError.describe()
                        + " sent, close";
            }
        };
    }

    /** jiwarp as initiator connects; {@code check} looks at what follows. */
    static Outcome connected(String what, Check check) {
        return new Outcome() {
            @Override
            public void verify(CaseContext ctx) throws Exception {
                ctx.connect.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
                check.run(ctx);
            }

            @Override
            public String describe() {
                return "connects: " + what;
            }
        };
    }

    private static Throwable connectFailure(CaseContext ctx) throws Exception {
        try {
            ctx.connect.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            fail("the connect neither completed nor failed within " + WAIT_MILLIS + " ms");
        }
        fail("the connect succeeded");
        return null;
    }

    /** The server queue pair reached ERROR; every receive posted completed exactly once. */
    private static void awaitServerDown(CaseContext ctx) throws Exception {
        ctx.served.qp.closeFuture().get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        assertEquals(QpState.ERROR, ctx.served.qp.state());
    }

    /**
     * Checks a Terminate ULPDU bit for bit against what RFC 5040 sections 4.8 and 5.4 require for
     * {@code expected} caused by {@code offending} ({@link TerminateCheck}, which jiwarp conform shares).
     */
    static void assertTerminate(byte[] bytes, TerminateError expected, Carried carried, byte[] offending) {
        assertEquals(List.of(), TerminateCheck.problems(bytes, expected, carried, offending),
                TerminateCheck.describe(bytes));
    }
}
