package org.jiwarp.tools.perftest;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.perftest.PingpongDest;

/**
 * perftest's control connection over rdma_cm ({@code struct perftest_comm} with {@code rdma_ctx}):
 * one queue pair, one receive of {@link PingpongDest#LENGTH} octets always posted, messages in
 * lock step. In every exchange ({@code ctx_xchg_data}, {@code ctx_hand_shake}) the client sends
 * first and then receives; the server receives first and then sends. A receive is reposted before
 * this end sends again, so the peer's next message always finds it.
 */
final class ControlChannel {

    /** perftest's SYNC_SPEC_ID, the work request id it uses on this connection. */
    private static final long SYNC_ID = 5;

    private final QueuePair qp;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final MemoryRegion receiveRegion;
    private final MemoryRegion sendRegion;
    private final ReceiveWorkRequest receive;
    private final boolean client;
    private final long timeoutNanos;
    private int received;
    /** The test connection, once up: what ended it explains a control connection that fails after it. */
    private volatile QueuePair test;

    ControlChannel(Rnic rnic, ProtectionDomain pd, boolean client, Duration timeout) {
        this.client = client;
        this.timeoutNanos = timeout.toNanos();
        this.sendCq = rnic.createCq(4);
        this.receiveCq = rnic.createCq(4);
        // perftest asks for IRD = ORD = 0 here; jiwarp's queue pairs take at least 1.
        this.qp = rnic.createQp(new QpConfig(pd, sendCq, receiveCq).sendDepth(2).receiveDepth(2).ird(1).ord(1));
        this.receiveRegion = pd.register(ByteBuffer.allocateDirect(PingpongDest.LENGTH), Access.LOCAL_WRITE);
        this.sendRegion = pd.register(ByteBuffer.allocateDirect(PingpongDest.LENGTH), 0);
        this.receive = new ReceiveWorkRequest(SYNC_ID, Sge.of(receiveRegion));
        qp.postReceive(receive);
    }

    QueuePair qp() {
        return qp;
    }

    /**
     * The test connection: from now on, a control message that fails or times out names the
     * Terminate this test connection sent or received, if any, first. A peer whose test connection
     * ends in a Terminate typically gives up and closes the control connection too: the control
     * receive's flush is the consequence, the Terminate the cause.
     */
    void watch(QueuePair testQp) {
        this.test = testQp;
    }

    /** {@code ctx_xchg_data}: sends {@code mine}, receives the peer's {@code expected} octets, in the role's order. */
    byte[] exchange(String what, byte[] mine, int expected) {
        if (client) {
            send(what, mine);
            return receive(what, expected);
        }
        byte[] theirs = receive(what, expected);
        send(what, mine);
        return theirs;
    }

    /** {@code ctx_hand_shake}: the two ends swap their {@code struct pingpong_dest}. */
    PingpongDest handshake(String what, PingpongDest mine) {
        return PingpongDest.decode(exchange(what, mine.encode(), PingpongDest.LENGTH));
    }

    void disconnect() {
        qp.disconnect();
    }

    void deregister() {
        receiveRegion.deregister();
        sendRegion.deregister();
    }

    private void send(String what, byte[] message) {
        if (message.length > PingpongDest.LENGTH) {
            throw new IllegalArgumentException(what + ": " + message.length + " octets exceed the peer's receive");
        }
        sendRegion.buffer().setBytes(0, message);
        qp.postSend(SendWorkRequest.send(SYNC_ID, new Sge(sendRegion, 0, message.length)));
        WorkCompletion wc = take(sendCq, what, "sending");
        if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.SEND) {
            throw failed(what, "sending", wc);
        }
    }

    private byte[] receive(String what, int expected) {
        WorkCompletion wc = take(receiveCq, what, "waiting for");
        if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.RECEIVE) {
            throw failed(what, "receiving", wc);
        }
        if (wc.byteLength() != expected) {
            throw new PerftestException(what + ": the peer sent " + wc.byteLength() + " octets where perftest sends "
                    + expected + " (control message " + (received + 1) + "; out of step with the peer?)");
        }
        received++;
        byte[] message = new byte[expected];
        receiveRegion.buffer().getBytes(0, message);
        qp.postReceive(receive);
        return message;
    }

    private WorkCompletion take(CompletionQueue cq, String what, String doing) {
        try {
            WorkCompletion wc = cq.take(timeoutNanos, TimeUnit.NANOSECONDS);
            if (wc == null) {
                throw new PerftestException(afterTestTerminate(what + ": timed out " + doing + " it on the control "
                        + "connection after " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (" + qp + ")"));
            }
            return wc;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException(what + ": interrupted", e);
        }
    }

    private PerftestException failed(String what, String doing, WorkCompletion wc) {
        return new PerftestException(afterTestTerminate(what + ": " + doing + " it on the control connection failed: "
                + org.jiwarp.tools.Failures.completion(wc) + (qp.terminateReceived() != null
                        ? "; the peer sent a Terminate: " + qp.terminateReceived().describe() : "")));
    }

    /** {@code failure}, led by the Terminate that ended the test connection, if one did. */
    private String afterTestTerminate(String failure) {
        QueuePair t = test;
        if (t == null) {
            return failure;
        }
        if (t.terminateReceived() != null) {
            return "the peer sent a Terminate on the test connection: " + t.terminateReceived().describe()
                    + "; then " + failure;
        }
        if (t.terminateSent() != null) {
            return "this end sent a Terminate on the test connection: " + t.terminateSent().describe()
                    + "; then " + failure;
        }
        return failure;
    }
}
