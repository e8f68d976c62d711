package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * Protection and queue errors a peer can cause through the ordinary verbs: each produces exactly
 * the RFC's Terminate (seen on both ends), both queue pairs end in ERROR, outstanding work
 * completes in flush error, and the RNICs keep serving other connections.
 */
class RnicTerminateTest {

    private static final MpaSettings MPA = RnicOperationsTest.mpa(true, false);

    /** Runs {@code misdeed} on a fresh pair and checks the Terminate that follows. */
    private static void expectTerminate(TerminateError expected, Misdeed misdeed) throws Exception {
        expectTerminate(expected, 2, misdeed);
    }

    /**
     * Runs {@code misdeed} on a fresh pair whose server posted {@code receives} 64-octet receives
     * (ids 900, 901, ...), and checks the Terminate that follows; with two receives posted and none
     * consumed, the second must complete in flush error.
     */
    private static void expectTerminate(TerminateError expected, int receives, Misdeed misdeed) throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config.ird(4).ord(4))) {
            for (int i = 0; i < receives; i++) {
                pair.server.postReceive(new ReceiveWorkRequest(900 + i, new Sge(pair.serverRegion, 0, 64)));
            }
            misdeed.run(pair);
            pair.client.closeFuture().get(10, TimeUnit.SECONDS);
            pair.server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, pair.client.state());
            assertEquals(QpState.ERROR, pair.server.state());
            assertEquals(expected, pair.server.terminateSent(), "the Terminate the server sent");
            assertNotNull(pair.client.terminateReceived(), "the client got a Terminate");
            assertEquals(expected, pair.client.terminateReceived().error(), "the Terminate the client got");
            List<WorkCompletion> flushed = drain(pair.serverCq);
            if (receives == 2) {
                assertTrue(flushed.stream().anyMatch(wc -> wc.workRequestId() == 901
                        && wc.status() == WcStatus.WORK_REQUEST_FLUSH_ERROR), flushed.toString());
            }
        }
    }

    @FunctionalInterface
    private interface Misdeed {
        void run(RnicPair pair) throws Exception;
    }

    private static List<WorkCompletion> drain(CompletionQueue cq) throws InterruptedException {
        List<WorkCompletion> all = new ArrayList<>();
        for (WorkCompletion wc = cq.take(200, TimeUnit.MILLISECONDS); wc != null;
                wc = cq.take(200, TimeUnit.MILLISECONDS)) {
            all.add(wc);
        }
        return all;
    }

    @Test
    void writeToAnUnknownStagIsDdpInvalidStag() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_INVALID_STAG, pair -> pair.client.postSend(
                SendWorkRequest.write(1, pair.serverRegion.address(), pair.serverRegion.rkey() ^ 0x100,
                        new Sge(pair.clientRegion, 0, 64))));
    }

    @Test
    void writePastTheRegionIsDdpBaseOrBounds() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, pair -> pair.client.postSend(
                SendWorkRequest.write(1, pair.serverRegion.address() + pair.serverRegion.length() - 10,
                        pair.serverRegion.rkey(), new Sge(pair.clientRegion, 0, 64))));
    }

    @Test
    void writeToAnotherDomainsRegionIsDdpStagNotAssociated() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED, pair -> {
            MemoryRegion foreign = pair.serverRnic.allocatePd().register(ByteBuffer.allocateDirect(4096),
                    Access.ALL);
            pair.client.postSend(SendWorkRequest.write(1, foreign.address(), foreign.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
        });
    }

    @Test
    void writeWithoutRemoteWriteAccessIsRdmapAccessRights() throws Exception {
        expectTerminate(TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION, pair -> {
            MemoryRegion readOnly = pair.serverPd.register(ByteBuffer.allocateDirect(4096),
                    Access.LOCAL_WRITE | Access.REMOTE_READ);
            pair.client.postSend(SendWorkRequest.write(1, readOnly.address(), readOnly.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
        });
    }

    @Test
    void writeToAnInvalidatedRegionIsDdpInvalidStag() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_INVALID_STAG, pair -> {
            assertTrue(pair.serverRegion.invalidate());
            pair.client.postSend(SendWorkRequest.write(1, pair.serverRegion.address(), pair.serverRegion.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
        });
    }

    @Test
    void readFromAnUnknownStagIsRdmapInvalidStag() throws Exception {
        expectTerminate(TerminateError.RDMAP_INVALID_STAG, pair -> pair.client.postSend(
                SendWorkRequest.read(1, pair.serverRegion.address(), pair.serverRegion.rkey() + 1,
                        new Sge(pair.clientRegion, 0, 64))));
    }

    @Test
    void readWithoutRemoteReadAccessIsRdmapAccessRights() throws Exception {
        expectTerminate(TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION, pair -> {
            MemoryRegion writeOnly = pair.serverPd.register(ByteBuffer.allocateDirect(4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            pair.client.postSend(SendWorkRequest.read(1, writeOnly.address(), writeOnly.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
        });
    }

    @Test
    void readPastTheRegionIsRdmapBaseOrBounds() throws Exception {
        expectTerminate(TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION, pair -> pair.client.postSend(
                SendWorkRequest.read(1, pair.serverRegion.address() + 1, pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 0, (int) pair.serverRegion.length()))));
    }

    @Test
    void sendWithNoReceivePostedIsDdpNoBuffer() throws Exception {
        expectTerminate(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, 0, pair ->
                pair.client.postSend(SendWorkRequest.send(1, new Sge(pair.clientRegion, 0, 8))));
    }

    @Test
    void sendLongerThanTheReceiveBufferIsDdpMessageTooLong() throws Exception {
        expectTerminate(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, 1, pair ->
                pair.client.postSend(SendWorkRequest.send(1, new Sge(pair.clientRegion, 0, 65))));
    }

    @Test
    void writeWhoseOffsetWrapsIsDdpToWrap() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_TO_WRAP, pair -> pair.client.postSend(
                SendWorkRequest.write(1, 0xFFFF_FFFF_FFFF_FFF0L, pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 0, 64))));
    }

    @Test
    void readWhoseOffsetWrapsIsRdmapToWrap() throws Exception {
        expectTerminate(TerminateError.RDMAP_TO_WRAP, pair -> pair.client.postSend(
                SendWorkRequest.read(1, 0xFFFF_FFFF_FFFF_FFF0L, pair.serverRegion.rkey(),
                        new Sge(pair.clientRegion, 0, 64))));
    }

    @Test
    void readFromAnotherDomainsRegionIsRdmapStagNotAssociated() throws Exception {
        expectTerminate(TerminateError.RDMAP_STAG_NOT_ASSOCIATED, pair -> {
            MemoryRegion foreign = pair.serverRnic.allocatePd().register(ByteBuffer.allocateDirect(4096),
                    Access.ALL);
            pair.client.postSend(SendWorkRequest.read(1, foreign.address(), foreign.rkey(),
                    new Sge(pair.clientRegion, 0, 64)));
        });
    }

    @Test
    void invalidatingAnUnknownStagIsRdmapCannotBeInvalidated() throws Exception {
        expectTerminate(TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED, 1, pair -> pair.client.postSend(
                SendWorkRequest.sendWithInvalidate(1, 0x00ABCD00, new Sge(pair.clientRegion, 0, 8))));
    }

    @Test
    void invalidatingAnotherDomainsStagIsRdmapProtectionCannotBeInvalidated() throws Exception {
        expectTerminate(TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED, 1, pair -> {
            MemoryRegion foreign = pair.serverRnic.allocatePd().register(ByteBuffer.allocateDirect(64),
                    Access.ALL);
            pair.client.postSend(SendWorkRequest.sendWithInvalidate(1, foreign.rkey(),
                    new Sge(pair.clientRegion, 0, 8)));
        });
    }

    @Test
    void otherQueuePairsCarryOn() throws Exception {
        try (RnicPair healthy = new RnicPair(MPA, 4096, (config, server) -> config)) {
            expectTerminate(TerminateError.DDP_TAGGED_INVALID_STAG, pair -> pair.client.postSend(
                    SendWorkRequest.write(1, 0, 0xDEAD00, new Sge(pair.clientRegion, 0, 64))));
            healthy.clientRegion.buffer().setLong(0, 0x1122334455667788L);
            healthy.client.postSend(SendWorkRequest.write(5, healthy.serverRegion.address(),
                    healthy.serverRegion.rkey(), new Sge(healthy.clientRegion, 0, 8)));
            assertEquals(WcStatus.SUCCESS, RnicOperationsTest.take(healthy.clientCq).status());
            assertEquals(QpState.RTS, healthy.server.state());
        }
    }
}
