package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** RFC 7306 atomic operations, their masked forms, and the Atomic Request and Response headers. */
class AtomicOperationTest {

    @Test
    void maskedForms() {
        // Fetch and Add: Add Mask 0 is a 64-bit add (wrapping); a set bit ends a field and drops its carry.
        assertEquals(42, AtomicOperation.FETCH_ADD.apply(40, 2, 0, 0, 0));
        assertEquals(0, AtomicOperation.FETCH_ADD.apply(-1L, 1, 0, 0, 0));
        assertEquals(0x0000_0002_0000_0000L, AtomicOperation.FETCH_ADD.apply(0x0000_0001_FFFF_FFFFL,
                0x0000_0001_0000_0001L, 0x8000_0000_8000_0000L, 0, 0));
        assertEquals(0x0000_FF00L, AtomicOperation.FETCH_ADD.apply(0x0000_FFFFL, 0x01, 0x80, 0, 0),
                "the low byte wraps alone: FF+1 = 00, its carry dropped at bit 7");
        // Compare Mask 0 always matches: a swap; the Swap Mask selects the bits written.
        assertEquals(7, AtomicOperation.COMPARE_SWAP.apply(0x1234, 7, -1L, 0, 0));
        assertEquals(0xAB34, AtomicOperation.COMPARE_SWAP.apply(0x1234, 0xABCD, 0xFF00, 99, 0));
        // Compare and Swap: only when the compared bits match.
        assertEquals(99, AtomicOperation.COMPARE_SWAP.apply(5, 99, -1L, 5, -1L));
        assertEquals(5, AtomicOperation.COMPARE_SWAP.apply(5, 99, -1L, 6, -1L));
        assertEquals(0x1200_0063L, AtomicOperation.COMPARE_SWAP.apply(0x63, 0x1200_0000L, 0xFFFF_0000L, 0x4463,
                0xFF), "compares the low byte only, writes the masked bits only");
        assertEquals(0x63, AtomicOperation.COMPARE_SWAP.apply(0x63, 0x1200_0000L, 0xFFFF_0000L, 0x4464, 0xFF));
        assertNull(AtomicOperation.valueOf(1), "RFC 7306 section 10.1: subcode 1 is reserved");
        assertNull(AtomicOperation.valueOf(3));
        assertEquals(AtomicOperation.COMPARE_SWAP, AtomicOperation.valueOf(2));
    }

    /** Masked add is, field by field, an add modulo the field's width. */
    @Test
    void maskedAddIsAnAddPerField() {
        Property.forAll("masked fetch-and-add adds each field alone", 2000, random -> {
            long a = random.nextLong();
            long b = random.nextLong();
            int split = 1 + random.nextInt(62);
            long fieldEnds = 1L << (split - 1) | 1L << 63;
            long lowMask = (1L << split) - 1;
            long sum = AtomicOperation.FETCH_ADD.apply(a, b, fieldEnds, 0, 0);
            assertEquals((a + b) & lowMask, sum & lowMask, "low field");
            assertEquals(((a >>> split) + (b >>> split)) << split, sum & ~lowMask, "high field");
        });
    }

    @Test
    void headersRoundTrip() {
        ByteBuf buf = Unpooled.buffer();
        try {
            AtomicRequestHeader.write(buf, 2, 0xCAFE_F00D, 0x0001_2301, 0x7F00_0000_0008L, 1, 2, 3, 4);
            assertEquals(AtomicRequestHeader.LENGTH, buf.readableBytes());
            assertEquals(2, AtomicRequestHeader.operationCode(buf, 0));
            assertEquals(0, AtomicRequestHeader.reserved(buf, 0));
            assertEquals(0xCAFE_F00D, AtomicRequestHeader.requestIdentifier(buf, 0));
            assertEquals(0x0001_2301, AtomicRequestHeader.remoteStag(buf, 0));
            assertEquals(0x7F00_0000_0008L, AtomicRequestHeader.remoteTaggedOffset(buf, 0));
            assertEquals(1, AtomicRequestHeader.data(buf, 0));
            assertEquals(2, AtomicRequestHeader.dataMask(buf, 0));
            assertEquals(3, AtomicRequestHeader.compareData(buf, 0));
            assertEquals(4, AtomicRequestHeader.compareMask(buf, 0));
            buf.clear();
            AtomicResponseHeader.write(buf, 7, -2L);
            assertEquals(AtomicResponseHeader.LENGTH, buf.readableBytes());
            assertEquals(7, AtomicResponseHeader.originalRequestIdentifier(buf, 0));
            assertEquals(-2L, AtomicResponseHeader.originalRemoteDataValue(buf, 0));
        } finally {
            buf.release();
        }
    }
}
