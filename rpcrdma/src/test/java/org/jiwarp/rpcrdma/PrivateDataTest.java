package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.Test;

/** RFC 8797 section 4's private data, on the blocks Linux 6.1's xprtrdma and svcrdma send over siw. */
class PrivateDataTest {

    @Test
    void linuxClientsBlock() {
        byte[] bytes = ByteBufUtil.decodeHexDump("f6ab0e1801010303");
        PrivateData p = PrivateData.decode(bytes);
        assertEquals(new PrivateData(1, true, 4096, 4096), p);
        assertArrayEquals(bytes, p.encode());
    }

    @Test
    void linuxServersBlockOffersNoRemoteInvalidationOfItsOwn() {
        PrivateData p = PrivateData.decode(ByteBufUtil.decodeHexDump("f6ab0e1801000303"));
        assertEquals(new PrivateData(1, false, 4096, 4096), p);
    }

    @Test
    void sizesAreKibMinusOne() {
        assertArrayEquals(ByteBufUtil.decodeHexDump("f6ab0e180101ff00"), new PrivateData(1, true, 256 * 1024, 1024).encode());
        assertThrows(IllegalArgumentException.class, () -> new PrivateData(1, true, 1000, 4096));
    }

    /** RFC 8797 section 5.1: a peer with no private data is held to version 1's 1 KiB (RFC 8166 section 3.3.3). */
    @Test
    void aPeerWithoutPrivateDataGetsOneKib() {
        assertEquals(1024, PrivateData.sendThreshold(PrivateData.DEFAULT_INLINE, null));
        assertEquals(4096, PrivateData.sendThreshold(PrivateData.DEFAULT_INLINE, new PrivateData(1, true, 4096, 8192)));
        assertEquals(2048, PrivateData.sendThreshold(8192, new PrivateData(1, true, 4096, 2048)));
    }

    @Test
    void otherPrivateDataMeansDefaults() {
        assertNull(PrivateData.decode(new byte[0]));
        assertNull(PrivateData.decode(ByteBufUtil.decodeHexDump("0000000001010303")));
        assertNull(PrivateData.decode(ByteBufUtil.decodeHexDump("f6ab0e18")));
    }
}
