package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RoundTrip;

/**
 * A well-behaved connection beside the one under attack: a client {@link Rnic} connected to the
 * target's listener, onto a queue pair of the target's protection domain, so that it shares the
 * target's event loop, STag table and domain with the adversarial connection.
 *
 * <p>{@link #roundTrip()} runs rnic's {@link RoundTrip}: Writes and Sends from the client, Sends
 * back from the server, and checks every completion and every octet. {@link #startTraffic()} runs
 * round trips on a thread for the duration of a case.
 */
final class HealthyPair implements AutoCloseable {

    private static final long WAIT_SECONDS = 10;

    final Rnic clientRnic;
    final ProtectionDomain clientPd;
    private final RoundTrip roundTrip;
    private final AtomicLong nextId = new AtomicLong(1);

    HealthyPair(JiwarpTarget target, Rnic clientRnic) throws Exception {
        this.clientRnic = clientRnic;
        clientPd = clientRnic.allocatePd();
        CompletionQueue clientCq = clientRnic.createCq(1 << 10);
        QueuePair client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(JiwarpTarget.IRD)
                .ord(JiwarpTarget.ORD));
        MemoryRegion clientRegion = clientPd.register(ByteBuffer.allocateDirect(4096), JiwarpTarget.ALL);
        MemoryRegion serverRegion = target.pd.register(ByteBuffer.allocateDirect(4096), JiwarpTarget.ALL);
        String token = "healthy-" + System.identityHashCode(this);
        JiwarpTarget.Served server = target.expect(token, null, 0, false);
        clientRnic.connect(client, target.address(), token.getBytes(StandardCharsets.US_ASCII))
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        server.awaitEstablished();
        roundTrip = new RoundTrip(client, clientCq, clientRegion, server.qp, server.cq, serverRegion);
    }

    /** One {@link RoundTrip}: a Write and a Send from the client, a Send back, every octet checked. */
    synchronized void roundTrip() throws Exception {
        roundTrip.run(nextId.getAndAdd(10));
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
}
