package org.jiwarp.wire.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** MPA Request and Reply frames (RFC 5044 section 7.1, RFC 6581 section 3). */
class MpaFramesTest {

    private static final byte[] REQUEST_KEY = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REPLY_KEY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);

    @Test
    void keysAreTheRfcStrings() {
        assertArrayEquals(REQUEST_KEY, MpaFrames.requestKey());
        assertArrayEquals(REPLY_KEY, MpaFrames.replyKey());
        byte[] copy = MpaFrames.requestKey();
        copy[0] = 0;
        assertArrayEquals(REQUEST_KEY, MpaFrames.requestKey(), "requestKey() must hand out a copy");
        assertNotSame(MpaFrames.replyKey(), MpaFrames.replyKey());
    }

    @Test
    void layoutConstants() {
        assertEquals(16, MpaFrames.KEY_LENGTH);
        assertEquals(16, MpaFrames.FLAGS_OFFSET);
        assertEquals(17, MpaFrames.REVISION_OFFSET);
        assertEquals(18, MpaFrames.PRIVATE_DATA_LENGTH_OFFSET);
        assertEquals(20, MpaFrames.PRIVATE_DATA_OFFSET);
        assertEquals(20, MpaFrames.HEADER_LENGTH);
        assertEquals(0x80, MpaFrames.MARKER_FLAG);
        assertEquals(0x40, MpaFrames.CRC_FLAG);
        assertEquals(0x20, MpaFrames.REJECT_FLAG);
        assertEquals(0x10, MpaFrames.ENHANCED_FLAG);
    }

    /** The siw 6.1 initiator's Request, byte for byte: Rev 2, Enhanced, IRD 1 / ORD 1. */
    @Test
    void siwRequestBytes() {
        ByteBuf out = Unpooled.buffer();
        ByteBuf pd = Unpooled.buffer(4);
        try {
            MpaEnhanced.write(pd, 1, 1, false, false, false, false);
            MpaFrames.write(out, false, MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, pd);
            assertEquals("4d504120494420526571204672616d65" + "1002" + "0004" + "00010001", ByteBufUtil.hexDump(out));
            assertEquals(4, pd.readableBytes(), "private data must not be consumed");
        } finally {
            out.release();
            pd.release();
        }
    }

    @Test
    void nullPrivateDataWritesZeroLength() {
        ByteBuf out = Unpooled.buffer();
        try {
            MpaFrames.write(out, true, MpaFrames.REJECT_FLAG, MpaFrames.REVISION_1, null);
            assertEquals(MpaFrames.HEADER_LENGTH, out.readableBytes());
            assertTrue(MpaFrames.isReply(out, 0));
            assertEquals(0, MpaFrames.privateDataLength(out, 0));
            assertEquals(MpaFrames.HEADER_LENGTH, MpaFrames.frameLength(out, 0));
            assertTrue(MpaFrames.rejectFlag(out, 0));
        } finally {
            out.release();
        }
    }

    @Test
    void roundTrip() {
        Property.forAll("mpa request/reply round trip", random -> {
            boolean reply = random.nextBoolean();
            int flags = random.nextInt(256);
            int revision = random.nextInt(256);
            byte[] privateData = Property.bytes(random, random.nextInt(MpaFrames.MAX_PRIVATE_DATA_LENGTH + 1));
            int offset = random.nextInt(8);
            ByteBuf pd = Unpooled.wrappedBuffer(privateData);
            ByteBuf out = Unpooled.buffer(offset + MpaFrames.HEADER_LENGTH + privateData.length);
            try {
                out.writeZero(offset);
                MpaFrames.write(out, reply, flags, revision, pd);
                assertEquals(privateData.length, pd.readableBytes(), "private data consumed");
                assertEquals(offset + MpaFrames.HEADER_LENGTH + privateData.length, out.writerIndex());

                assertEquals(!reply, MpaFrames.isRequest(out, offset));
                assertEquals(reply, MpaFrames.isReply(out, offset));
                byte[] key = new byte[16];
                out.getBytes(offset, key);
                assertArrayEquals(reply ? REPLY_KEY : REQUEST_KEY, key);
                assertEquals(flags, MpaFrames.flags(out, offset));
                assertEquals((flags & 0x80) != 0, MpaFrames.markerFlag(out, offset));
                assertEquals((flags & 0x40) != 0, MpaFrames.crcFlag(out, offset));
                assertEquals((flags & 0x20) != 0, MpaFrames.rejectFlag(out, offset));
                assertEquals((flags & 0x10) != 0, MpaFrames.enhancedFlag(out, offset));
                assertEquals(flags & 0x0F, MpaFrames.reserved(out, offset));
                assertEquals(revision, MpaFrames.revision(out, offset));
                assertEquals(privateData.length, MpaFrames.privateDataLength(out, offset));
                assertEquals(MpaFrames.HEADER_LENGTH + privateData.length, MpaFrames.frameLength(out, offset));
                byte[] read = new byte[privateData.length];
                out.getBytes(offset + MpaFrames.PRIVATE_DATA_OFFSET, read);
                assertArrayEquals(privateData, read);

                // Any single-bit change in the key: the frame is a Request or Reply only if the key
                // now spells one exactly ("Req" and "Rep" differ in one bit, so a flip can turn one
                // into the other).
                int keyByte = random.nextInt(16);
                int bit = 1 << random.nextInt(8);
                out.setByte(offset + keyByte, out.getByte(offset + keyByte) ^ bit);
                out.getBytes(offset, key);
                assertFalse(Arrays.equals(key, reply ? REPLY_KEY : REQUEST_KEY));
                assertEquals(Arrays.equals(key, REQUEST_KEY), MpaFrames.isRequest(out, offset));
                assertEquals(Arrays.equals(key, REPLY_KEY), MpaFrames.isReply(out, offset));
                // Replacing a whole key byte with any other value also breaks it.
                out.setByte(offset + keyByte, out.getByte(offset + keyByte) ^ bit);
                int other = (key[keyByte] ^ bit ^ (1 + random.nextInt(255))) & 0xFF;
                out.setByte(offset + keyByte, other);
                out.getBytes(offset, key);
                assertEquals(Arrays.equals(key, REQUEST_KEY), MpaFrames.isRequest(out, offset));
                assertEquals(Arrays.equals(key, REPLY_KEY), MpaFrames.isReply(out, offset));
            } finally {
                out.release();
                pd.release();
            }
        });
    }

    @Test
    void everySingleBitFlipOfEitherKey() {
        for (boolean reply : new boolean[] {false, true}) {
            ByteBuf out = Unpooled.buffer();
            try {
                MpaFrames.write(out, reply, 0, 1, null);
                for (int i = 0; i < 16; i++) {
                    for (int bit = 0; bit < 8; bit++) {
                        out.setByte(i, out.getByte(i) ^ (1 << bit));
                        byte[] key = ByteBufUtil.getBytes(out, 0, 16);
                        boolean nowRequest = Arrays.equals(key, REQUEST_KEY);
                        boolean nowReply = Arrays.equals(key, REPLY_KEY);
                        assertEquals(nowRequest, MpaFrames.isRequest(out, 0), "byte " + i + " bit " + bit);
                        assertEquals(nowReply, MpaFrames.isReply(out, 0), "byte " + i + " bit " + bit);
                        // Only byte 9 bit 0 ('q' 0x71 <-> 'p' 0x70) turns one key into the other.
                        assertEquals(i == 9 && bit == 0, nowRequest || nowReply);
                        out.setByte(i, out.getByte(i) ^ (1 << bit));
                    }
                }
                assertEquals(!reply, MpaFrames.isRequest(out, 0));
                assertEquals(reply, MpaFrames.isReply(out, 0));
            } finally {
                out.release();
            }
        }
    }
}
