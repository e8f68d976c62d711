package org.jiwarp.rnic;

import static org.jiwarp.rnic.RnicOperationsTest.mpa;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/**
 * Model-based property of RFC 7306 atomicity: several client threads, each on its own queue pair
 * (served by different event loops of one responder RNIC), hammer shared fetch-and-add counters,
 * compare-and-swap slots and swap slots; every result must fit one sequential execution:
 *
 * <ul>
 *   <li>counter: sorted by the value each add saw, every add's value is the one before plus its
 *       delta, starting at 0 and ending at the counter's final value (no add lost or doubled);</li>
 *   <li>compare-and-swap slot (values unique per operation): each successful swap starts from a
 *       value no other success started from, and they chain from the initial value to the final
 *       one; a failure saw a value other than its compare value;</li>
 *   <li>swap slot: the values seen and the final value are the initial value and each written value
 *       exactly once (a chain, no value seen twice).</li>
 * </ul>
 *
 * <p>The seeded {@link Property} harness picks the operations; a failure prints its seed.
 */
class AtomicsModelPropertyTest {

    private static final int QPS = 4;
    private static final int COUNTERS = 3;
    private static final int CAS_SLOTS = 2;
    private static final int SWAP_SLOTS = 2;
    private static final int OPS_PER_QP = 300;

    /** One operation a client issued and what it saw. */
    private record Op(int kind, int slot, long operand, long compare, long original) {
    }

