package org.jiwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.testing.Deadlines;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StagTableTest {

    private final ByteBuf memory = Unpooled.buffer(4096);

    @AfterEach
    void release() {
        memory.release();
    }

    /**
     * RFC 5040 section 8.1.1 rule 8: STags hard to predict, sparse over the whole range. Consecutive
     * registrations get unrelated STags, spread over all 32 bits, and another table (another RNIC)
     * scrambles differently.
     */
    @Test
    void stagsAreScatteredOverTheWholeRange() {
        StagTable table = new StagTable(1 << 16);
        StagTable other = new StagTable(1 << 16);
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        boolean[] topNibbles = new boolean[16];
        int consecutive = 0;
        int sameAsOther = 0;
        int previous = 0;
        for (int i = 0; i < 4096; i++) {
            int stag = table.register(1, memory, 0, 16, Access.ALL).stag();
            assertTrue(seen.add(stag), "STag 0x" + Integer.toHexString(stag) + " handed out twice");
            assertEquals(stag, table.lookup(stag).stag());
            topNibbles[stag >>> 28] = true;
            if ((stag >>> 8) - (previous >>> 8) == 1) {
                consecutive++;
            }
            if (other.register(1, memory, 0, 16, Access.ALL).stag() >>> 8 == stag >>> 8) {
                sameAsOther++;
            }
            previous = stag;
        }
        for (int nibble = 0; nibble < 16; nibble++) {
            assertTrue(topNibbles[nibble], "no STag with top nibble " + nibble + ": not sparse over the range");
        }
        assertTrue(consecutive < 8, consecutive + " of 4096 STags follow their predecessor's index");
        assertTrue(sameAsOther < 8, sameAsOther + " of 4096 STags match another table's at the same place");
    }

    @Test
    void firstRegionsStagFindsIt() {
        StagTable table = new StagTable(16);
        TaggedBuffer region = table.register(7, memory, 0x1000, 4096, Access.REMOTE_WRITE | Access.REMOTE_READ);
        assertTrue(region.stag() >>> 8 != 0, "the scrambled index is never 0");
        assertNull(table.lookup(region.stag() & 0xFF), "an STag with index bits 0 names nothing");
        assertSame(region, table.lookup(region.stag()));
        assertEquals(7, region.pd());
        assertEquals(Access.REMOTE_WRITE | Access.REMOTE_READ, region.access());
        assertEquals(0x1000, region.baseTaggedOffset());
        assertEquals(4096, region.length());
        assertSame(memory, region.memory());
        assertTrue(region.valid());
        assertTrue(region.remoteInvalidationAllowed());
        assertEquals(1, table.size());
    }

    @Test
    void indicesAreDistinctAndNeverZero() {
        StagTable table = new StagTable(1000);
        Set<Integer> indices = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            int index = table.register(1, memory, 0, 16, Access.LOCAL_WRITE).stag() >>> 8;
            assertNotEquals(0, index);
            assertTrue(indices.add(index), "index " + index + " handed out twice");
        }
        assertEquals(1000, table.size());
    }

    @Test
    void stagZeroAndEveryIndexZeroStagAreInvalid() {
        StagTable table = new StagTable(4);
        table.register(1, memory, 0, 16, Access.ALL);
        for (int key = 0; key < 256; key++) {
            assertNull(table.lookup(key), "STag " + key);
        }
        assertFalse(table.invalidate(0));
        table.deregister(0);
        assertEquals(1, table.size());
    }

    @Test
    void lookupComparesAll32Bits() {
        StagTable table = new StagTable(16);
        TaggedBuffer a = table.register(1, memory, 0, 16, Access.ALL);
        TaggedBuffer b = table.register(1, memory, 0, 16, Access.ALL);
        for (int bit = 0; bit < 32; bit++) {
            int flipped = a.stag() ^ (1 << bit);
            TaggedBuffer found = table.lookup(flipped);
            assertTrue(found == null || found == b && flipped == b.stag(), "bit " + bit);
        }
        assertNull(table.lookup(-1));
        assertNull(table.lookup(StagTable.MAX_ENTRIES << 8));
    }

    @Test
    void keyChangesWhenAnIndexIsReusedAndStaleStagsNeverMatch() {
        StagTable table = new StagTable(1);
        List<Integer> retired = new ArrayList<>();
        int index = -1;
        for (int round = 0; round < 255; round++) {
            TaggedBuffer region = table.register(1, memory, 0, 16, Access.ALL);
            if (index < 0) {
                index = region.stag() >>> 8;
            }
            assertEquals(index, region.stag() >>> 8, "one entry: the index is reused");
            assertFalse(retired.contains(region.stag()), "round " + round + " reused a key");
            if (!retired.isEmpty()) {
                int previous = retired.get(retired.size() - 1);
                assertEquals((previous + 1) & 0xFF, region.stag() & 0xFF, "the key counts up");
            }
            for (int stale : retired) {
                assertNull(table.lookup(stale));
                assertFalse(table.invalidate(stale));
            }
            table.deregister(region.stag());
            assertFalse(region.valid(), "a deregistered entry turns invalid");
            assertNull(table.lookup(region.stag()));
            retired.add(region.stag());
        }
        assertEquals(0, table.size());
    }

    @Test
    void staleStagDoesNotDeregisterTheIndexsNewOwner() {
        StagTable table = new StagTable(1);
        TaggedBuffer old = table.register(1, memory, 0, 16, Access.ALL);
        table.deregister(old.stag());
        TaggedBuffer current = table.register(2, memory, 0, 16, Access.ALL);
        table.deregister(old.stag());
        assertFalse(table.invalidate(old.stag()));
        assertSame(current, table.lookup(current.stag()));
        assertTrue(current.valid());
        assertEquals(1, table.size());
    }

    @Test
    void freedIndicesAreReusedOldestFirst() {
        StagTable table = new StagTable(3);
        TaggedBuffer a = table.register(1, memory, 0, 16, Access.ALL);
        TaggedBuffer b = table.register(1, memory, 0, 16, Access.ALL);
        TaggedBuffer c = table.register(1, memory, 0, 16, Access.ALL);
        table.deregister(b.stag());
        table.deregister(a.stag());
        assertEquals(b.stag() >>> 8, table.register(1, memory, 0, 16, Access.ALL).stag() >>> 8);
        assertEquals(a.stag() >>> 8, table.register(1, memory, 0, 16, Access.ALL).stag() >>> 8);
        assertSame(c, table.lookup(c.stag()));
    }

    @Test
    void fullTableThrowsUntilAnEntryIsFreed() {
        StagTable table = new StagTable(4);
        List<TaggedBuffer> regions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            regions.add(table.register(1, memory, 0, 16, Access.ALL));
        }
        assertThrows(IllegalStateException.class, () -> table.register(1, memory, 0, 16, Access.ALL));
        assertEquals(4, table.size());
        table.invalidate(regions.get(2).stag());
        assertThrows(IllegalStateException.class, () -> table.register(1, memory, 0, 16, Access.ALL),
                "an invalidated STag still holds its index");
        table.deregister(regions.get(2).stag());
        TaggedBuffer again = table.register(1, memory, 0, 16, Access.ALL);
        assertEquals(regions.get(2).stag() >>> 8, again.stag() >>> 8);
        assertNotEquals(regions.get(2).stag(), again.stag());
    }

    @Test
    void largestTableAllocatesLazily() {
        StagTable table = new StagTable(StagTable.MAX_ENTRIES);
        TaggedBuffer region = table.register(1, memory, 0, 16, Access.ALL);
        assertSame(region, table.lookup(region.stag()));
        assertThrows(IllegalArgumentException.class, () -> new StagTable(StagTable.MAX_ENTRIES + 1));
        assertThrows(IllegalArgumentException.class, () -> new StagTable(0));
    }

    @Test
    void growsPastItsFirstArray() {
        StagTable table = new StagTable(2000);
        List<TaggedBuffer> regions = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            regions.add(table.register(i, memory, i * 16L, 16, Access.ALL));
        }
        for (TaggedBuffer region : regions) {
            assertSame(region, table.lookup(region.stag()));
        }
        assertThrows(IllegalStateException.class, () -> table.register(1, memory, 0, 16, Access.ALL));
    }

    @Test
    void invalidateKeepsTheEntryButMarksItInvalid() {
        StagTable table = new StagTable(4);
        TaggedBuffer region = table.register(1, memory, 0, 16, Access.ALL);
        assertTrue(table.invalidate(region.stag()));
        assertSame(region, table.lookup(region.stag()));
        assertFalse(region.valid());
        assertTrue(table.invalidate(region.stag()), "invalidating twice is fine");
        assertEquals(1, table.size());
        table.deregister(region.stag());
        assertNull(table.lookup(region.stag()));
        assertEquals(0, table.size());
    }

    @Test
    void registerRefusesBadRegions() {
        StagTable table = new StagTable(4);
        assertThrows(IllegalArgumentException.class, () -> table.register(1, memory, 0, 4097, Access.ALL),
                "longer than the memory");
        assertThrows(IllegalArgumentException.class, () -> table.register(1, memory, 0, -1, Access.ALL));
        assertThrows(IllegalArgumentException.class, () -> table.register(1, memory, -16, 17, Access.ALL),
                "wraps past 2^64");
        assertThrows(IllegalArgumentException.class, () -> table.register(1, memory, 0, 16, 0x10), "unknown access");
        assertThrows(NullPointerException.class, () -> table.register(1, null, 0, 16, Access.ALL));
        assertEquals(0, table.size());
        TaggedBuffer top = table.register(1, memory, -16, 16, Access.ALL);
        assertEquals(-16, top.baseTaggedOffset(), "a region may end exactly at 2^64");
        TaggedBuffer empty = table.register(1, memory, -1, 0, Access.ALL);
        assertEquals(0, empty.length());
        assertFalse(table.register(1, memory, 0, 16, Access.ALL, false).remoteInvalidationAllowed());
    }

    @Test
    void accessDescribesItsFlags() {
        assertEquals("none", Access.describe(0));
        assertEquals("LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC", Access.describe(Access.ALL));
        assertEquals("REMOTE_READ|0x10", Access.describe(Access.REMOTE_READ | 0x10));
        assertTrue(Access.grants(Access.ALL, Access.REMOTE_WRITE));
        assertFalse(Access.grants(Access.REMOTE_READ, Access.REMOTE_WRITE | Access.REMOTE_READ));
    }

    /**
     * Writers register, look up and deregister their own regions while readers look up STags the writers
     * published or retired. Every region encodes its fields in its base TO, so a reader that saw a torn or
     * foreign entry would notice; a retired (deregistered) STag must never match again.
     */
    @Test
    void concurrentRegisterLookupDeregister() throws Exception {
        StagTable table = new StagTable(1 << 12);
        int writers = 4;
        int readers = 2;
        int opsPerWriter = 1500;
        AtomicIntegerArray published = new AtomicIntegerArray(128);
        Set<Integer> retired = ConcurrentHashMap.newKeySet();
        Map<Integer, TaggedBuffer> live = new ConcurrentHashMap<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long[] lookups = new long[readers];
        for (int w = 0; w < writers; w++) {
            int pd = w + 1;
            threads.add(new Thread(() -> run(failure, start, () -> {
                SplittableRandom random = new SplittableRandom(pd);
                ArrayDeque<TaggedBuffer> mine = new ArrayDeque<>();
                for (int op = 0; op < opsPerWriter; op++) {
                    long base = encode(pd, op);
                    TaggedBuffer region = table.register(pd, memory, base, lengthOf(base), accessOf(base));
                    check(region, region.stag());
                    assertSame(region, table.lookup(region.stag()), "own lookup after register");
                    live.put(region.stag(), region);
                    published.set(random.nextInt(published.length()), region.stag());
                    mine.add(region);
                    if (mine.size() > 8 || random.nextBoolean()) {
                        TaggedBuffer gone = mine.poll();
                        live.remove(gone.stag());
                        table.deregister(gone.stag());
                        assertNull(table.lookup(gone.stag()), "own lookup after deregister");
                        retired.add(gone.stag());
                    }
                }
            }), "writer-" + w));
        }
        for (int r = 0; r < readers; r++) {
            int reader = r;
            threads.add(new Thread(() -> run(failure, start, () -> {
                SplittableRandom random = new SplittableRandom(100 + reader);
                Integer[] retiredSample = new Integer[0];
                long n = 0;
                while (!done.get() || n < 10_000) {
                    int stag = published.get(random.nextInt(published.length()));
                    TaggedBuffer found = table.lookup(stag);
                    if (found != null) {
                        check(found, stag);
                    }
                    if ((n & 1023) == 0) {
                        retiredSample = retired.toArray(retiredSample);
                    }
                    if (retiredSample.length > 0) {
                        int stale = retiredSample[random.nextInt(retiredSample.length)];
                        assertNull(table.lookup(stale), "a retired STag matched");
                    }
                    n++;
                }
                lookups[reader] = n;
            }), "reader-" + r));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (int i = 0; i < writers; i++) {
            Deadlines.join(threads.get(i), Duration.ofSeconds(60));
        }
        done.set(true);
        for (Thread thread : threads) {
            Deadlines.join(thread, Duration.ofSeconds(60));
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(live.size(), table.size());
        for (Map.Entry<Integer, TaggedBuffer> entry : live.entrySet()) {
            assertSame(entry.getValue(), table.lookup(entry.getKey()));
        }
        for (int stale : retired) {
            assertNull(table.lookup(stale));
        }
        assertEquals(writers * opsPerWriter, live.size() + retired.size());
        assertTrue(lookups[0] >= 10_000 && lookups[1] >= 10_000);
    }

    private static long encode(int pd, int op) {
        return (long) pd << 40 | (long) op << 12;
    }

    private static long lengthOf(long base) {
        return 1 + (base >>> 12) % 1000;
    }

    private static int accessOf(long base) {
        return (int) (base >>> 12) % 7 + 1;
    }

    private static void check(TaggedBuffer region, int stag) {
        assertEquals(stag, region.stag(), "STag");
        long base = region.baseTaggedOffset();
        assertEquals(base >>> 40, region.pd(), "pd matches the base it was registered with");
        assertEquals(lengthOf(base), region.length(), "length");
        assertEquals(accessOf(base), region.access(), "access");
    }

    private static void run(AtomicReference<Throwable> failure, CountDownLatch start, Runnable body) {
        try {
            Deadlines.await(start, Duration.ofSeconds(60), "the start signal");
            body.run();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }
}
