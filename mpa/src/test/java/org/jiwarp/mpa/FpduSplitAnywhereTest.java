package org.jiwarp.mpa;

import static org.jiwarp.mpa.FpduDeframerTest.assertUlpdus;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.SplittableRandom;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

/**
 * The split-anywhere property: ULPDUs framed by {@link FpduFramer} and fed to {@link FpduDeframer}
 * in any segmentation come out unchanged, with CRC and markers on and off.
 *
 * <p>Every case ({@code -Djiwarp.cases}, 10 000 by default) frames a random ULPDU sequence through an
 * {@link EmbeddedChannel}'s outbound side, checks the octets against the copying FpduWriter, and
 * deframes them in random splits; one case in 8 also deframes them one octet at a time (those cases
 * use short sequences, so that the paranoid leak detector's per-access tracing keeps the class well
 * under a minute). Half the cases deframe in streaming mode, into a {@link RecordingSink} (header
 * first, payload pieces straight from each chunk, the end once CRC and markers are checked), the
 * others up the pipeline. The cases run on a thread of their own (see
 * {@link org.jiwarp.testing.Property#onShallowStack}).
 */
class FpduSplitAnywhereTest {

    @Test
    void ulpdusSurviveAnySegmentation() {
        Property.onShallowStack(() -> Property.forAll("FpduFramer -> any split -> FpduDeframer", random -> {
            boolean crc = random.nextBoolean();
            boolean markers = random.nextBoolean();
            boolean oneOctetSplits = random.nextInt(8) == 0;
            byte[][] ulpdus = oneOctetSplits
                    ? FpduTestSupport.randomUlpdus(random, 4, 800, Integer.MAX_VALUE, markers)
                    : FpduTestSupport.randomUlpdus(random, 8, 3000, 60, markers);

            FpduFramer framer = new FpduFramer(crc, markers);
            EmbeddedChannel out = new EmbeddedChannel(framer);
            byte[] wire;
            try {
                wire = FpduTestSupport.frame(out, ulpdus);
            } finally {
                FpduTestSupport.finish(out);
            }
            assertEquals(wire.length, framer.streamPosition());
            assertArrayEquals(FpduTestSupport.writeWithFpduWriter(crc, markers, ulpdus), wire, "framer == FpduWriter");

            int[] chunks = Property.split(random, wire.length, maxChunk(random, wire.length));
            assertDeframes(random, crc, markers, ulpdus, wire, chunks);
            if (oneOctetSplits) {
                assertDeframes(random, crc, markers, ulpdus, wire, FpduTestSupport.fixedChunks(wire.length, 1));
            }
        }));
    }

    /**
     * Chunk limits from tiny to the whole stream, but at most about 256 chunks on average per stream
     * (each chunk is a pass through the pipeline, traced by the paranoid leak detector).
     */
    private static int maxChunk(SplittableRandom random, int total) {
        int limit;
        switch (random.nextInt(4)) {
            case 0:
                limit = 1 + random.nextInt(16);
                break;
            case 1:
                limit = 1 + random.nextInt(600);
                break;
            case 2:
                limit = 1 + random.nextInt(5000);
                break;
            default:
                limit = Integer.MAX_VALUE;
                break;
        }
        return Math.max(limit, total / 128);
    }

    private static void assertDeframes(SplittableRandom random, boolean crc, boolean markers, byte[][] ulpdus,
            byte[] wire, int[] chunks) {
        FpduDeframer deframer = new FpduDeframer(crc, markers);
        RecordingSink sink = random.nextBoolean() ? new RecordingSink() : null;
        if (sink != null) {
            deframer.deliverTo(sink);
        }
        EmbeddedChannel in = new EmbeddedChannel(deframer);
        try {
            List<byte[]> got = FpduTestSupport.deframe(in, wire, chunks);
            if (sink != null) {
                assertTrue(got.isEmpty(), "a streaming deframer passes nothing up the pipeline");
                got = sink.ulpdus;
            }
            assertUlpdus(ulpdus, got);
            assertEquals(wire.length, deframer.streamPosition());
        } finally {
            FpduTestSupport.finish(in);
        }
    }
}