    @Test
    void atomicsFitASequentialModel() {
        Property.forAll("atomics on one RNIC are linearizable", 3, random -> {
            try {
                runCase(random);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    private static void runCase(SplittableRandom random) throws Exception {
        try (Rnic server = Rnic.open(RnicOptions.defaults().threads(2).mpa(mpa(false, false)));
                Rnic client = Rnic.open(RnicOptions.defaults().threads(2).mpa(mpa(false, false)))) {
            ProtectionDomain serverPd = server.allocatePd();
            ProtectionDomain clientPd = client.allocatePd();
            CompletionQueue serverCq = server.createCq(1 << 12);
            MemoryRegion target = serverPd.register(ByteBuffer.allocateDirect(4096), Access.ALL);
            ByteBuf memory = target.buffer();
            int slots = COUNTERS + CAS_SLOTS + SWAP_SLOTS;
            for (int s = 0; s < slots; s++) {
                memory.setLong(8 * s, 0);
            }
            List<QueuePair> serverQps = new ArrayList<>();
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
                QueuePair qp = server.createQp(new QpConfig(serverPd, serverCq, serverCq).ird(8));
                synchronized (serverQps) {
                    serverQps.add(qp);
                }
                request.accept(qp, new byte[0]);
            });
            ExecutorService threads = Executors.newFixedThreadPool(QPS);
            try {
                List<Future<List<Op>>> results = new ArrayList<>();
                for (int q = 0; q < QPS; q++) {
                    CompletionQueue cq = client.createCq(1 << 12);
                    QueuePair qp = client.createQp(new QpConfig(clientPd, cq, cq).rfc7306(true).ord(8));
                    client.connect(qp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
                    MemoryRegion results8 = clientPd.register(ByteBuffer.allocateDirect(8 * OPS_PER_QP), Access.ALL);
                    SplittableRandom own = random.split();
                    int qpIndex = q;
                    results.add(threads.submit(() -> hammer(qp, cq, results8, target, own, qpIndex)));
                }
                List<Op> all = new ArrayList<>();
                for (Future<List<Op>> result : results) {
                    all.addAll(result.get(120, TimeUnit.SECONDS));
                }
                checkModel(all, memory);
                synchronized (serverQps) {
                    for (QueuePair qp : serverQps) {
                        assertNull(qp.terminateSent(), "the responder terminated " + qp);
                    }
                }
            } finally {
                threads.shutdownNow();
                listener.close();
            }
        }
    }

    /** One client: a burst of random atomics, up to 8 outstanding, each result in its own 8 octets. */
    private static List<Op> hammer(QueuePair qp, CompletionQueue cq, MemoryRegion results, MemoryRegion target,
            SplittableRandom random, int qpIndex) throws InterruptedException {
        List<Op> planned = new ArrayList<>();
        for (int i = 0; i < OPS_PER_QP; i++) {
            int kind = random.nextInt(3);
            int slot = kind == 0 ? random.nextInt(COUNTERS) : kind == 1 ? COUNTERS + random.nextInt(CAS_SLOTS)
                    : COUNTERS + CAS_SLOTS + random.nextInt(SWAP_SLOTS);
            // Unique nonzero values per operation (the initial value is 0): qp in the high bits.
            long unique = ((long) (qpIndex + 1) << 32) | (i + 1);
            long operand = kind == 0 ? 1 + random.nextInt(1000) : unique;
            long compare = 0;
            planned.add(new Op(kind, slot, operand, compare, 0));
        }
        List<Op> done = new ArrayList<>();
        Map<Long, Long> lastSeen = new HashMap<>();
        int posted = 0;
        int completed = 0;
        while (completed < OPS_PER_QP) {
            while (posted < OPS_PER_QP && posted - completed < 8) {
                Op op = planned.get(posted);
                long address = target.address() + 8L * op.slot();
                Sge result = new Sge(results, 8L * posted, 8);
                SendWorkRequest wr;
                if (op.kind() == 0) {
                    wr = SendWorkRequest.fetchAdd(posted, address, target.rkey(), result, op.operand());
                } else if (op.kind() == 1) {
                    // Compare with the last value this client saw in the slot (often stale: races).
                    long compare = lastSeen.getOrDefault((long) op.slot(), 0L);
                    op = new Op(1, op.slot(), op.operand(), compare, 0);
                    planned.set(posted, op);
                    wr = SendWorkRequest.compareSwap(posted, address, target.rkey(), result, compare, op.operand());
                } else {
                    wr = SendWorkRequest.swap(posted, address, target.rkey(), result, op.operand());
                }
                qp.postSend(wr);
                posted++;
            }
            WorkCompletion wc = cq.take(30, TimeUnit.SECONDS);
            assertNotNull(wc, "no completion within 30 s");
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(completed, wc.workRequestId(), "completions in posting order");
            Op op = planned.get(completed);
            long original = results.buffer().getLong(8 * completed);
            if (op.kind() != 0) {
                lastSeen.put((long) op.slot(), op.kind() == 1 && original == op.compare() ? op.operand() : original);
            }
            done.add(new Op(op.kind(), op.slot(), op.operand(), op.compare(), original));
            completed++;
        }
        return done;
    }

    private static void checkModel(List<Op> all, ByteBuf memory) {
        for (int slot = 0; slot < COUNTERS + CAS_SLOTS + SWAP_SLOTS; slot++) {
            List<Op> ops = new ArrayList<>();
            for (Op op : all) {
                if (op.slot() == slot) {
                    ops.add(op);
                }
            }
            long last = memory.getLong(8 * slot);
            if (slot < COUNTERS) {
                ops.sort((a, b) -> Long.compare(a.original(), b.original()));
                long value = 0;
                for (Op op : ops) {
                    assertEquals(value, op.original(), "counter " + slot + ": an add saw a value no sequence gives");
                    value += op.operand();
                }
                assertEquals(value, last, "counter " + slot + " final value");
            } else if (slot < COUNTERS + CAS_SLOTS) {
                Map<Long, Long> next = new HashMap<>();
                for (Op op : ops) {
                    if (op.original() == op.compare()) {
                        Long previous = next.put(op.original(), op.operand());
                        assertNull(previous, "slot " + slot + ": two compare-and-swaps succeeded on value "
                                + op.original());
                    }
                }
                long value = 0;
                int steps = 0;
                while (next.containsKey(value)) {
                    value = next.get(value);
                    steps++;
                }
                assertEquals(next.size(), steps, "slot " + slot + ": the successes form one chain from 0");
                assertEquals(value, last, "slot " + slot + " final value");
            } else {
                Map<Long, Integer> seen = new HashMap<>();
                for (Op op : ops) {
                    seen.merge(op.original(), 1, Integer::sum);
                }
                seen.merge(last, 1, Integer::sum);
                assertTrue(seen.values().stream().allMatch(n -> n == 1), "slot " + slot + ": a value seen twice "
                        + seen);
                assertTrue(seen.containsKey(0L), "slot " + slot + ": nobody saw the initial value");
                for (Op op : ops) {
                    assertTrue(seen.containsKey(op.operand()), "slot " + slot + ": a written value vanished");
                }
            }
        }
    }
}
