package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The STag table: every registered {@link TaggedBuffer}, found by STag in O(1) (RFC 5041 section
 * 3.2; RFC 5040 section 2.1 defines the STag as the identifier of a Tagged Buffer).
 *
 * <pre>
 *   STag (32 bits):   0                   1                   2                   3
 *                     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *                    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *                    |     scrambled index (24 bits)                 |  key (8 bits) |
 *                    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>As in Linux siw, an STag is a 24-bit table index and an 8-bit key, and a lookup compares all
 * 32 bits. Unlike siw, the index is not on the wire as it is: the upper 24 bits are the index sent
 * through a keyed permutation of the 24-bit range (a four-round Feistel network whose round keys are
 * drawn when the table is made), so consecutive registrations get STags scattered over the whole
 * range and one STag says nothing a peer can use to guess another (RFC 5040 section 8.1.1 rule 8:
 * STags hard to predict, sparse over the range RECOMMENDED). Table index 0 is never handed out,
 * nor the index the permutation takes to 0, so no STag with the upper 24 bits 0 (STag 0, or the
 * STag 1 of siw's Write RTR) ever names a region. The key of an index changes each time the index is
 * reused (it counts up from a random start), so the STag of a deregistered region stops matching;
 * freed indices are reused oldest first, so a stale STag can only match again after its index has
 * been reused 256 times (the 8-bit key's limit, as in siw).
 *
 * <p>Threads: {@link #register}, {@link #invalidate} and {@link #deregister} may run on any thread
 * (register and deregister serialize on a lock; invalidate and deregister then wait out the
 * placements in flight, see {@link TaggedBuffer}); {@link #lookup} takes no lock and sees either nothing or a fully
 * constructed entry: entries are published through an {@link AtomicReferenceArray} that grows by
 * copy under the lock, and every field of {@link TaggedBuffer} but the volatile valid flag is
 * final.
 */
public final class StagTable {

    /** The most entries a table can hold: every 24-bit index but 0. */
    public static final int MAX_ENTRIES = (1 << 24) - 1;
    /** STag = index {@code << KEY_BITS} | key. */
    public static final int KEY_BITS = 8;
    public static final int KEY_MASK = 0xFF;

    private static final int INITIAL_SLOTS = 256;

    private final int maxEntries;
    /** The highest table index handed out: maxEntries, one more when the reserved index lies below. */
    private final int highestIndex;
    private final Object lock = new Object();
    /** Index to entry; slot 0 stays empty. Replaced (grown) under the lock. */
    private volatile AtomicReferenceArray<TaggedBuffer> slots;
    /** Guarded by lock: the last key each index had. */
    private byte[] keys;
    /** Guarded by lock: the lowest index never handed out. */
    private int nextUnused = 1;
    /** Guarded by lock: freed indices, oldest first (a ring). */
    private int[] freed = new int[16];
    private int freedHead;
    private int freedCount;
    /** Guarded by lock: first keys of fresh indices. */
    private final SplittableRandom random = new SplittableRandom();
    /** The round keys of the index permutation (see the class comment). */
    private final int[] roundKeys = new int[4];
    /** The table index the permutation maps to 0: never handed out. */
    private final int reservedIndex;
    private volatile int size;

    /**
     * @param maxEntries 1 to {@link #MAX_ENTRIES}; memory grows with use, not with this bound
     */
    public StagTable(int maxEntries) {
        if (maxEntries < 1 || maxEntries > MAX_ENTRIES) {
            throw new IllegalArgumentException("maxEntries " + maxEntries + " not in [1, " + MAX_ENTRIES + "]");
        }
        this.maxEntries = maxEntries;
        int initial = Math.min(maxEntries + 2, INITIAL_SLOTS);
        this.slots = new AtomicReferenceArray<>(initial);
        this.keys = new byte[initial];
        java.security.SecureRandom seed = new java.security.SecureRandom();
        for (int i = 0; i < roundKeys.length; i++) {
            roundKeys[i] = seed.nextInt();
        }
        this.reservedIndex = unscramble(0);
        this.highestIndex = Math.min(MAX_ENTRIES,
                maxEntries + (reservedIndex != 0 && reservedIndex <= maxEntries ? 1 : 0));
    }

    /** The 24 bits an STag carries for table index {@code index}: a keyed permutation of [0, 2^24). */
    private int scramble(int index) {
        int left = index >>> 12;
        int right = index & 0xFFF;
        for (int key : roundKeys) {
            int next = left ^ round(right, key);
            left = right;
            right = next;
        }
        return left << 12 | right;
    }

    /** The inverse of {@link #scramble}. */
    private int unscramble(int scrambled) {
        int left = scrambled >>> 12;
        int right = scrambled & 0xFFF;
        for (int i = roundKeys.length - 1; i >= 0; i--) {
            int previous = right ^ round(left, roundKeys[i]);
            right = left;
            left = previous;
        }
        return left << 12 | right;
    }

    /** The Feistel round function on 12 bits. */
    private static int round(int half, int key) {
        int x = (half ^ key) * 0x9E3779B1;
        return (x ^ x >>> 15) & 0xFFF;
    }

    /** The most regions this table holds at once. */
    public int maxEntries() {
        return maxEntries;
    }

    /** Registers a region that a Send with Invalidate may invalidate (siw allows it for every region). */
    public TaggedBuffer register(int pd, ByteBuf memory, long baseTaggedOffset, long length, int access) {
        return register(pd, memory, baseTaggedOffset, length, access, true);
    }

    /**
     * Registers a region under a fresh STag.
     *
     * @param pd the protection domain
     * @param memory the region's memory, index 0 being its first byte (slice it first when the region
     *     starts elsewhere); not retained: the caller keeps it alive until after {@link #deregister}
     * @param baseTaggedOffset the Tagged Offset of the first byte; the region may end at 2^64 but not
     *     wrap past it
     * @param length octets, at most {@code memory.capacity()}
     * @param access {@link Access} flags
     * @param remoteInvalidationAllowed whether a Send with Invalidate may invalidate the STag
     * @throws IllegalStateException when the table holds {@link #maxEntries()} regions
     */
    public TaggedBuffer register(int pd, ByteBuf memory, long baseTaggedOffset, long length, int access,
            boolean remoteInvalidationAllowed) {
        return register(pd, memory, baseTaggedOffset, length, access, remoteInvalidationAllowed,
                TaggedBuffer.ANY_STREAM);
    }

    /**
     * As {@link #register(int, ByteBuf, long, long, int, boolean)}, the STag associated with one DDP
     * stream (RFC 5041 section 8.2): a tagged segment of any other stream fails its check with
     * {@link org.jiwarp.wire.rdmap.TerminateError#DDP_TAGGED_STAG_NOT_ASSOCIATED}.
     *
     * @param stream a positive stream number, or {@link TaggedBuffer#ANY_STREAM}
     */
    public TaggedBuffer register(int pd, ByteBuf memory, long baseTaggedOffset, long length, int access,
            boolean remoteInvalidationAllowed, int stream) {
        if (stream < 0) {
            throw new IllegalArgumentException("stream " + stream + " is negative");
        }
        Objects.requireNonNull(memory, "memory");
        if (length < 0 || length > memory.capacity()) {
            throw new IllegalArgumentException("length " + length + " not in [0, capacity " + memory.capacity() + "]");
        }
        // The region's last byte is base + length - 1 <= 2^64 - 1.
        if (length > 0 && Long.compareUnsigned(baseTaggedOffset, -length) > 0) {
            throw new IllegalArgumentException(String.format("region at TO 0x%x + %d wraps past 2^64",
                    baseTaggedOffset, length));
        }
        if ((access & ~Access.ALL) != 0) {
            throw new IllegalArgumentException("unknown access bits in " + Access.describe(access));
        }
        synchronized (lock) {
            AtomicReferenceArray<TaggedBuffer> s = slots;
            int index;
            int key;
            if (nextUnused < s.length() && nextUnused <= highestIndex
                    || freedCount == 0 && nextUnused <= highestIndex) {
                if (nextUnused >= s.length()) {
                    s = grow(s);
                }
                index = nextUnused++;
                if (index == reservedIndex) {
                    return register(pd, memory, baseTaggedOffset, length, access, remoteInvalidationAllowed, stream);
                }
                key = random.nextInt(KEY_MASK + 1);
            } else if (freedCount > 0) {
                index = pollFreed();
                key = (keys[index] + 1) & KEY_MASK;
            } else {
                throw new IllegalStateException("STag table full: " + maxEntries + " regions");
            }
            keys[index] = (byte) key;
            TaggedBuffer entry = new TaggedBuffer(scramble(index) << KEY_BITS | key, pd, access, baseTaggedOffset, length,
                    memory, remoteInvalidationAllowed, stream);
            s.set(index, entry);
            size++;
            return entry;
        }
    }

    /**
     * The region the STag names, or {@code null} unless its index is registered with exactly this
     * key. Valid or not: check {@link TaggedBuffer#valid()}. Lock-free, O(1).
     */
    public TaggedBuffer lookup(int stag) {
        int index = unscramble(stag >>> KEY_BITS);
        AtomicReferenceArray<TaggedBuffer> s = slots;
        if (index >= s.length()) {
            return null;
        }
        TaggedBuffer entry = s.get(index);
        return entry != null && entry.stag() == stag ? entry : null;
    }

    /**
     * Local invalidation: the STag stays registered but no longer passes a check. Returns once no
     * placement into the region is in flight: from then on no byte of it is written.
     *
     * @return {@code false} when no region has this STag; {@code true} otherwise, also when it was
     *     invalid already
     */
    public boolean invalidate(int stag) {
        TaggedBuffer entry = lookup(stag);
        if (entry == null) {
            return false;
        }
        entry.invalidate();
        return true;
    }

    /**
     * Removes the region and frees its index for reuse under another key; the entry turns invalid
     * for whoever still holds it. Returns once no placement into the region is in flight: from then
     * on no byte of it is written (the wait is outside the table's lock).
     *
     * @return {@code true} when this call removed the region; {@code false} when no region has this
     *     STag (never registered, or deregistered already)
     */
    public boolean deregister(int stag) {
        TaggedBuffer entry;
        synchronized (lock) {
            AtomicReferenceArray<TaggedBuffer> s = slots;
            int index = unscramble(stag >>> KEY_BITS);
            if (index == 0 || index >= s.length()) {
                return false;
            }
            entry = s.get(index);
            if (entry == null || entry.stag() != stag) {
                return false;
            }
            entry.markInvalid();
            s.set(index, null);
            pushFreed(index);
            size--;
        }
        entry.awaitPlacements();
        return true;
    }

    /** Regions registered now. */
    public int size() {
        return size;
    }

    private AtomicReferenceArray<TaggedBuffer> grow(AtomicReferenceArray<TaggedBuffer> old) {
        int length = (int) Math.min((long) highestIndex + 1, 2L * old.length());
        AtomicReferenceArray<TaggedBuffer> grown = new AtomicReferenceArray<>(length);
        for (int i = 0; i < old.length(); i++) {
            grown.lazySet(i, old.get(i));
        }
        byte[] grownKeys = new byte[length];
        System.arraycopy(keys, 0, grownKeys, 0, keys.length);
        keys = grownKeys;
        slots = grown; // the volatile write publishes the copied entries
        return grown;
    }

    private void pushFreed(int index) {
        if (freedCount == freed.length) {
            int[] grown = new int[freed.length * 2];
            for (int i = 0; i < freedCount; i++) {
                grown[i] = freed[(freedHead + i) % freed.length];
            }
            freed = grown;
            freedHead = 0;
        }
        freed[(freedHead + freedCount) % freed.length] = index;
        freedCount++;
    }

    private int pollFreed() {
        int index = freed[freedHead];
        freedHead = (freedHead + 1) % freed.length;
        freedCount--;
        return index;
    }
}
