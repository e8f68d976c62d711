package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * A well-behaved connection beside the one under attack: a client {@link Rnic} connected to the
 * target's listener, onto a queue pair of the target's protection domain, so that it shares the
 * target's event loop, STag table and domain with the adversarial connection.
 *
 * <p>{@link #roundTrip()} Writes and Sends from the client, Sends back from the server, and checks
 * every completion and every octet. {@link #startTraffic()} runs round trips on a thread for the
 * duration of a case.
 */
final class HealthyPair implements AutoCloseable {

    private static final long WAIT_SECONDS = 10;

    final Rnic clientRnic;
    final ProtectionDomain clientPd;
    private final CompletionQueue clientCq;
    private final QueuePair client;
    private final MemoryRegion clientRegion;
    private final JiwarpTarget.Served server;
    private final MemoryRegion serverRegion;
    private final AtomicLong nextId = new AtomicLong(1);

    HealthyPair(JiwarpTarget target, Rnic clientRnic) throws Exception {
        this.clientRnic = clientRnic;
        clientPd = clientRnic.allocatePd();
        clientCq = clientRnic.createCq(1 << 10);
        client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(JiwarpTarget.IRD)
                .ord(JiwarpTarget.ORD));
        clientRegion = clientPd.register(ByteBuffer.allocateDirect(4096), JiwarpTarget.ALL);
        serverRegion = target.pd.register(ByteBuffer.allocateDirect(4096), JiwarpTarget.ALL);
        String token = "healthy-" + System.identityHashCode(this);
        server = target.expect(token, null, 0, false);
        clientRnic.connect(client, target.address(), token.getBytes(StandardCharsets.US_ASCII))
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        server.awaitEstablished();
    }

    /**
     * One round trip: the client Writes 8 octets into the server's region and Sends 8 more, the
     * server receives the Send and Sends 8 octets back. Checks every completion and every octet.
     */
    synchronized void roundTrip() throws Exception {
        long id = nextId.getAndAdd(10);
        ByteBuf clientMemory = clientRegion.buffer();
        ByteBuf serverMemory = serverRegion.buffer();
        clientMemory.setLong(0, 0x0102030405060708L ^ id);
        clientMemory.setLong(8, 0x1112131415161718L ^ id);
        serverMemory.setLong(24, 0x2122232425262728L ^ id);
        server.qp.postReceive(new ReceiveWorkRequest(id, new Sge(serverRegion, 64, 64)));
        client.postReceive(new ReceiveWorkRequest(id + 1, new Sge(clientRegion, 64, 64)));
        client.postSend(SendWorkRequest.write(id + 2, serverRegion.address() + 16, serverRegion.rkey(),
                new Sge(clientRegion, 0, 8)));
        client.postSend(SendWorkRequest.send(id + 3, new Sge(clientRegion, 8, 8)));
        expectSuccess(clientCq, id + 2, WcOpcode.RDMA_WRITE);
        expectSuccess(clientCq, id + 3, WcOpcode.SEND);
        WorkCompletion received = expectSuccess(server.cq, id, WcOpcode.RECEIVE);
        assertEquals(8, received.byteLength());
        // The Write was placed before the Send after it completed (RFC 5040 section 5.5).
        assertEquals(clientMemory.getLong(0), serverMemory.getLong(16), "the healthy Write's octets");
        assertEquals(clientMemory.getLong(8), serverMemory.getLong(64), "the healthy Send's octets");
        server.qp.postSend(SendWorkRequest.send(id + 4, new Sge(serverRegion, 24, 8)));
        expectSuccess(server.cq, id + 4, WcOpcode.SEND);
        expectSuccess(clientCq, id + 1, WcOpcode.RECEIVE);
        assertTrue(ByteBufUtil.equals(serverMemory, 24, clientMemory, 64, 8), "the healthy Send back");
        assertEquals(QpState.RTS, client.state());
        assertEquals(QpState.RTS, server.qp.state());
    }

    private static WorkCompletion expectSuccess(CompletionQueue cq, long id, WcOpcode opcode)
            throws InterruptedException {
        WorkCompletion wc = cq.take(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(wc, "healthy pair: no completion for work request " + id + " within 10 s");
        assertEquals(id, wc.workRequestId(), wc.toString());
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(opcode, wc.opcode(), wc.toString());
        return wc;
    }

    /** Round trips on a thread until {@link Traffic#stopAndCheck()}. */
    Traffic startTraffic() {
        return new Traffic();
    }

    /** Background round trips for the duration of one case. */
    final class Traffic {
        private final AtomicLong rounds = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile boolean stop;
        private final Thread thread;

        Traffic() {
            thread = new Thread(() -> {
                while (!stop) {
                    try {
                        roundTrip();
                        rounds.incrementAndGet();
                    } catch (Throwable t) {
                        failure.set(t);
                        return;
                    }
                }
            }, "healthy-traffic");
            thread.setDaemon(true);
            thread.start();
        }

        /** Lets at least one more round trip finish, stops, and rethrows any failure. */
        void stopAndCheck() throws Exception {
            long seen = rounds.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (rounds.get() <= seen && failure.get() == null && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            stop = true;
            thread.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            Throwable t = failure.get();
            if (t != null) {
                throw new AssertionError("the healthy connection failed during the case", t);
            }
            assertTrue(rounds.get() > seen, "the healthy connection made no round trip while the case ran");
        }
    }

    @Override
    public void close() {
        // The client RNIC belongs to the target; closing it ends the connection.
    }

    /** Region access for all three rights. */
    static int all() {
        return Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
    }
}
