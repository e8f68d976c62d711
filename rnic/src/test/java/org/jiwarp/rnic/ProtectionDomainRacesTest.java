package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.Test;

/**
 * A protection domain's destroy against what adds to it (issue 21): a registration, a memory window
 * or a queue pair either holds the domain, which then refuses to be destroyed, or is refused
 * because it is destroyed; never both, and a refused registration leaves no STag behind.
 */
class ProtectionDomainRacesTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * A destroy in the middle of a registration: the registering thread is held where the domain
     * takes the caller's buffer (its {@code slice()}, after the domain was checked), the domain is
     * destroyed from the test's thread, then the registration goes on. Exactly one of the two may
     * succeed; a domain that was destroyed has no STag registered under it.
     */
    @Test
    void aDomainIsNeverDestroyedUnderARegistration() throws Exception {
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = rnic.allocatePd();
            CountDownLatch inRegister = new CountDownLatch(1);
            CountDownLatch destroyTried = new CountDownLatch(1);
            ByteBuf memory = new UnpooledHeapByteBuf(UnpooledByteBufAllocator.DEFAULT, 4096, 4096) {
                @Override
                public ByteBuf slice() {
                    inRegister.countDown();
                    try {
                        Deadlines.await(destroyTried, WAIT, "the destroy");
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return super.slice();
                }
            };
            try {
                memory.writerIndex(4096);
                AtomicReference<MemoryRegion> registered = new AtomicReference<>();
                AtomicReference<Throwable> refused = new AtomicReference<>();
                Thread registering = new Thread(() -> {
                    try {
                        registered.set(pd.register(memory, Access.ALL));
                    } catch (Throwable e) {
                        refused.set(e);
                    }
                }, "registering");
                registering.start();
                Deadlines.await(inRegister, WAIT, "register() taking its slice of the buffer");
                IllegalStateException destroyRefused = null;
                try {
                    pd.destroy();
                } catch (IllegalStateException e) {
                    destroyRefused = e;
                }
                destroyTried.countDown();
                Deadlines.join(registering, WAIT);
                if (destroyRefused == null) {
                    assertNull(registered.get(), "the domain was destroyed, yet the registration went on");
                    assertNotNull(refused.get(), "the registration neither returned nor threw");
                    assertEquals(0, rnic.stags().size(), "STags registered under the destroyed domain");
                } else {
                    assertNull(refused.get(), "the destroy was refused, and so was the registration");
                    registered.get().deregister();
                    pd.destroy();
                }
            } finally {
                memory.release();
            }
        }
    }

    /**
     * Queue pairs come and go on one thread, each checking that its domain is not destroyed once
     * it holds it, while another destroys the domain as soon as nothing holds it.
     */
    @Test
    void aQueuePairNeverJoinsADestroyedDomain() throws Exception {
        int rounds = 2_000;
        CyclicBarrier start = new CyclicBarrier(2);
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            for (int round = 0; round < rounds; round++) {
                ProtectionDomain pd = rnic.allocatePd();
                AtomicReference<String> violation = new AtomicReference<>();
                AtomicReference<Throwable> failed = new AtomicReference<>();
                long deadline = System.nanoTime() + WAIT.toNanos();
                Thread creator = new Thread(() -> {
                    try {
                        start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                        for (int adds = 0;; adds++) {
                            try {
                                pd.queuePairAdded();
                            } catch (IllegalStateException destroyed) {
                                return;
                            }
                            try {
                                pd.checkNotDestroyed();
                            } catch (IllegalStateException destroyed) {
                                violation.set("queue pair " + adds + " joined a destroyed domain");
                                return;
                            }
                            pd.queuePairRemoved();
                            Deadlines.check(deadline, "the creator never saw the domain destroyed");
                        }
                    } catch (Throwable e) {
                        failed.set(e);
                    }
                }, "queue-pair-creator");
                creator.start();
                start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                while (true) {
                    try {
                        pd.destroy();
                        break;
                    } catch (IllegalStateException used) {
                        Deadlines.check(deadline, "the domain was never free to destroy");
                    }
                }
                Deadlines.join(creator, WAIT);
                assertNull(failed.get(), "the creator failed");
                assertNull(violation.get(), "round " + round);
            }
        }
    }

    /** A registration refused (a heap buffer, bad access bits, a full STag table) gives its hold on the domain back. */
    @Test
    void aRefusedRegistrationDoesNotHoldTheDomain() {
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1).maxStags(2))) {
            ProtectionDomain pd = rnic.allocatePd();
            ByteBuffer memory = ByteBuffer.allocateDirect(4096);
            assertThrows(IllegalArgumentException.class, () -> pd.register(ByteBuffer.allocate(64), Access.ALL),
                    "a heap buffer");
            assertThrows(IllegalArgumentException.class, () -> pd.register(memory, 1 << 30), "unknown access bits");
            List<MemoryRegion> regions = new ArrayList<>();
            regions.add(pd.register(memory, Access.ALL));
            regions.add(pd.register(memory, Access.ALL));
            assertThrows(IllegalStateException.class, () -> pd.register(memory, Access.ALL), "the table is full");
            for (MemoryRegion region : regions) {
                region.deregister();
            }
            pd.destroy();
        }
    }

    /** A memory window holds its domain until deallocated, like a region. */
    @Test
    void aWindowHoldsItsDomain() {
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = rnic.allocatePd();
            MemoryWindow window = pd.allocateWindow();
            assertThrows(IllegalStateException.class, pd::destroy);
            window.deallocate();
            pd.destroy();
            assertThrows(IllegalStateException.class, pd::allocateWindow);
        }
    }

    /**
     * A queue pair refused because a completion queue of its configuration is destroyed holds
     * nothing: neither its domain nor its other completion queue.
     */
    @Test
    void aRefusedQueuePairHoldsNeitherItsDomainNorItsOtherQueue() {
        try (Rnic rnic = Rnic.open(RnicOptions.defaults().threads(1))) {
            ProtectionDomain pd = rnic.allocatePd();
            CompletionQueue sendCq = rnic.createCq(16);
            CompletionQueue receiveCq = rnic.createCq(16);
            receiveCq.destroy();
            assertThrows(IllegalStateException.class, () -> rnic.createQp(new QpConfig(pd, sendCq, receiveCq)));
            // Neither throws "still used": the refused queue pair gave both back.
            sendCq.destroy();
            pd.destroy();
        }
    }
}
