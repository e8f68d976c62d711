package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * The heap an idle connected queue pair holds, both ends in this JVM, measured as heap used after a
 * GC before and after opening {@value #PAIRS} more connections of the default configuration (send
 * and receive queues 1 024 deep): octets, never time. What a queue pair holds is its objects, its
 * channel and pipeline, and nothing sized by its queues' depth until the queues are used (the
 * doorbell and free list are linked through the send slots, the receive ring grows from 16).
 * Measured: about 4.7 KiB; 8.7 KiB with a receive ring of the full depth, 25 KiB with the fixed
 * doorbell and free-slot queues as well.
 */
class IdleQueuePairHeapTest {

    private static final int PAIRS = 200;
    private static final long BOUND = 8 * 1024;

    @Test
    void anIdleQueuePairHoldsAtMostEightKibibytes() throws Exception {
        MpaSettings mpa = MpaSettings.builder().largeFpdus(true).build();
        try (Rnic serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa));
                Rnic clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa))) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            ProtectionDomain clientPd = clientRnic.allocatePd();
            CompletionQueue serverCq = serverRnic.createCq(1 << 12);
            CompletionQueue clientCq = clientRnic.createCq(1 << 12);
            ConcurrentLinkedQueue<QueuePair> toAccept = new ConcurrentLinkedQueue<>();
            RnicListener listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(toAccept.poll(), new byte[0]));
            List<QueuePair> qps = new ArrayList<>();
            open(serverRnic, clientRnic, serverPd, clientPd, serverCq, clientCq, toAccept, listener, qps, 20);
            // Warmed up by the first few (classes, pools, the event loops' own arrays): then measured.
            long before = heapAfterGc();
            open(serverRnic, clientRnic, serverPd, clientPd, serverCq, clientCq, toAccept, listener, qps, PAIRS);
            long after = heapAfterGc();
            long perQueuePair = (after - before) / (2 * PAIRS);
            System.out.printf("heap per idle queue pair: %d octets%n", perQueuePair);
            assertTrue(perQueuePair <= BOUND, "an idle queue pair holds " + perQueuePair + " heap octets (bound "
                    + BOUND + ")");
            assertTrue(qps.size() == 2 * (PAIRS + 20), "every queue pair is still held: " + qps.size());
            listener.close();
        }
    }

    private static void open(Rnic serverRnic, Rnic clientRnic, ProtectionDomain serverPd, ProtectionDomain clientPd,
            CompletionQueue serverCq, CompletionQueue clientCq, ConcurrentLinkedQueue<QueuePair> toAccept,
            RnicListener listener, List<QueuePair> qps, int pairs) throws Exception {
        for (int i = 0; i < pairs; i++) {
            QueuePair server = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq));
            QueuePair client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq));
            toAccept.add(server);
            clientRnic.connect(client, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
            qps.add(server);
            qps.add(client);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (QueuePair qp : qps) {
            while (qp.state() != QpState.RTS) {
                assertTrue(System.nanoTime() < deadline, qp + " did not reach RTS within 30 s: " + qp.state());
                Thread.sleep(1);
            }
        }
    }

    private static long heapAfterGc() throws InterruptedException {
        Runtime runtime = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            Thread.sleep(50);
            long now = runtime.totalMemory() - runtime.freeMemory();
            if (now >= used - (used >> 7)) {
                return Math.min(now, used);
            }
            used = now;
        }
        return used;
    }
}
