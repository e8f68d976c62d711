package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.ddp.Access;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * Deregistration and invalidation wait out placements in flight, over real loopback TCP: a peer
 * streams 64 KiB RDMA Writes into a region at full rate while its owner deregisters (or
 * invalidates) it at a random moment, then scribbles over the whole buffer (back to front); once the next Write has
 * met the dead STag (the owner sends a Terminate, so its event loop is past every copy that started
 * before), not one byte of the scribble may have been overwritten.
 *
 * <p>Iterations and seed: {@code -Djiwarp.deregisterStress.iterations=N} (150) and
 * {@code -Djiwarp.deregisterStress.seed=S}; a failure prints the seed and the iterations that saw a
 * late Write.
 */
class DeregisterStressTest {

    private static final int SIZE = 64 * 1024;
    private static final int ITERATIONS = Integer.getInteger("jiwarp.deregisterStress.iterations", 150);
    private static final long SEED = Long.getLong("jiwarp.deregisterStress.seed", 0x1105_7E55L);
    /** The two sources the peer alternates between, so a copy in progress shows. */
    private static final byte PATTERN_A = (byte) 0xA5;
    private static final byte PATTERN_B = (byte) 0xC3;
    /** Inside the first DDP segment of a 64 KiB Write (MULPDU is about 64 KiB less headers). */
    private static final int PROBE = 60_000;
    private static final byte SCRIBBLE = (byte) 0x5A;
    /** Most busy-wait rounds between the first Write landing and the deregistration. */
    private static final int MAX_SPINS = 40_000;
    private static final int SCRIBBLE_CHUNK = 512;
    private static final int DEPTH = 8;

    @Test
    void noWriteLandsAfterDeregisterReturns() throws Exception {
        run(false);
    }

    @Test
    void noWriteLandsAfterInvalidateReturns() throws Exception {
        run(true);
    }

    private static void run(boolean invalidate) throws Exception {
        SplittableRandom random = new SplittableRandom(SEED + (invalidate ? 1 : 0));
        byte[] scribble = new byte[SIZE];
        Arrays.fill(scribble, SCRIBBLE);
        ByteBuffer ownerMemory = ByteBuffer.allocateDirect(SIZE);
        ByteBuffer peerMemoryA = ByteBuffer.allocateDirect(SIZE);
        ByteBuffer peerMemoryB = ByteBuffer.allocateDirect(SIZE);
        AtomicReference<QueuePair> accepting = new AtomicReference<>();
        List<String> late = new ArrayList<>();
        int midCopy = 0;
        try (Rnic owner = Rnic.open(RnicOptions.defaults().threads(1));
                Rnic peer = Rnic.open(RnicOptions.defaults().threads(1));
                RnicListener listener = owner.listen(new InetSocketAddress("127.0.0.1", 0),
                        request -> request.accept(accepting.get(), new byte[0]))) {
            ProtectionDomain ownerPd = owner.allocatePd();
            ProtectionDomain peerPd = peer.allocatePd();
            MemoryRegion sourceA = peerPd.register(peerMemoryA, Access.LOCAL_WRITE);
            MemoryRegion sourceB = peerPd.register(peerMemoryB, Access.LOCAL_WRITE);
            sourceA.buffer().setBytes(0, filled(PATTERN_A));
            sourceB.buffer().setBytes(0, filled(PATTERN_B));
            for (int i = 0; i < ITERATIONS; i++) {
                CompletionQueue ownerCq = owner.createCq(1024);
                CompletionQueue peerCq = peer.createCq(1 << 16);
                QueuePair ownerQp = owner.createQp(new QpConfig(ownerPd, ownerCq, ownerCq));
                QueuePair peerQp = peer.createQp(new QpConfig(peerPd, peerCq, peerCq).sendDepth(16));
                accepting.set(ownerQp);
                MemoryRegion sink = ownerPd.register(ownerMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                ownerMemory.put(0, scribble);
                peer.connect(peerQp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
                AtomicBoolean stop = new AtomicBoolean();
                stream(peerQp, peerCq, sourceA, sourceB, sink.address(), sink.rkey(), stop);

                // Wait for the first Write to land, then a random while longer, then pull the region.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (ownerMemory.get(SIZE - 1) == SCRIBBLE) {
                    assertTrue(System.nanoTime() < deadline, "iteration " + i + ": no Write landed within 10 s");
                    Thread.onSpinWait();
                }
                for (int spins = random.nextInt(MAX_SPINS); spins > 0; spins--) {
                    Thread.onSpinWait();
                }
                // Three times in four, also wait (a while at most) until a copy is half done: the
                // front of the region holds the newer pattern, the probe still the older one.
                if (random.nextInt(4) != 0) {
                    for (int polls = 0; polls < MAX_SPINS * 10; polls++) {
                        if (ownerMemory.get(0) != ownerMemory.get(PROBE)) {
                            midCopy++;
                            break;
                        }
                    }
                }
                if (invalidate) {
                    assertTrue(sink.invalidate());
                } else {
                    sink.deregister();
                }
                scribbleBackwards(ownerMemory, scribble);

                // The next Write meets the dead STag and the owner sends a Terminate: its event loop
                // has finished every copy that started before, so a late one is in the buffer now.
                for (long waited = 0; ownerQp.terminateSent() == null; waited++) {
                    assertTrue(waited < 10_000, "iteration " + i + ": no Write met the dead STag within 10 s ("
                            + ownerQp + ")");
                    Thread.sleep(1);
                }
                assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, ownerQp.terminateSent(), "iteration " + i);
                stop.set(true);
                peerQp.disconnect();
                int overwritten = firstDifference(ownerMemory, scribble);
                if (overwritten >= 0) {
                    late.add("iteration " + i + " (offset " + overwritten + ")");
                }
                if (invalidate) {
                    sink.deregister();
                }
                assertFalse(sink.valid());
            }
        }
        assertTrue(late.isEmpty(), (invalidate ? "invalidate" : "deregister") + "() returned while a Write was "
                + "still being placed: " + late.size() + " of " + ITERATIONS + " buffers overwritten after the "
                + "call (" + midCopy + " calls made in the middle of a copy), seed " + SEED + ": " + late);
    }

