package org.jiwarp.wire.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** The RDMA Read Request header (RFC 5040 section 4.4). */
class ReadRequestHeaderTest {

    private static final long[] SIZES = {0, 1, 0x7FFF_FFFFL, 0x8000_0000L, 0xFFFF_FFFEL, 0xFFFF_FFFFL};
    private static final long[] OFFSETS = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL};

    private static long anySize(SplittableRandom random) {
        return random.nextInt(4) == 0 ? SIZES[random.nextInt(SIZES.length)] : random.nextLong(0x1_0000_0000L);
    }

    private static long anyOffset(SplittableRandom random) {
        return random.nextInt(4) == 0 ? OFFSETS[random.nextInt(OFFSETS.length)] : random.nextLong();
    }

    @Test
    void layout() {
        assertEquals(28, ReadRequestHeader.LENGTH);
        ByteBuf out = Unpooled.buffer(28);
        try {
            ReadRequestHeader.write(out, 0x11223344, 0x0102030405060708L, 0xFFFFFFFFL, 0x55667788,
                    0x1112131415161718L);
            assertEquals("11223344" + "0102030405060708" + "ffffffff" + "55667788" + "1112131415161718",
                    ByteBufUtil.hexDump(out));
        } finally {
            out.release();
        }
    }

    @Test
    void roundTrip() {
        Property.forAll("read request header round trip", random -> {
            int sinkStag = random.nextInt();
            long sinkTo = anyOffset(random);
            long readSize = anySize(random);
            int sourceStag = random.nextInt();
            long sourceTo = anyOffset(random);
            int offset = random.nextInt(32);
            ByteBuf out = Unpooled.buffer(offset + 28 + 2);
            try {
                out.writeZero(offset);
                ReadRequestHeader.write(out, sinkStag, sinkTo, readSize, sourceStag, sourceTo);
                assertEquals(offset + ReadRequestHeader.LENGTH, out.writerIndex());
                out.writeShort(0x7E7E);
                assertEquals(sinkStag, ReadRequestHeader.sinkStag(out, offset));
                assertEquals(sinkTo, ReadRequestHeader.sinkTaggedOffset(out, offset));
                assertEquals(readSize, ReadRequestHeader.readSize(out, offset));
                assertEquals(sourceStag, ReadRequestHeader.sourceStag(out, offset));
                assertEquals(sourceTo, ReadRequestHeader.sourceTaggedOffset(out, offset));
                assertEquals(0x7E7E, out.getUnsignedShort(offset + 28));
            } finally {
                out.release();
            }
        });
    }
}
