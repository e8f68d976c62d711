package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MarkerPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each operation over real loopback TCP between two RNICs, with CRC and markers each on and off:
 * the right bytes at the right offsets and the right work completions.
 */
class RnicOperationsTest {

    static Stream<Arguments> framing() {
        return Stream.of(Arguments.of(false, false), Arguments.of(true, false), Arguments.of(false, true),
                Arguments.of(true, true));
    }

    static MpaSettings mpa(boolean crc, boolean markers) {
        return MpaSettings.builder().crc(crc ? CrcPolicy.REQUIRE : CrcPolicy.ACCEPT)
                .markers(markers ? MarkerPolicy.REQUEST : MarkerPolicy.ACCEPT)
                .rtrOffers(java.util.EnumSet.of(RtrType.WRITE, RtrType.READ)).build();
    }

    static void fill(ByteBuf buffer, int offset, int length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < length; i++) {
            buffer.setByte(offset + i, random.nextInt(256));
        }
    }

    /**
     * The next completion, within two minutes: a deadline for a hang, not a measure of speed (64 MiB
     * in MSS-sized FPDUs under paranoid leak detection took 57 s on a loaded two-core machine, and a
     * 30 s deadline failed a correct run there once).
     */
    static WorkCompletion take(CompletionQueue cq) throws InterruptedException {
        WorkCompletion wc = cq.take(120, TimeUnit.SECONDS);
        assertNotNull(wc, "no completion within 120 s");
        return wc;
    }

    @ParameterizedTest(name = "crc={0} markers={1}")
    @MethodSource("framing")
    void sendReceiveWriteAndRead(boolean crc, boolean markers) throws Exception {
        int size = 1 << 20;
        try (RnicPair pair = new RnicPair(mpa(crc, markers), 4 * size, (config, server) -> config)) {
            assertEquals(crc, pair.client.parameters().crc());
            assertEquals(markers, pair.client.parameters().markersFromPeer());
            ByteBuf serverMemory = pair.serverRegion.buffer();
            ByteBuf clientMemory = pair.clientRegion.buffer();
            int[] sizes = {0, 1, 100, 1454, 1455, 5000, size};
            // Send: the server posts one receive per message, each at its own offset.
            for (int i = 0; i < sizes.length; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(100 + i, new Sge(pair.serverRegion, (long) i * 0, size)));
            }
            for (int i = 0; i < sizes.length; i++) {
                fill(clientMemory, 0, sizes[i], i);
                pair.client.postSend(SendWorkRequest.send(i, new Sge(pair.clientRegion, 0, sizes[i])));
                WorkCompletion sent = take(pair.clientCq);
                assertEquals(WcStatus.SUCCESS, sent.status(), sent.toString());
                assertEquals(WcOpcode.SEND, sent.opcode());
                assertEquals(i, sent.workRequestId());
                WorkCompletion received = take(pair.serverCq);
                assertEquals(WcStatus.SUCCESS, received.status(), received.toString());
                assertEquals(WcOpcode.RECEIVE, received.opcode());
                assertEquals(100 + i, received.workRequestId());
                assertEquals(sizes[i], received.byteLength());
                assertTrue(ByteBufUtil.equals(clientMemory, 0, serverMemory, 0, sizes[i]), "send " + sizes[i]);
            }
            // Write: into the server's region at an offset; nothing else in the region changes.
            serverMemory.setZero(0, serverMemory.capacity());
            fill(clientMemory, 0, size, 77);
            int at = 12345;
            pair.client.postSend(SendWorkRequest.write(7, pair.serverRegion.address() + at, pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, size)));
            WorkCompletion wrote = take(pair.clientCq);
            assertEquals(WcStatus.SUCCESS, wrote.status(), wrote.toString());
            assertEquals(WcOpcode.RDMA_WRITE, wrote.opcode());
            assertEquals(size, wrote.byteLength());
            // A Send after the Write: its receive completes after the Write is placed (RFC 5040 section 5.5).
            pair.server.postReceive(new ReceiveWorkRequest(200, new Sge(pair.serverRegion, 3L * size, 16)));
            pair.client.postSend(SendWorkRequest.send(8, new Sge(pair.clientRegion, 0, 16)));
            take(pair.clientCq);
            take(pair.serverCq);
            assertTrue(ByteBufUtil.equals(clientMemory, 0, serverMemory, at, size), "written bytes");
            assertEquals(0, serverMemory.getByte(at - 1));
            assertEquals(0, serverMemory.getByte(at + size));
            // Read: the client reads from the server's region into its own at an offset.
            fill(serverMemory, 2 * size, size, 99);
            pair.client.postSend(SendWorkRequest.read(9, pair.serverRegion.address() + 2L * size,
                    pair.serverRegion.rkey(), new Sge(pair.clientRegion, size, size)));
            WorkCompletion read = take(pair.clientCq);
            assertEquals(WcStatus.SUCCESS, read.status(), read.toString());
            assertEquals(WcOpcode.RDMA_READ, read.opcode());
            assertEquals(size, read.byteLength());
            assertTrue(ByteBufUtil.equals(serverMemory, 2 * size, clientMemory, size, size), "read bytes");
        }
    }
}