    /**
     * Keeps {@link #DEPTH} 64 KiB Writes outstanding, from the two sources in turn: each completion
     * posts the next from the peer's event loop (no extra thread competing for the CPU), until told
     * to stop or the queue pair fails.
     */
    private static void stream(QueuePair qp, CompletionQueue cq, MemoryRegion a, MemoryRegion b, long address,
            int rkey, AtomicBoolean stop) {
        SendWorkRequest[] writes = {
            SendWorkRequest.write(0, address, rkey, new Sge(a, 0, SIZE)),
            SendWorkRequest.write(1, address, rkey, new Sge(b, 0, SIZE)),
        };
        int[] posted = {DEPTH}; // only the peer's event loop touches it after the first posts
        cq.onCompletion(wc -> {
            if (wc.status() == WcStatus.SUCCESS && !stop.get() && qp.state() == QpState.RTS) {
                qp.postSend(writes[posted[0]++ & 1]);
            }
        });
        for (int i = 0; i < DEPTH; i++) {
            qp.postSend(writes[i & 1]);
        }
    }

    /**
     * Scribbles from the last chunk to the first: a placement copies front to back, so one still
     * running when the scribble starts writes its last bytes after the scribble has been there, and
     * shows; a scribble in the copy's own direction could trail it and erase the evidence.
     */
    private static void scribbleBackwards(ByteBuffer memory, byte[] scribble) {
        for (int at = SIZE - SCRIBBLE_CHUNK; at >= 0; at -= SCRIBBLE_CHUNK) {
            memory.put(at, scribble, at, SCRIBBLE_CHUNK);
        }
    }

    private static byte[] filled(byte value) {
        byte[] bytes = new byte[SIZE];
        Arrays.fill(bytes, value);
        return bytes;
    }

    private static int firstDifference(ByteBuffer memory, byte[] expected) {
        for (int i = 0; i < expected.length; i++) {
            if (memory.get(i) != expected[i]) {
                return i;
            }
        }
        return -1;
    }
}
