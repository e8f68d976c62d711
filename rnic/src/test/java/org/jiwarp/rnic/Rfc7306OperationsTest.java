package org.jiwarp.rnic;

import static org.jiwarp.rnic.RnicOperationsTest.mpa;
import static org.jiwarp.rnic.RnicOperationsTest.take;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every RFC 7306 operation over real loopback TCP between two RNICs, with CRC and markers each on
 * and off: Immediate Data (with and without SE) in the receive completion, and fetch-and-add, swap,
 * compare-and-swap and their masked forms on the peer's memory, each returning the value before.
 */
class Rfc7306OperationsTest {

    private static final int RESULT = 4096;

    private static RnicPair pair(boolean crc, boolean markers) throws Exception {
        return new RnicPair(mpa(crc, markers), 1 << 16, (config, server) -> config.rfc7306(true));
    }

    /** Posts {@code wr}, checks its completion, and returns the value before the operation. */
    private static long atomic(RnicPair pair, SendWorkRequest wr, WcOpcode opcode) throws InterruptedException {
        pair.client.postSend(wr);
        WorkCompletion wc = take(pair.clientCq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(opcode, wc.opcode());
        assertEquals(wr.id(), wc.workRequestId());
        assertEquals(8, wc.byteLength());
        long original = pair.clientRegion.buffer().getLong(RESULT);
        assertEquals(original, wc.immediateData(), "the completion reports the value the result entry holds");
        return original;
    }

    @ParameterizedTest(name = "crc={0} markers={1}")
    @MethodSource("org.jiwarp.rnic.RnicOperationsTest#framing")
    void everyOperation(boolean crc, boolean markers) throws Exception {
        try (RnicPair pair = pair(crc, markers)) {
            ByteBuf target = pair.serverRegion.buffer();
            long address = pair.serverRegion.address() + 64;
            int rkey = pair.serverRegion.rkey();
            Sge result = new Sge(pair.clientRegion, RESULT, 8);
            target.setLong(64, 40);
            assertEquals(40, atomic(pair, SendWorkRequest.fetchAdd(1, address, rkey, result, 2), WcOpcode.ATOMIC_FETCH_ADD));
            assertEquals(42, target.getLong(64));
            // Masked fetch-and-add: two 32-bit counters; the low one's carry is dropped at bit 31.
            target.setLong(64, 0x0000_0001_FFFF_FFFFL);
            assertEquals(0x0000_0001_FFFF_FFFFL, atomic(pair, SendWorkRequest.maskedFetchAdd(2, address, rkey, result,
                    0x0000_0001_0000_0001L, 0x8000_0000_8000_0000L), WcOpcode.ATOMIC_FETCH_ADD));
            assertEquals(0x0000_0002_0000_0000L, target.getLong(64));
            assertEquals(0x0000_0002_0000_0000L, atomic(pair, SendWorkRequest.swap(3, address, rkey, result, 7),
                    WcOpcode.ATOMIC_SWAP));
            assertEquals(7, target.getLong(64));
            assertEquals(7, atomic(pair, SendWorkRequest.maskedSwap(4, address, rkey, result, 0xAB00, 0xFF00),
                    WcOpcode.ATOMIC_SWAP));
            assertEquals(0xAB07, target.getLong(64));
            // Compare and swap: a mismatch leaves the value, a match swaps.
            assertEquals(0xAB07, atomic(pair, SendWorkRequest.compareSwap(5, address, rkey, result, 1, 99),
                    WcOpcode.ATOMIC_COMPARE_SWAP));
            assertEquals(0xAB07, target.getLong(64));
            assertEquals(0xAB07, atomic(pair, SendWorkRequest.compareSwap(6, address, rkey, result, 0xAB07, 99),
                    WcOpcode.ATOMIC_COMPARE_SWAP));
            assertEquals(99, target.getLong(64));
            // Masked: compare only the low byte (99 = 0x63), write only the high half.
            assertEquals(99, atomic(pair, SendWorkRequest.maskedCompareSwap(7, address, rkey, result, 0x1163, 0xFF,
                    0x1234_5678_0000_0000L, 0xFFFF_FFFF_0000_0000L), WcOpcode.ATOMIC_COMPARE_SWAP));
            assertEquals(0x1234_5678_0000_0063L, target.getLong(64));

            // Immediate Data, with and without Solicited Event: a receive used up, the 8 octets in it.
            pair.server.postReceive(new ReceiveWorkRequest(100, new Sge(pair.serverRegion, 0, 16)));
            pair.server.postReceive(new ReceiveWorkRequest(101, new Sge(pair.serverRegion, 64, 16)));
            pair.client.postSend(SendWorkRequest.immediateData(8, 0x0102_0304_0506_0708L));
            pair.client.postSend(SendWorkRequest.immediateData(9, -2L).solicited());
            for (long id = 8; id <= 9; id++) {
                WorkCompletion sent = take(pair.clientCq);
                assertEquals(WcStatus.SUCCESS, sent.status(), sent.toString());
                assertEquals(WcOpcode.IMMEDIATE_DATA, sent.opcode());
                assertEquals(id, sent.workRequestId());
            }
            WorkCompletion first = take(pair.serverCq);
            assertEquals(WcOpcode.RECEIVE_IMMEDIATE_DATA, first.opcode(), first.toString());
            assertEquals(100, first.workRequestId());
            assertEquals(0x0102_0304_0506_0708L, first.immediateData());
            assertEquals(8, first.byteLength());
            assertEquals(0x0102_0304_0506_0708L, pair.serverRegion.buffer().getLong(0),
                    "RFC 7306 section 6.2: the 8 octets go to the untagged buffer");
            assertEquals(false, first.solicited());
            WorkCompletion second = take(pair.serverCq);
            assertEquals(101, second.workRequestId());
            assertEquals(-2L, second.immediateData());
            assertEquals(-2L, pair.serverRegion.buffer().getLong(64));
            assertTrue(second.solicited());
            assertNull(pair.client.terminateReceived());
            assertNull(pair.server.terminateReceived());
        }
    }

    /** Atomics beyond the ORD wait their turn; Reads and atomics share it and complete in order. */
    @Test
    void atomicsAndReadsShareTheOrd() throws Exception {
        try (RnicPair pair = new RnicPair(mpa(false, false), 1 << 16,
                (config, server) -> config.rfc7306(true).ord(2).ird(2))) {
            ByteBuf target = pair.serverRegion.buffer();
            target.setLong(0, 0);
            long address = pair.serverRegion.address();
            int rkey = pair.serverRegion.rkey();
            int n = 50;
            for (int i = 0; i < n; i++) {
                SendWorkRequest wr = i % 5 == 4
                        ? SendWorkRequest.read(i, address, rkey, new Sge(pair.clientRegion, 8192, 8))
                        : SendWorkRequest.fetchAdd(i, address, rkey, new Sge(pair.clientRegion, 8192 + 8 * (i + 1), 8), 1);
                pair.client.postSend(wr);
            }
            long adds = 0;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = take(pair.clientCq);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(i, wc.workRequestId(), "completions in posting order");
                if (wc.opcode() == WcOpcode.ATOMIC_FETCH_ADD) {
                    assertEquals(adds, wc.immediateData(), "each add sees the ones before it");
                    adds++;
                }
            }
            assertEquals(40, target.getLong(0));
        }
    }

