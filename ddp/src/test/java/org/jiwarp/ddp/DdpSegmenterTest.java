package org.jiwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.Test;

class DdpSegmenterTest {

    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final int WRITE = RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE);
    private static final int SEND_INV = RdmapHeaders.controlByte(RdmapOpcode.SEND_WITH_INVALIDATE);
    private static final int STAG = 0x1234_5601;
    private static final long TO = 0x0000_7F00_DEAD_0000L;

    /** A message of {@code length} octets behind {@code prefix} octets already read. */
    private static ByteBuf message(SplittableRandom random, int prefix, int length) {
        ByteBuf message = ALLOC.buffer(prefix + length);
        message.writeBytes(Property.bytes(random, prefix + length));
        message.readerIndex(prefix);
        return message;
    }

    private static List<ByteBuf> tagged(ByteBuf message, int mulpdu) {
        List<ByteBuf> out = new ArrayList<>();
        DdpSegmenter.segmentTagged(ALLOC, WRITE, STAG, TO, message, mulpdu, out::add);
        return out;
    }

    private static List<ByteBuf> untagged(ByteBuf message, long msn, int mulpdu) {
        List<ByteBuf> out = new ArrayList<>();
        DdpSegmenter.segmentUntagged(ALLOC, SEND_INV, STAG, DdpHeaders.QN_SEND, msn, message, mulpdu, out::add);
        return out;
    }

    private static void release(List<ByteBuf> segments) {
        segments.forEach(ByteBuf::release);
    }

    /** Checks every tagged header and returns the payloads, concatenated. */
    private static byte[] checkTagged(List<ByteBuf> segments, int mulpdu, long to, int stag, int control) {
        ByteBuf all = ALLOC.heapBuffer();
        try {
            for (int i = 0; i < segments.size(); i++) {
                ByteBuf ulpdu = segments.get(i);
                assertInstanceOf(CompositeByteBuf.class, ulpdu);
                assertTrue(ulpdu.readableBytes() <= mulpdu, "segment " + i + " exceeds MULPDU");
                assertTrue(ulpdu.readableBytes() >= DdpHeaders.TAGGED_HEADER_LENGTH);
                int at = ulpdu.readerIndex();
                assertTrue(DdpHeaders.tagged(ulpdu, at));
                assertEquals(i == segments.size() - 1, DdpHeaders.last(ulpdu, at), "L only on the last");
                assertEquals(DdpHeaders.DDP_VERSION, DdpHeaders.version(ulpdu, at));
                assertEquals(0, DdpHeaders.reserved(ulpdu, at));
                assertEquals(control, RdmapHeaders.control(ulpdu, at));
                assertEquals(stag, DdpHeaders.stag(ulpdu, at));
                assertEquals(to + all.readableBytes(), DdpHeaders.taggedOffset(ulpdu, at), "TO advances");
                if (i < segments.size() - 1) {
                    assertEquals(mulpdu, ulpdu.readableBytes(), "all but the last are full");
                }
                all.writeBytes(ulpdu, at + DdpHeaders.TAGGED_HEADER_LENGTH,
                        ulpdu.readableBytes() - DdpHeaders.TAGGED_HEADER_LENGTH);
            }
            byte[] bytes = new byte[all.readableBytes()];
            all.readBytes(bytes);
            return bytes;
        } finally {
            all.release();
        }
    }

    /** Checks every untagged header and returns the payloads, concatenated. */
    private static byte[] checkUntagged(List<ByteBuf> segments, int mulpdu, long msn, int invalidateStag) {
        ByteBuf all = ALLOC.heapBuffer();
        try {
            for (int i = 0; i < segments.size(); i++) {
                ByteBuf ulpdu = segments.get(i);
                assertInstanceOf(CompositeByteBuf.class, ulpdu);
                assertTrue(ulpdu.readableBytes() <= mulpdu, "segment " + i + " exceeds MULPDU");
                int at = ulpdu.readerIndex();
                assertFalse(DdpHeaders.tagged(ulpdu, at));
                assertEquals(i == segments.size() - 1, DdpHeaders.last(ulpdu, at), "L only on the last");
                assertEquals(DdpHeaders.DDP_VERSION, DdpHeaders.version(ulpdu, at));
                assertEquals(0, DdpHeaders.reserved(ulpdu, at));
                assertEquals(SEND_INV, RdmapHeaders.control(ulpdu, at));
                assertEquals(invalidateStag, RdmapHeaders.invalidateStag(ulpdu, at));
                assertEquals(DdpHeaders.QN_SEND, DdpHeaders.qn(ulpdu, at));
                assertEquals(msn, DdpHeaders.msn(ulpdu, at), "the same MSN on every segment");
                assertEquals(all.readableBytes(), DdpHeaders.mo(ulpdu, at), "MO advances");
                if (i < segments.size() - 1) {
                    assertEquals(mulpdu, ulpdu.readableBytes(), "all but the last are full");
                }
                all.writeBytes(ulpdu, at + DdpHeaders.UNTAGGED_HEADER_LENGTH,
                        ulpdu.readableBytes() - DdpHeaders.UNTAGGED_HEADER_LENGTH);
            }
            byte[] bytes = new byte[all.readableBytes()];
            all.readBytes(bytes);
            return bytes;
        } finally {
            all.release();
        }
    }

    private static byte[] readable(ByteBuf message) {
        byte[] bytes = new byte[message.readableBytes()];
        message.getBytes(message.readerIndex(), bytes);
        return bytes;
    }

    @Test
    void taggedMessageSegmentsReassemble() {
        ByteBuf message = message(new SplittableRandom(1), 7, 1000);
        List<ByteBuf> segments = tagged(message, 114);
        try {
            assertEquals(10, segments.size());
            assertEquals(DdpSegmenter.segmentCount(1000, 114, true), segments.size());
            assertArrayEquals(readable(message), checkTagged(segments, 114, TO, STAG, WRITE));
            assertEquals(7, message.readerIndex(), "the message is not consumed");
            assertEquals(1007, message.writerIndex());
        } finally {
            release(segments);
            message.release();
        }
    }

    @Test
    void untaggedMessageSegmentsReassemble() {
        ByteBuf message = message(new SplittableRandom(2), 3, 250);
        List<ByteBuf> segments = untagged(message, 0xFFFF_FFFFL, 118);
        try {
            assertEquals(3, segments.size(), "100 + 100 + 50");
            assertEquals(68, segments.get(2).readableBytes());
            assertArrayEquals(readable(message), checkUntagged(segments, 118, 0xFFFF_FFFFL, STAG));
            assertEquals(3, message.readerIndex());
        } finally {
            release(segments);
            message.release();
        }
    }

    @Test
    void exactMultipleHasNoEmptyTrailingSegment() {
        ByteBuf message = message(new SplittableRandom(3), 0, 200);
        List<ByteBuf> tagged = tagged(message, 114);
        List<ByteBuf> untagged = untagged(message, 5, 118);
        try {
            assertEquals(2, tagged.size());
            assertEquals(2, untagged.size());
            assertTrue(DdpHeaders.last(tagged.get(1), 0));
            assertEquals(114, tagged.get(1).readableBytes());
        } finally {
            release(tagged);
            release(untagged);
            message.release();
        }
    }

    @Test
    void zeroLengthMessageIsOneSegmentWithL() {
        ByteBuf message = ALLOC.buffer(0);
        List<ByteBuf> tagged = tagged(message, 114);
        List<ByteBuf> untagged = untagged(message, 9, 118);
        try {
            assertEquals(1, tagged.size());
            assertEquals(DdpHeaders.TAGGED_HEADER_LENGTH, tagged.get(0).readableBytes());
            assertTrue(DdpHeaders.last(tagged.get(0), 0));
            assertEquals(TO, DdpHeaders.taggedOffset(tagged.get(0), 0));
            assertEquals(1, untagged.size());
            assertEquals(DdpHeaders.UNTAGGED_HEADER_LENGTH, untagged.get(0).readableBytes());
            assertTrue(DdpHeaders.last(untagged.get(0), 0));
            assertEquals(0, DdpHeaders.mo(untagged.get(0), 0));
            assertEquals(9, DdpHeaders.msn(untagged.get(0), 0));
            assertEquals(1, DdpSegmenter.segmentCount(0, 114, true));
            assertEquals(1, message.refCnt(), "no slice of an empty message");
        } finally {
            release(tagged);
            release(untagged);
            message.release();
        }
    }

    @Test
    void segmentsShareTheMessagesMemory() {
        ByteBuf message = message(new SplittableRandom(4), 5, 300);
        List<ByteBuf> segments = tagged(message, 114);
        try {
            assertEquals(1 + segments.size(), message.refCnt(), "one retained slice per segment");
            // Change the message after segmenting: the segments see it, so nothing was copied.
            message.setByte(5, 0x11);
            message.setByte(5 + 150, 0x22);
            message.setByte(5 + 299, 0x33);
            assertEquals(0x11, segments.get(0).getByte(DdpHeaders.TAGGED_HEADER_LENGTH));
            assertEquals(0x22, segments.get(1).getByte(DdpHeaders.TAGGED_HEADER_LENGTH + 50));
            assertEquals(0x33, segments.get(2).getByte(DdpHeaders.TAGGED_HEADER_LENGTH + 99));
        } finally {
            release(segments);
        }
        assertEquals(1, message.refCnt(), "releasing the segments gives the references back");
        message.release();
    }

    @Test
    void segmentsOutliveTheCallersReference() {
        ByteBuf message = message(new SplittableRandom(5), 0, 100);
        byte[] expected = readable(message);
        List<ByteBuf> segments = untagged(message, 1, 60);
        message.release();
        try {
            assertArrayEquals(expected, checkUntagged(segments, 60, 1, STAG));
        } finally {
            release(segments);
        }
    }

    @Test
    void mulpduMustLeaveRoomForPayload() {
        ByteBuf message = message(new SplittableRandom(6), 0, 10);
        try {
            assertThrows(IllegalArgumentException.class, () -> tagged(message, DdpHeaders.TAGGED_HEADER_LENGTH));
            assertThrows(IllegalArgumentException.class,
                    () -> untagged(message, 1, DdpHeaders.UNTAGGED_HEADER_LENGTH));
            assertEquals(1, message.refCnt());
            List<ByteBuf> smallest = tagged(message, DdpHeaders.TAGGED_HEADER_LENGTH + 1);
            assertEquals(10, smallest.size(), "one payload octet per segment");
            release(smallest);
        } finally {
            message.release();
        }
    }

    @Test
    void taggedOffsetWrapsLikeTheWire() {
        ByteBuf message = message(new SplittableRandom(7), 0, 20);
        List<ByteBuf> out = new ArrayList<>();
        DdpSegmenter.segmentTagged(ALLOC, WRITE, STAG, -10L, message, DdpHeaders.TAGGED_HEADER_LENGTH + 10, out::add);
        try {
            assertEquals(-10L, DdpHeaders.taggedOffset(out.get(0), 0));
            assertEquals(0L, DdpHeaders.taggedOffset(out.get(1), 0), "the segmenter writes what it is given");
        } finally {
            release(out);
            message.release();
        }
    }

    @Test
    void randomMessagesAndMulpdus() {
        Property.onShallowStack(() -> Property.forAll("segment -> reassemble", Property.defaultCases() / 5,
                random -> {
                    int length = random.nextInt(8) == 0 ? random.nextInt(8_000) : random.nextInt(600);
                    ByteBuf message = message(random, random.nextInt(4), length);
                    boolean taggedModel = random.nextBoolean();
                    int header = taggedModel ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH;
                    int mulpdu = header + 1 + random.nextInt(random.nextBoolean() ? 64 : 2000);
                    long to = random.nextLong();
                    long msn = random.nextLong() & 0xFFFF_FFFFL;
                    List<ByteBuf> segments = new ArrayList<>();
                    try {
                        if (taggedModel) {
                            DdpSegmenter.segmentTagged(ALLOC, WRITE, STAG, to, message, mulpdu, segments::add);
                            assertArrayEquals(readable(message), checkTagged(segments, mulpdu, to, STAG, WRITE));
                        } else {
                            DdpSegmenter.segmentUntagged(ALLOC, SEND_INV, STAG, DdpHeaders.QN_SEND, msn, message,
                                    mulpdu, segments::add);
                            assertArrayEquals(readable(message), checkUntagged(segments, mulpdu, msn, STAG));
                        }
                        assertEquals(DdpSegmenter.segmentCount(length, mulpdu, taggedModel), segments.size());
                    } finally {
                        release(segments);
                        message.release();
                    }
                }));
    }
}
