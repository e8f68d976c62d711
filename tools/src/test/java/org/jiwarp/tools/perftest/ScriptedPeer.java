package org.jiwarp.tools.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.ByteBuffer;
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

/**
 * A hand-driven perftest control connection on the raw RNIC API, for tests that play one side of
 * the protocol message by message and check every octet the other side sends. Knows nothing of
 * {@link PerftestSession}: it is the package javadoc's message table, written out.
 */
final class ScriptedPeer {

    final QueuePair qp;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final MemoryRegion receiveRegion;
    private final MemoryRegion sendRegion;

    ScriptedPeer(Rnic rnic, ProtectionDomain pd) {
        sendCq = rnic.createCq(8);
        receiveCq = rnic.createCq(8);
        qp = rnic.createQp(new QpConfig(pd, sendCq, receiveCq).sendDepth(4).receiveDepth(4).ird(1).ord(1));
        receiveRegion = pd.register(ByteBuffer.allocateDirect(56), Access.LOCAL_WRITE);
        sendRegion = pd.register(ByteBuffer.allocateDirect(56), 0);
        qp.postReceive(new ReceiveWorkRequest(5, Sge.of(receiveRegion)));
    }

    /** The next message, which must be {@code length} octets; reposts the receive. */
    byte[] receive(int length) throws InterruptedException {
        WorkCompletion wc = receiveCq.take(10, TimeUnit.SECONDS);
        assertNotNull(wc, "no control message");
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(length, wc.byteLength(), "control message length");
        byte[] message = new byte[length];
        receiveRegion.buffer().getBytes(0, message);
        qp.postReceive(new ReceiveWorkRequest(5, Sge.of(receiveRegion)));
        return message;
    }

    void send(byte[] message) throws InterruptedException {
        sendRegion.buffer().setBytes(0, message);
        qp.postSend(SendWorkRequest.send(5, new Sge(sendRegion, 0, message.length)));
        WorkCompletion wc = sendCq.take(10, TimeUnit.SECONDS);
        assertNotNull(wc, "no send completion");
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(WcOpcode.SEND, wc.opcode());
    }
}
