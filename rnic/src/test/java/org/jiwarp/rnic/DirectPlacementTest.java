package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.FpduReads;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Direct Data Placement over real TCP (RFC 5041 section 1): the payload of a long RDMA Write or Read
 * Response is read by the socket straight into the registered region its header named, so the
 * kernel's copy is the only one. Counted, not timed: the server's receive allocator ({@link
 * FpduReads}) counts the octets the socket read and those it read straight into place; everything
 * else went through an ordinary read buffer and was copied out of it. Only the FPDUs' framing may take
 * that way (and the connection's first read, before the deframer knows its ULPDUs are long), also
 * when a payload arrives in parts; with CRC, each FPDU is read straight into the buffer that holds it
 * until its CRC is verified (RFC 5044 section 8), its payload copied once from there. The data must
 * land where it belongs.
 */
class DirectPlacementTest {

    private static final int MESSAGE = 64 << 10;
    private static final int MESSAGES = 64;
    private static final int REGION = MESSAGE * MESSAGES;
    /** Per FPDU, what an ordinary read may carry: pad and CRC, length field, the 18 octets read for a header. */
    private static final int FRAMING_PER_FPDU = 3 + 4 + 2 + 18;
    /**
     * What else may go through ordinary reads: the first read of the connection (Netty's adaptive
     * first guess, 2048 octets, before the deframer knows its ULPDUs are long), and per message the
     * short second FPDU a 64 KiB message takes in the largest FPDUs (its 15 payload octets).
     */
    private static final int FIRST_READ = 2048;
    private static final int SHORT_TAIL = 64;

    @ParameterizedTest(name = "CRC {0}")
    @ValueSource(booleans = {false, true})
    void longWritesAreReadStraightIntoTheRegionTheyTarget(boolean crc) throws Exception {
        MpaSettings mpa = MpaSettings.builder().largeFpdus(true).crc(crc ? CrcPolicy.REQUIRE : CrcPolicy.ACCEPT).build();
        try (RnicPair pair = new RnicPair(mpa, REGION, (config, server) -> config.sendDepth(MESSAGES + 1))) {
            assertEquals(crc, pair.client.parameters().crc(), "CRC as asked");
            ByteBuf source = pair.clientRegion.buffer();
            for (int i = 0; i < REGION; i++) {
                source.setByte(i, i * 31 + (i >>> 16));
            }
            pair.server.postReceive(new ReceiveWorkRequest(1, new Sge(pair.serverRegion, 0, 8)));
            FpduReads reads = (FpduReads) pair.server.channel().config().getRecvByteBufAllocator();
            long readBefore = pair.server.channel().eventLoop().submit(reads::octetsRead).get(10, TimeUnit.SECONDS);

            for (int i = 0; i < MESSAGES; i++) {
                pair.client.postSend(SendWorkRequest.write(i, pair.serverRegion.address() + (long) i * MESSAGE,
                        pair.serverRegion.rkey(), new Sge(pair.clientRegion, (long) i * MESSAGE, MESSAGE)));
            }
            // A Send after them: its completion at the server means every Write before it is placed.
            pair.client.postSend(SendWorkRequest.send(MESSAGES, new Sge(pair.clientRegion, 0, 8)));
            WorkCompletion received = pair.serverCq.take(30, TimeUnit.SECONDS);
            assertNotNull(received, "the Send behind the Writes arrives");
            assertEquals(WcStatus.SUCCESS, received.status(), received.toString());

            long read = pair.server.channel().eventLoop().submit(reads::octetsRead).get(10, TimeUnit.SECONDS)
                    - readBefore;
            long straight = pair.server.channel().eventLoop().submit(reads::octetsReadStraight)
                    .get(10, TimeUnit.SECONDS);
            long throughBuffers = read - straight;
            System.out.printf("CRC %s: %d octets read, %d straight into place, %d through read buffers%n", crc, read,
                    straight, throughBuffers);
            assertTrue(read >= REGION, "the server read the Writes: " + read);
            long allowed = (2L * FRAMING_PER_FPDU + SHORT_TAIL) * (MESSAGES + 1) + FIRST_READ;
            assertTrue(throughBuffers <= allowed, throughBuffers + " octets went through read buffers, more than the "
                    + "framing, the short FPDUs and the first read (" + allowed + "): payload was copied twice");

            ByteBuf sink = pair.serverRegion.buffer();
            // The Send's 8 octets went to the region's first octets; everything after them is the Writes'.
            for (int i = 8; i < REGION; i++) {
                if (sink.getByte(i) != source.getByte(i)) {
                    throw new AssertionError("octet " + i + " of the region: " + sink.getByte(i) + ", written "
                            + source.getByte(i));
                }
            }
        }
    }
}
