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
 * 32 octets, so some ULPDUs are shorter than the header asked for, and some ask for less than the
 * two octets the deframer always gives), checks the order of the calls and the header's length, and
 * records each ULPDU (header and pieces joined) once it ends.
 */
final class RecordingSink implements UlpduSink {

    final List<byte[]> ulpdus = new ArrayList<>();
    /** Payload pieces received, over all ULPDUs (an FPDU cut by reads or markers gives several). */
    int pieces;
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();
    private boolean inUlpdu;
    private int expectedLength;

    @Override
    public int headerLength(int ddpControl, int rdmapControl, int ulpduLength) {
        assertFalse(inUlpdu, "a header while a ULPDU is open");
        return asked(ddpControl);
    }

    private static int asked(int firstOctet) {
        return 1 + (firstOctet & 0x1F);
    }

    @Override
    public void begin(ByteBuf header, int ulpduLength) {
        assertFalse(inUlpdu, "begin while a ULPDU is open");
        int expectedHeader = ulpduLength < 2 ? ulpduLength
                : Math.max(2, Math.min(ulpduLength, asked(header.getUnsignedByte(header.readerIndex()))));
        assertEquals(expectedHeader, header.readableBytes(), "header length");
        current.reset();
        current.writeBytes(ByteBufUtil.getBytes(header));
        expectedLength = ulpduLength;
        inUlpdu = true;
    }

    @Override
    public void payload(ByteBuf source, int index, int length) {
        assertTrue(inUlpdu, "payload outside a ULPDU");
        assertTrue(length > 0, "an empty piece");
        current.writeBytes(ByteBufUtil.getBytes(source, index, length));
        pieces++;
    }

    @Override
    public void end() {
        assertTrue(inUlpdu, "end outside a ULPDU");
        inUlpdu = false;
        byte[] ulpdu = current.toByteArray();
        assertEquals(expectedLength, ulpdu.length, "ULPDU length");
        ulpdus.add(ulpdu);
    }
}
