package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** The RFC 6581 section 3 IRD/ORD words. */
class MpaEnhancedTest {

    @Test
    void bitLayout() {
        ByteBuf out = Unpooled.buffer(4);
        try {
            MpaEnhanced.write(out, 0x3FFF, 0, true, false, false, false);
            assertEquals("bfff0000", ByteBufUtil.hexDump(out));
            out.clear();
            MpaEnhanced.write(out, 0, 0, false, true, false, false);
            assertEquals("40000000", ByteBufUtil.hexDump(out));
            out.clear();
            MpaEnhanced.write(out, 0, 0x3FFF, false, false, true, false);
            assertEquals("0000bfff", ByteBufUtil.hexDump(out));
            out.clear();
            MpaEnhanced.write(out, 0, 0, false, false, false, true);
            assertEquals("00004000", ByteBufUtil.hexDump(out));
            out.clear();
            // siw's perftest ib_read_bw values.
            MpaEnhanced.write(out, 128, 128, false, false, false, false);
            assertEquals("00800080", ByteBufUtil.hexDump(out));
        } finally {
            out.release();
        }
    }

    @Test
    void roundTrip() {
        Property.forAll("enhanced IRD/ORD round trip", random -> {
            int ird = random.nextInt(0x4000);
            int ord = random.nextInt(0x4000);
            boolean p2p = random.nextBoolean();
            boolean sendRtr = random.nextBoolean();
            boolean writeRtr = random.nextBoolean();
            boolean readRtr = random.nextBoolean();
            int offset = random.nextInt(24);
            ByteBuf out = Unpooled.buffer(offset + 4);
            try {
                out.writeZero(offset);
                MpaEnhanced.write(out, ird, ord, p2p, sendRtr, writeRtr, readRtr);
                assertEquals(offset + MpaEnhanced.LENGTH, out.writerIndex());
                assertEquals(ird, MpaEnhanced.ird(out, offset));
                assertEquals(ord, MpaEnhanced.ord(out, offset));
                assertEquals(p2p, MpaEnhanced.peerToPeer(out, offset));
                assertEquals(sendRtr, MpaEnhanced.sendRtr(out, offset));
                assertEquals(writeRtr, MpaEnhanced.writeRtr(out, offset));
                assertEquals(readRtr, MpaEnhanced.readRtr(out, offset));
                assertEquals((p2p ? 0x8000 : 0) | (sendRtr ? 0x4000 : 0) | ird, MpaEnhanced.irdWord(out, offset));
                assertEquals((writeRtr ? 0x8000 : 0) | (readRtr ? 0x4000 : 0) | ord, MpaEnhanced.ordWord(out, offset));
            } finally {
                out.release();
            }
        });
    }

    @Test
    void negativeValuesClampToZeroWithoutSettingFlags() {
        ByteBuf out = Unpooled.buffer(4);
        try {
            MpaEnhanced.write(out, -1, Integer.MIN_VALUE, false, false, false, false);
            assertEquals("00000000", io.netty.buffer.ByteBufUtil.hexDump(out));
        } finally {
            out.release();
        }
    }

    @Test
    void valuesAbove14BitsAreClampedWithoutTouchingFlags() {
        Property.forAll("enhanced IRD/ORD clamp", random -> {
            int ird = 0x4000 + random.nextInt(random.nextBoolean() ? 0xC000 : Integer.MAX_VALUE - 0x4000);
            int ord = 0x4000 + random.nextInt(random.nextBoolean() ? 0xC000 : Integer.MAX_VALUE - 0x4000);
            boolean p2p = random.nextBoolean();
            boolean sendRtr = random.nextBoolean();
            boolean writeRtr = random.nextBoolean();
            boolean readRtr = random.nextBoolean();
            ByteBuf out = Unpooled.buffer(4);
            try {
                MpaEnhanced.write(out, ird, ord, p2p, sendRtr, writeRtr, readRtr);
                assertEquals(4, out.writerIndex());
                assertEquals(0x3FFF, MpaEnhanced.ird(out, 0));
                assertEquals(0x3FFF, MpaEnhanced.ord(out, 0));
                assertEquals(p2p, MpaEnhanced.peerToPeer(out, 0));
                assertEquals(sendRtr, MpaEnhanced.sendRtr(out, 0));
                assertEquals(writeRtr, MpaEnhanced.writeRtr(out, 0));
                assertEquals(readRtr, MpaEnhanced.readRtr(out, 0));
            } finally {
                out.release();
            }
        });
    }

    @Test
    void insideAnMpaFrame() {
        ByteBuf pd = Unpooled.buffer();
        ByteBuf frame = Unpooled.buffer();
        try {
            MpaEnhanced.write(pd, 7, 9, true, false, true, false);
            pd.writeBytes(new byte[] {1, 2, 3});
            MpaFrames.write(frame, true, MpaFrames.ENHANCED_FLAG | MpaFrames.CRC_FLAG, MpaFrames.REVISION_2, pd);
            int at = MpaFrames.PRIVATE_DATA_OFFSET;
            assertEquals(7, MpaFrames.privateDataLength(frame, 0));
            assertEquals(7, MpaEnhanced.ird(frame, at));
            assertEquals(9, MpaEnhanced.ord(frame, at));
            assertEquals(true, MpaEnhanced.peerToPeer(frame, at));
            assertEquals(true, MpaEnhanced.writeRtr(frame, at));
            assertEquals(false, MpaEnhanced.readRtr(frame, at));
            assertEquals(false, MpaEnhanced.sendRtr(frame, at));
            assertEquals(3, frame.getByte(at + MpaEnhanced.LENGTH + 2));
        } finally {
            pd.release();
            frame.release();
        }
    }
}
