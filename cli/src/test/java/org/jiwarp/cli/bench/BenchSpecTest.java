package org.jiwarp.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/** The bench's private-data messages round-trip, refuse foreign bytes, and the data check finds corruption. */
class BenchSpecTest {

    @Test
    void specsRoundTripThroughPrivateData() {
        Property.forAll("bench spec round trip", random -> {
            BenchSpec spec = new BenchSpec(BenchOp.values()[random.nextInt(3)], BenchMode.values()[random.nextInt(2)],
                    1 + random.nextInt(1 << 23), 1 + random.nextInt(4096), 1 + random.nextInt(200), random.nextLong(),
                    random.nextInt());
            assertEquals(spec, BenchSpec.decode(spec.encode()));
        });
    }

    @Test
    void foreignPrivateDataIsRefusedClearly() {
        assertThrows(IllegalArgumentException.class, () -> BenchSpec.decode(new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> BenchSpec.decode("rping! not a bench request".getBytes()));
        byte[] bad = new BenchSpec(BenchOp.SEND, BenchMode.BW, 10, 1, 1, 0, 0).encode();
        bad[4] = 9;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BenchSpec.decode(bad));
        assertTrue(e.getMessage().contains("unknown bench operation"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> BenchSpec.decodeBuffer(new byte[3]));
    }

    @Test
    void thePatternCheckFindsAnyCorruptOctet() {
        ByteBuf buffer = Unpooled.buffer(4096);
        try {
            BenchPattern.fill(buffer, 0, 4096);
            assertEquals(-1, BenchPattern.firstMismatch(buffer, 0, 4096));
            Property.forAll("one flipped octet is found", 1000, random -> {
                int at = random.nextInt(4096);
                buffer.setByte(at, buffer.getByte(at) ^ (1 << random.nextInt(8)));
                assertEquals(at, BenchPattern.firstMismatch(buffer, 0, 4096));
                BenchPattern.fill(buffer, 0, 4096);
            });
        } finally {
            buffer.release();
        }
    }
}