    /** Without {@link QpConfig#rfc7306} nothing goes on the wire: the work request fails locally. */
    @Test
    void notSentToAPeerWithoutRfc7306() throws Exception {
        try (RnicPair pair = new RnicPair(mpa(false, false), 1 << 16, (config, server) -> config)) {
            pair.client.postSend(SendWorkRequest.fetchAdd(1, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 8), 1));
            pair.client.postSend(SendWorkRequest.immediateData(2, 5));
            pair.client.postSend(SendWorkRequest.send(3, new Sge(pair.clientRegion, 0, 0)));
            pair.server.postReceive(new ReceiveWorkRequest(9, new Sge(pair.serverRegion, 0, 16)));
            for (long id = 1; id <= 2; id++) {
                WorkCompletion wc = take(pair.clientCq);
                assertEquals(id, wc.workRequestId());
                assertEquals(WcStatus.LOCAL_QP_OPERATION_ERROR, wc.status(), wc.toString());
            }
            assertEquals(WcStatus.SUCCESS, take(pair.clientCq).status());
            WorkCompletion received = take(pair.serverCq);
            assertEquals(WcOpcode.RECEIVE, received.opcode(), "the Send was the first message the peer saw");
        }
    }

    /**
     * A misaligned target and a region without REMOTE_ATOMIC: the peer terminates with RFC 7306's
     * errors, and the atomic completes in error; nothing worse.
     */
    @Test
    void terminatedAtomicCompletesInError() throws Exception {
        try (RnicPair pair = pair(false, false)) {
            pair.client.postSend(SendWorkRequest.fetchAdd(1, pair.serverRegion.address() + 4, pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 8), 1));
            WorkCompletion wc = take(pair.clientCq);
            assertEquals(1, wc.workRequestId());
            // RFC 7306 section 8.2: RDMAP / Remote Operation / Catastrophic error, localized to the stream.
            assertEquals(WcStatus.REMOTE_OPERATION_ERROR, wc.status(), wc.toString());
            assertEquals(TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM, wc.error());
        }
        try (RnicPair pair = pair(false, false)) {
            MemoryRegion noAtomics = pair.serverPd.register(java.nio.ByteBuffer.allocateDirect(64),
                    Access.REMOTE_READ | Access.REMOTE_WRITE);
            pair.client.postSend(SendWorkRequest.swap(1, noAtomics.address(), noAtomics.rkey(),
                    new Sge(pair.clientRegion, 0, 8), 1));
            WorkCompletion wc = take(pair.clientCq);
            assertEquals(WcStatus.REMOTE_ACCESS_ERROR, wc.status(), wc.toString());
            assertEquals(TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION, wc.error());
        }
    }
}
