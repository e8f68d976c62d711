package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link UlpduSink} for tests: asks for a header whose length the ULPDU's first octet decides (1 to
 * 32 octets, so some ULPDUs are shorter than the header asked for), streams the payload of the
 * ULPDUs whose header's first octet has bit 0x20 clear and takes the others whole, checks the order
 * of the calls, and records each ULPDU (header and pieces joined) once it ends.
 */
final class RecordingSink implements UlpduSink {

    final List<byte[]> ulpdus = new ArrayList<>();
    /** Payload pieces received, over all ULPDUs (a streamed FPDU cut by reads or markers gives several). */
    int pieces;
    int streamed;
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();
    private boolean inStream;
    private int expectedLength;

    @Override
    public int headerLength(int firstOctet) {
        assertFalse(inStream, "a header while a streamed ULPDU is open");
        return 1 + (firstOctet & 0x1F);
    }

    @Override
    public boolean begin(ByteBuf header, int ulpduLength) {
        assertFalse(inStream, "begin while a streamed ULPDU is open");
        assertEquals(headerLength(header.getUnsignedByte(header.readerIndex())), header.readableBytes());
        current.reset();
        current.writeBytes(ByteBufUtil.getBytes(header));
        expectedLength = ulpduLength;
        boolean stream = (header.getByte(header.readerIndex()) & 0x20) == 0;
        inStream = stream;
        return stream;
    }

    @Override
    public void payload(ByteBuf source, int index, int length) {
        assertTrue(inStream, "payload outside a streamed ULPDU");
        assertTrue(length > 0, "an empty piece");
        current.writeBytes(ByteBufUtil.getBytes(source, index, length));
        pieces++;
    }

    @Override
    public void end() {
        assertTrue(inStream, "end outside a streamed ULPDU");
        inStream = false;
        byte[] ulpdu = current.toByteArray();
        assertEquals(expectedLength, ulpdu.length, "streamed ULPDU length");
        ulpdus.add(ulpdu);
        streamed++;
    }

    @Override
    public void whole(ByteBuf ulpdu) {
        assertFalse(inStream, "a whole ULPDU while a streamed one is open");
        ulpdus.add(ByteBufUtil.getBytes(ulpdu));
    }
}
