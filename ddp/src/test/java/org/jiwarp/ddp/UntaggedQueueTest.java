package org.jiwarp.ddp;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jiwarp.testing.Deadlines;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;

class UntaggedQueueTest {

    private static final byte GUARD = (byte) 0xA5;
    private static final long MASK = 0xFFFF_FFFFL;

    /** A receive buffer over fresh memory filled with {@link #GUARD}, one segment per length. */
    private static ReceiveBuffer receive(long id, int... lengths) {
        ByteBuf[] segments = new ByteBuf[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            // Each segment's readable region sits between guard octets of a larger array.
            byte[] memory = new byte[lengths[i] + 8];
            Arrays.fill(memory, GUARD);
            segments[i] = Unpooled.wrappedBuffer(memory).setIndex(4, 4 + lengths[i]);
        }
        return new ReceiveBuffer(id, segments);
    }

    /** The bytes of a receive buffer's segments, concatenated, guards checked. */
    private static byte[] contents(ReceiveBuffer buffer) {
        ByteBuf[] segments = buffer.segments();
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf segment : segments) {
            byte[] memory = segment.array();
            for (int i = 0; i < 4; i++) {
                assertEquals(GUARD, memory[i], "guard before a segment");
                assertEquals(GUARD, memory[memory.length - 1 - i], "guard after a segment");
            }
            all.writeBytes(segment, segment.readerIndex(), segment.readableBytes());
        }
        byte[] bytes = new byte[all.readableBytes()];
        all.readBytes(bytes);
        all.release();
        return bytes;
    }

    private static ByteBuf bytes(int from, int count) {
        byte[] bytes = new byte[count];
        for (int i = 0; i < count; i++) {
            bytes[i] = (byte) (from + i);
        }
        return Unpooled.wrappedBuffer(bytes);
    }

    private static byte[] expected(int from, int count, int capacity) {
        byte[] bytes = new byte[capacity];
        Arrays.fill(bytes, GUARD);
        for (int i = 0; i < count; i++) {
            bytes[i] = (byte) (from + i);
        }
        return bytes;
    }

    @Test
    void singleSegmentSendCompletes() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        assertEquals(1, queue.expectedMsn(), "MSN starts at 1");
        ReceiveBuffer buffer = receive(42, 16);
        assertTrue(queue.post(buffer));
        assertEquals(1, queue.posted());
        UntaggedQueue.Placement placement = queue.place(1, 0, true, bytes(1, 5));
        assertTrue(placement.completed());
        assertSame(buffer, placement.buffer());
        assertEquals(42, placement.buffer().workRequestId());
        assertEquals(5, placement.messageLength());
        assertEquals(5, placement.segmentLength());
        assertEquals(1, placement.msn());
        assertEquals(5, buffer.bytesPlaced());
        assertEquals(16, buffer.capacity());
        assertEquals(2, queue.expectedMsn());
        assertEquals(0, queue.posted());
        assertArrayEquals(expected(1, 5, 16), contents(buffer));
    }

    @Test
    void multiSegmentMessageScattersAcrossTheBuffersSegments() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        ReceiveBuffer buffer = receive(7, 3, 0, 5, 8);
        queue.post(buffer);
        UntaggedQueue.Placement placement = queue.place(1, 0, false, bytes(0, 4));
        assertFalse(placement.completed());
        assertEquals(4, placement.messageLength(), "placed so far");
        assertFalse(queue.place(1, 4, false, bytes(4, 4)).completed());
        assertEquals(1, queue.expectedMsn());
        assertEquals(1, queue.posted());
        placement = queue.place(1, 8, true, bytes(8, 6));
        assertTrue(placement.completed());
        assertEquals(14, placement.messageLength());
        assertArrayEquals(expected(0, 14, 16), contents(buffer));
        ByteBuf[] segments = buffer.segments();
        assertEquals(2, segments[0].getByte(segments[0].readerIndex() + 2));
        assertEquals(3, segments[2].getByte(segments[2].readerIndex()));
        assertEquals(13, segments[3].getByte(segments[3].readerIndex() + 5));
        assertEquals(GUARD, segments[3].getByte(segments[3].readerIndex() + 6));
    }

    @Test
    void messagesCompleteInOrderIntoSuccessiveBuffers() {
        UntaggedQueue queue = new UntaggedQueue(0, 3);
        ReceiveBuffer a = receive(1, 8);
        ReceiveBuffer b = receive(2, 4, 4);
        ReceiveBuffer c = receive(3, 8);
        queue.post(a);
        queue.post(b);
        queue.post(c);
        assertSame(a, queue.place(1, 0, true, bytes(10, 3)).buffer());
        assertSame(b, queue.place(2, 0, false, bytes(20, 5)).buffer());
        assertSame(b, queue.place(2, 5, true, bytes(25, 3)).buffer());
        UntaggedQueue.Placement placement = queue.place(3, 0, true, bytes(30, 0));
        assertSame(c, placement.buffer());
        assertTrue(placement.completed());
        assertEquals(0, placement.messageLength(), "a zero-length message completes too");
        assertArrayEquals(expected(10, 3, 8), contents(a));
        assertArrayEquals(expected(20, 8, 8), contents(b));
        assertArrayEquals(expected(0, 0, 8), contents(c));
        assertEquals(4, queue.expectedMsn());
    }

    @Test
    void noBufferPosted() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.place(1, 0, true, bytes(0, 1)));
        queue.post(receive(1, 8));
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.place(2, 0, true, bytes(0, 1)));
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.place(1 + (1L << 31) - 1, 0, true, bytes(0, 1)));
        assertTrue(queue.place(1, 0, true, bytes(0, 1)).completed(), "an error changes nothing");
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.place(2, 0, true, bytes(0, 1)));
    }

    @Test
    void msnRange() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        queue.post(receive(1, 8));
        queue.post(receive(2, 8));
        // A later MSN whose buffer is posted, before the expected message completed: out of sequence.
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.place(2, 0, true, bytes(0, 1)));
        queue.place(1, 0, false, bytes(0, 2));
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.place(2, 0, true, bytes(0, 1)));
        queue.place(1, 2, true, bytes(2, 2));
        // MSN 1 completed: it lies before the expected MSN now.
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.place(1, 4, true, bytes(0, 1)));
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.place(0, 0, true, bytes(0, 1)));
        // 2^31 ahead counts as behind (serial arithmetic).
        assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                () -> queue.place(2 + (1L << 31), 0, true, bytes(0, 1)));
        assertTrue(queue.place(2, 0, true, bytes(0, 1)).completed());
    }

    @Test
    void invalidMo() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        ReceiveBuffer buffer = receive(1, 16);
        queue.post(buffer);
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.place(1, 1, false, bytes(0, 1)));
        queue.place(1, 0, false, bytes(0, 4));
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.place(1, 3, false, bytes(0, 1)), "overlap");
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.place(1, 5, false, bytes(0, 1)), "gap");
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.place(1, 17, true, bytes(0, 0)), "beyond the buffer");
        assertTerminate(TerminateLayer.DDP, 2, 0x04, TerminateError.DDP_UNTAGGED_INVALID_MO,
                () -> queue.place(1, MASK, true, bytes(0, 1)));
        assertEquals(4, buffer.bytesPlaced(), "errors place nothing");
        assertTrue(queue.place(1, 4, true, bytes(4, 1)).completed());
        assertArrayEquals(expected(0, 5, 16), contents(buffer));
    }

    @Test
    void messageTooLong() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        ReceiveBuffer buffer = receive(1, 3, 5);
        queue.post(buffer);
        assertTerminate(TerminateLayer.DDP, 2, 0x05, TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG,
                () -> queue.place(1, 0, true, bytes(0, 9)));
        queue.place(1, 0, false, bytes(0, 4));
        assertTerminate(TerminateLayer.DDP, 2, 0x05, TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG,
                () -> queue.place(1, 4, false, bytes(4, 5)));
        assertArrayEquals(expected(0, 4, 8), contents(buffer), "errors place nothing");
        UntaggedQueue.Placement placement = queue.place(1, 4, true, bytes(4, 4));
        assertEquals(8, placement.messageLength(), "exactly full");
        assertArrayEquals(expected(0, 8, 8), contents(buffer));
    }

    @Test
    void msnWrapsAt32Bits() {
        UntaggedQueue queue = new UntaggedQueue(0, 4, 0xFFFF_FFFEL);
        List<ReceiveBuffer> buffers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            buffers.add(receive(i, 4));
            queue.post(buffers.get(i));
        }
        long[] msns = {0xFFFF_FFFEL, 0xFFFF_FFFFL, 0, 1};
        for (int i = 0; i < 4; i++) {
            UntaggedQueue.Placement placement = queue.place(msns[i], 0, true, bytes(i, 2));
            assertTrue(placement.completed());
            assertSame(buffers.get(i), placement.buffer());
            assertEquals(msns[i], placement.msn());
            if (i == 1) {
                assertEquals(0, queue.expectedMsn(), "2^32 - 1 wraps to 0");
                queue.post(receive(9, 4));
                assertTerminate(TerminateLayer.DDP, 2, 0x03, TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                        () -> queue.place(0xFFFF_FFFFL, 0, true, bytes(0, 1)));
            }
        }
        assertEquals(2, queue.expectedMsn());
    }

    @Test
    void postRefusesBeyondMaxPosted() {
        UntaggedQueue queue = new UntaggedQueue(0, 2);
        assertTrue(queue.post(receive(1, 4)));
        assertTrue(queue.post(receive(2, 4)));
        assertFalse(queue.post(receive(3, 4)));
        assertEquals(2, queue.posted());
        queue.place(1, 0, true, bytes(0, 1));
        assertTrue(queue.post(receive(3, 4)));
        UntaggedQueue none = new UntaggedQueue(0, 0);
        assertFalse(none.post(receive(1, 4)));
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> none.place(1, 0, true, bytes(0, 0)));
    }

    @Test
    void queuesOnSharedReceivesTakeOnePerMessageOldestFirst() {
        java.util.ArrayDeque<ReceiveBuffer> posted = new java.util.ArrayDeque<>();
        SharedReceives shared = posted::pollFirst;
        UntaggedQueue first = new UntaggedQueue(0, shared);
        UntaggedQueue second = new UntaggedQueue(0, shared);
        ReceiveBuffer a = receive(1, 8);
        ReceiveBuffer b = receive(2, 8);
        ReceiveBuffer c = receive(3, 8);
        posted.addAll(List.of(a, b, c));
        // A message in two segments keeps its buffer; the other stream's message takes the next one.
        assertSame(a, first.place(1, 0, false, bytes(0, 4)).buffer());
        assertSame(b, second.place(1, 0, true, bytes(10, 3)).buffer());
        assertSame(a, first.place(1, 4, true, bytes(4, 4)).buffer());
        assertArrayEquals(expected(0, 8, 8), contents(a));
        assertArrayEquals(expected(10, 3, 8), contents(b));
        // An MSN other than the expected one takes nothing: c stays for the next message.
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> second.place(3, 0, true, bytes(0, 1)));
        assertEquals(1, posted.size());
        assertSame(c, second.place(2, 0, true, bytes(0, 1)).buffer());
        // None left: the expected MSN has no buffer, as on a queue with none posted.
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> first.place(2, 0, true, bytes(0, 1)));
        assertEquals(0, first.posted());
    }

    @Test
    void flushReturnsEveryPostedBufferOldestFirst() {
        UntaggedQueue queue = new UntaggedQueue(0, 4);
        ReceiveBuffer[] buffers = {receive(1, 4), receive(2, 4), receive(3, 4)};
        for (ReceiveBuffer buffer : buffers) {
            queue.post(buffer);
        }
        queue.place(1, 0, true, bytes(0, 1));
        queue.place(2, 0, false, bytes(0, 1));
        List<ReceiveBuffer> flushed = queue.flush();
        assertEquals(List.of(buffers[1], buffers[2]), flushed, "the partly filled one too");
        assertEquals(0, queue.posted());
        assertEquals(2, queue.expectedMsn());
        assertTerminate(TerminateLayer.DDP, 2, 0x02, TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER,
                () -> queue.place(2, 1, true, bytes(0, 1)));
        assertTrue(queue.flush().isEmpty());
        // A flushed buffer may be posted again, from scratch.
        assertTrue(queue.post(buffers[1]));
        assertEquals(0, buffers[1].bytesPlaced());
        assertTrue(queue.place(2, 0, true, bytes(5, 2)).completed());
        assertArrayEquals(expected(5, 2, 4), contents(buffers[1]));
    }

    @Test
    void scatterListIsTheSegmentsReadableRegionAtConstruction() {
        byte[] memory = new byte[12];
        Arrays.fill(memory, GUARD);
        ByteBuf segment = Unpooled.wrappedBuffer(memory).setIndex(2, 6);
        ReceiveBuffer buffer = new ReceiveBuffer(1, segment);
        segment.setIndex(0, 12); // later index changes do not move the region
        assertEquals(4, buffer.capacity());
        UntaggedQueue queue = new UntaggedQueue(0, 1);
        queue.post(buffer);
        queue.place(1, 0, true, bytes(1, 4));
        assertArrayEquals(new byte[] {GUARD, GUARD, 1, 2, 3, 4, GUARD, GUARD, GUARD, GUARD, GUARD, GUARD}, memory);
    }

    @Test
    void postsFromAnotherThreadWhilePlacing() throws Exception {
        postAndPlaceConcurrently(8, 20_000);
    }

    /**
     * The ring starts at 16 and doubles as posts outrun placement: each growth happens while the
     * placing thread reads the ring, and every buffer is still found at its MSN.
     */
    @Test
    void postsFromAnotherThreadWhileTheRingGrows() throws Exception {
        for (int round = 0; round < 40; round++) {
            postAndPlaceConcurrently(1024, 3000);
        }
    }

    private static void postAndPlaceConcurrently(int maxPosted, int messages) throws Exception {
        UntaggedQueue queue = new UntaggedQueue(0, maxPosted);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < messages; i++) {
                    ReceiveBuffer buffer = new ReceiveBuffer(i, Unpooled.wrappedBuffer(new byte[4]));
                    while (!queue.post(buffer)) {
                        Thread.onSpinWait();
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "poster");
        producer.setDaemon(true);
        producer.start();
        ByteBuf payload = Unpooled.buffer(4);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try {
            for (int i = 0; i < messages; i++) {
                while (queue.posted() == 0) {
                    Deadlines.check(deadline, "message " + i + " of " + messages + ": nothing posted within 60 s");
                    Thread.onSpinWait();
                }
                payload.clear().writeInt(i);
                UntaggedQueue.Placement placement = queue.place(1 + i, 0, true, payload);
                assertTrue(placement.completed());
                assertEquals(i, placement.buffer().workRequestId());
                assertEquals(i, placement.buffer().segments()[0].getInt(0));
            }
        } finally {
            payload.release();
        }
        Deadlines.join(producer, Duration.ofSeconds(60));
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, queue.posted());
        assertEquals(1 + messages, queue.expectedMsn());
    }

    /**
     * Random message sequences, cut by {@link DdpSegmenter} at a random MULPDU, parsed back with
     * {@link DdpHeaders} and placed: each message lands whole in its own buffer's scatter list and
     * completes on its last segment, and nothing outside the readable regions changes.
     */
    @Test
    void segmentedMessagesLandInTheirBuffers() {
        ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        int control = RdmapHeaders.controlByte(RdmapOpcode.SEND);
        Property.onShallowStack(() -> Property.forAll("segment -> place", Property.defaultCases() / 5,
                random -> {
                    int count = 1 + random.nextInt(6);
                    long initialMsn = random.nextInt(4) == 0 ? MASK - random.nextInt(4) : 1 + random.nextInt(100);
                    UntaggedQueue queue = new UntaggedQueue(0, count + random.nextInt(3), initialMsn);
                    byte[][] messages = new byte[count][];
                    ReceiveBuffer[] buffers = new ReceiveBuffer[count];
                    for (int i = 0; i < count; i++) {
                        int length = random.nextInt(8) == 0 ? random.nextInt(3000) : random.nextInt(300);
                        messages[i] = Property.bytes(random, length);
                        buffers[i] = receive(1000 + i, scatter(random, length + random.nextInt(3) * random.nextInt(20)));
                        assertTrue(queue.post(buffers[i]));
                    }
                    int mulpdu = DdpHeaders.UNTAGGED_HEADER_LENGTH + 1 + random.nextInt(random.nextBoolean() ? 40 : 1500);
                    List<ByteBuf> segments = new ArrayList<>();
                    for (int i = 0; i < count; i++) {
                        segments.clear();
                        long msn = (initialMsn + i) & MASK;
                        ByteBuf message = Unpooled.wrappedBuffer(messages[i]);
                        DdpSegmenter.segmentUntagged(alloc, control, 0, 0, msn, message, mulpdu, segments::add);
                        message.release();
                        try {
                            for (int s = 0; s < segments.size(); s++) {
                                ByteBuf ulpdu = segments.get(s);
                                assertEquals(msn, DdpHeaders.msn(ulpdu, 0));
                                ByteBuf payload = ulpdu.slice(DdpHeaders.UNTAGGED_HEADER_LENGTH,
                                        ulpdu.readableBytes() - DdpHeaders.UNTAGGED_HEADER_LENGTH);
                                boolean last = DdpHeaders.last(ulpdu, 0);
                                UntaggedQueue.Placement placement = queue.place(DdpHeaders.msn(ulpdu, 0),
                                        DdpHeaders.mo(ulpdu, 0), last, payload);
                                assertSame(buffers[i], placement.buffer());
                                assertEquals(s == segments.size() - 1, placement.completed());
                                if (placement.completed()) {
                                    assertEquals(messages[i].length, placement.messageLength());
                                }
                            }
                        } finally {
                            segments.forEach(ByteBuf::release);
                        }
                    }
                    assertEquals(0, queue.posted());
                    assertEquals((initialMsn + count) & MASK, queue.expectedMsn());
                    for (int i = 0; i < count; i++) {
                        byte[] landed = contents(buffers[i]);
                        byte[] want = Arrays.copyOf(messages[i], landed.length);
                        Arrays.fill(want, messages[i].length, want.length, GUARD);
                        assertArrayEquals(want, landed, "message " + i);
                    }
                }));
    }

    /** 1 to 4 segment lengths (some may be 0) adding up to {@code capacity}. */
    private static int[] scatter(SplittableRandom random, int capacity) {
        int[] lengths = new int[1 + random.nextInt(4)];
        int left = capacity;
        for (int i = 0; i < lengths.length - 1; i++) {
            lengths[i] = random.nextInt(left + 1);
            left -= lengths[i];
        }
        lengths[lengths.length - 1] = left;
        return lengths;
    }
}
