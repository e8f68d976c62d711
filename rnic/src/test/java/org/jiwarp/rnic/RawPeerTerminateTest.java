package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.rnic.RawPeer;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The RFC 5041 and RFC 5040 errors a well-behaved verbs peer cannot provoke, sent by a hostile
 * {@link RawPeer} to an {@link Rnic}: for each, exactly the RFC's Terminate (layer, error type,
 * code, HdrCt and the carried headers, read both through {@link TerminateMessages} and through the
 * raw {@link TerminateHeader} accessors), the server queue pair through TERMINATE to ERROR, its
 * outstanding receives completed in flush error, and other queue pairs on the same RNIC carrying on.
 * Also what the engine does when the peer sends a Terminate, closes, resets, or corrupts an FPDU.
 */
class RawPeerTerminateTest {

    private static final long WAIT_SECONDS = 10;
    /** An STag the raw peer claims as its own Read sink (the server never checks it). */
    private static final int PEER_SINK_STAG = 0x00C0DE01;
    private static final long PEER_SINK_OFFSET = 0x7000_0000L;

    private RawPeerServer server;

    @BeforeEach
    void startServer() {
        server = new RawPeerServer();
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    // ---------------------------------------------------------------------------------------------
    // ULPDUs, built with the wire accessors only

    private static ByteBuf untagged(int ddpControl, int rdmapControl, long qn, long msn, long mo, int payload) {
        ByteBuf ulpdu = RawPeer.buffer();
        DdpHeaders.writeUntagged(ulpdu, ddpControl, rdmapControl, 0, qn, msn, mo);
        fill(ulpdu, payload);
        return ulpdu;
    }

    private static ByteBuf send(boolean last, long msn, long mo, int payload) {
        return untagged(DdpHeaders.controlByte(false, last), RdmapHeaders.controlByte(RdmapOpcode.SEND),
                DdpHeaders.QN_SEND, msn, mo, payload);
    }

    private static ByteBuf tagged(int ddpControl, int rdmapControl, int stag, long taggedOffset, int payload) {
        ByteBuf ulpdu = RawPeer.buffer();
        DdpHeaders.writeTagged(ulpdu, ddpControl, rdmapControl, stag, taggedOffset);
        fill(ulpdu, payload);
        return ulpdu;
    }

    private ByteBuf goodWrite(int payload) {
        return tagged(DdpHeaders.controlByte(true, true), RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE),
                server.region.stag(), server.region.address() + (1 << 20), payload);
    }

    private ByteBuf readRequest(int ddpControl, int rdmapControl, long qn, long msn, long size) {
        ByteBuf ulpdu = RawPeer.buffer();
        DdpHeaders.writeUntagged(ulpdu, ddpControl, rdmapControl, 0, qn, msn, 0);
        ReadRequestHeader.write(ulpdu, PEER_SINK_STAG, PEER_SINK_OFFSET, size, server.region.stag(),
                server.region.address());
        return ulpdu;
    }

    private ByteBuf readRequest(long msn, long size) {
        return readRequest(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), DdpHeaders.QN_READ_REQUEST, msn, size);
    }

    private static void fill(ByteBuf ulpdu, int payload) {
        for (int i = 0; i < payload; i++) {
            ulpdu.writeByte(0xA0 + i);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The checks every case makes

    /**
     * A raw peer connected to the server, whose accepting queue pair posted two receives (900, 901).
     */
    private final class Session implements AutoCloseable {
        final RawPeerServer.Served served;
        final RawPeer peer;

        Session(int receiveBuffer) throws Exception {
            served = server.expect(2);
            peer = RawPeer.connect(server.address(), RawPeerServer.PEER_MPA, receiveBuffer);
            served.awaitEstablished();
            assertTrue(peer.parameters().crc(), "CRC negotiated");
            assertEquals(RawPeerServer.ORD, peer.parameters().ord());
        }

        Session() throws Exception {
            this(0);
        }

        /**
         * The whole check after an error the server detects: its Terminate on the wire as expected,
         * the connection closed, the queue pair in ERROR having sent {@code expected}, passing through
         * TERMINATE, and the receives not yet completed flushed.
         *
         * @param offending the ULPDU that caused the error, as sent, or {@code null} for an LLP error
         * @param readRequestCarried whether the Terminate must carry the offending Read Request header
         * @param flushed the receives expected to complete in flush error
         */
        List<WorkCompletion> expectTerminated(TerminateError expected, byte[] offending, boolean readRequestCarried,
                long... flushed) throws Exception {
            byte[] terminate = peer.awaitTerminate();
            assertTerminate(terminate, expected, offending, readRequestCarried);
            peer.awaitClose();
            List<WorkCompletion> completions = expectServerDown(expected, flushed);
            long terminates = peer.received().stream().filter(Ulpdus::isTerminate).count();
            assertEquals(1, terminates, "exactly one Terminate");
            return completions;
        }

        /**
         * The server queue pair reached ERROR, sent {@code expected} (or nothing), and flushed
         * {@code flushed}; returns every completion of its queue pair.
         */
        List<WorkCompletion> expectServerDown(TerminateError expected, long... flushed) throws Exception {
            QueuePair qp = served.qp;
            qp.closeFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals(QpState.ERROR, qp.state());
            assertEquals(expected, qp.terminateSent(), "the Terminate the server sent");
            if (expected != null) {
                assertTrue(served.statesWhenWriting.contains(QpState.TERMINATE),
                        "the Terminate left in state TERMINATE: " + served.statesWhenWriting);
            }
            List<WorkCompletion> completions = drain(served.cq);
            for (long id : flushed) {
                assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == id
                        && wc.status() == WcStatus.WORK_REQUEST_FLUSH_ERROR && wc.opcode() == WcOpcode.RECEIVE),
                        "receive " + id + " flushed: " + completions);
            }
            return completions;
        }

        @Override
        public void close() {
            peer.close();
        }
    }

    /** Checks a Terminate ULPDU against what the RFCs require for {@code expected} and {@code offending}. */
    private static void assertTerminate(byte[] bytes, TerminateError expected, byte[] offending,
            boolean readRequestCarried) {
        ByteBuf terminate = Unpooled.wrappedBuffer(bytes);
        try {
            // RFC 5040 section 4.8 / 5.6: untagged, last, queue 2, the first message there, MO 0.
            assertFalse(DdpHeaders.tagged(terminate, 0), "Terminate is untagged");
            assertTrue(DdpHeaders.last(terminate, 0), "Terminate has L set");
            assertEquals(DdpHeaders.DDP_VERSION, DdpHeaders.version(terminate, 0));
            assertEquals(RdmapHeaders.RDMAP_VERSION, RdmapHeaders.version(terminate, 0));
            assertEquals(RdmapOpcode.TERMINATE, RdmapHeaders.opcode(terminate, 0));
            assertEquals(DdpHeaders.QN_TERMINATE, DdpHeaders.qn(terminate, 0));
            assertEquals(1, DdpHeaders.msn(terminate, 0), "Terminate MSN");
            assertEquals(0, DdpHeaders.mo(terminate, 0), "Terminate MO");

            TerminateMessages.Received received = TerminateMessages.read(terminate);
            assertNotNull(received);
            assertEquals(expected, received.error(), received.describe());
            assertFalse(received.siwLayout());

            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            assertEquals(expected.layer().code(), TerminateHeader.layerCode(terminate, at), "layer");
            assertEquals(expected.errorType(), TerminateHeader.errorType(terminate, at), "error type");
            assertEquals(expected.errorCode(), TerminateHeader.errorCode(terminate, at), "error code");
            assertEquals(expected, TerminateHeader.error(terminate, at));
            assertEquals(0, TerminateHeader.reserved(terminate, at), "reserved bits");
            if (offending == null) {
                // RFC 5040 section 4.8: nothing of a damaged FPDU can be trusted, so nothing is carried.
                assertEquals(0, TerminateHeader.hdrct(terminate, at), "HdrCt");
                assertEquals(received.hdrct(), 0);
                assertEquals(at + TerminateHeader.CONTROL_LENGTH, bytes.length, "Terminate length");
                return;
            }
            int hdrct = TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D
                    | (readRequestCarried ? TerminateHeader.HDRCT_R : 0);
            assertEquals(hdrct, TerminateHeader.hdrct(terminate, at), "HdrCt M/D/R");
            assertEquals(hdrct, received.hdrct());
            assertTrue(TerminateHeader.m(terminate, at));
            assertTrue(TerminateHeader.d(terminate, at));
            assertEquals(readRequestCarried, TerminateHeader.r(terminate, at));
            assertEquals(offending.length, TerminateHeader.ddpSegmentLength(terminate, at),
                    "DDP Segment Length = the offending ULPDU's length");
            ByteBuf sent = Unpooled.wrappedBuffer(offending);
            int headerLength = DdpHeaders.headerLength(sent, 0);
            assertEquals(headerLength, TerminateHeader.terminatedDdpHeaderLength(terminate, at));
            int carried = at + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET;
            assertArrayEquals(Arrays.copyOfRange(offending, 0, headerLength),
                    Arrays.copyOfRange(bytes, carried, carried + headerLength), "the carried DDP header");
            int rdma = at + TerminateHeader.terminatedRdmaHeaderOffset(terminate, at);
            if (readRequestCarried) {
                assertArrayEquals(Arrays.copyOfRange(offending, headerLength, headerLength + ReadRequestHeader.LENGTH),
                        Arrays.copyOfRange(bytes, rdma, rdma + ReadRequestHeader.LENGTH),
                        "the carried Read Request header");
            }
            assertEquals(at + TerminateHeader.length(hdrct, headerLength), bytes.length, "Terminate length");
        } finally {
            terminate.release();
        }
    }

    /** Every completion queued; call once the queue pair is closed (it completes its work before). */
    private static List<WorkCompletion> drain(CompletionQueue cq) throws InterruptedException {
        List<WorkCompletion> all = new ArrayList<>();
        for (WorkCompletion wc = cq.take(0, TimeUnit.MILLISECONDS); wc != null;
                wc = cq.take(0, TimeUnit.MILLISECONDS)) {
            all.add(wc);
        }
        return all;
    }

    /** Sends one bad ULPDU as the first FPDU and checks the Terminate; receives 900 and 901 flush. */
    private void expectTerminate(TerminateError expected, boolean readRequestCarried, ByteBuf bad) throws Exception {
        try (Session s = new Session()) {
            byte[] sent = s.peer.send(bad);
            s.expectTerminated(expected, sent, readRequestCarried, 900, 901);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 5041 section 7.2: DDP errors

    @Test
    void taggedSegmentWithDdpVersion2IsDdpTaggedInvalidVersion() throws Exception {
        expectTerminate(TerminateError.DDP_TAGGED_INVALID_VERSION, false,
                tagged(DdpHeaders.controlByte(true, true, 0, 2), RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE),
                        server.region.stag(), server.region.address(), 16));
    }

    @Test
    void untaggedSegmentWithDdpVersion0IsDdpUntaggedInvalidVersion() throws Exception {
        expectTerminate(TerminateError.DDP_UNTAGGED_INVALID_VERSION, false,
                untagged(DdpHeaders.controlByte(false, true, 0, 0), RdmapHeaders.controlByte(RdmapOpcode.SEND),
                        DdpHeaders.QN_SEND, 1, 0, 8));
    }

    @Test
    void ulpduShorterThanItsDdpHeaderIsDdpLocalCatastrophic() throws Exception {
        ByteBuf truncated = send(true, 1, 0, 0);
        truncated.writerIndex(DdpHeaders.MSN_OFFSET);
        try (Session s = new Session()) {
            s.peer.send(truncated);
            // There is no whole DDP header to carry: HdrCt 0 (as for an LLP error).
            s.expectTerminated(TerminateError.DDP_LOCAL_CATASTROPHIC, null, false, 900, 901);
        }
    }

    @Test
    void sendOnQueue5IsDdpInvalidQn() throws Exception {
        expectTerminate(TerminateError.DDP_UNTAGGED_INVALID_QN, false,
                untagged(DdpHeaders.controlByte(false, true), RdmapHeaders.controlByte(RdmapOpcode.SEND), 5, 1, 0, 8));
    }

    @Test
    void replayedSendMsnIsDdpInvalidMsnRange() throws Exception {
        try (Session s = new Session()) {
            s.peer.send(send(true, 1, 0, 8));
            byte[] replay = s.peer.send(send(true, 1, 0, 8));
            List<WorkCompletion> completions = s.expectTerminated(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE,
                    replay, false, 901);
            // The first Send completed before the replay was refused.
            assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == 900 && wc.status() == WcStatus.SUCCESS
                    && wc.byteLength() == 8), completions.toString());
        }
    }

    @Test
    void readRequestWithAnMsnGapIsDdpInvalidMsnRange() throws Exception {
        // A DDP-layer error: the Read Request header is not carried (R only for RDMAP-layer errors).
        expectTerminate(TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE, false, readRequest(3, 8));
    }

    @Test
    void secondSegmentAtTheWrongMoIsDdpInvalidMo() throws Exception {
        try (Session s = new Session()) {
            s.peer.send(send(false, 1, 0, 16));
            byte[] second = s.peer.send(send(true, 1, 17, 16));
            // Receive 900 held the first half of the message: it flushes too.
            s.expectTerminated(TerminateError.DDP_UNTAGGED_INVALID_MO, second, false, 900, 901);
        }
    }

    @Test
    void readRequestLongerThan28OctetsIsDdpMessageTooLong() throws Exception {
        ByteBuf request = readRequest(1, 8);
        request.writeInt(0);
        expectTerminate(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, false, request);
    }

    /**
     * IRD + 1 Read Requests in one burst. The engine frees an IRD entry once the last segment of its
     * Read Response has gone to TCP, so the first request asks for 8 MiB (more than the server's
     * socket send buffer, capped by net.ipv4.tcp_wmem at 4 MiB on a default Linux, plus the peer's
     * fixed 64 KiB receive buffer) while the peer does not read: that response cannot finish, the next
     * three queue behind it, and the fifth finds no free entry. The peer reads again only once the
     * server has refused it, so the outcome does not depend on timing; had the overflow not happened,
     * no Terminate would come and the test would fail, not pass by luck.
     */
    @Test
    void readRequestsBeyondTheIrdAreDdpNoBuffer() throws Exception {
        try (Session s = new Session(64 << 10)) {
            s.peer.autoRead(false);
            List<ByteBuf> burst = new ArrayList<>();
            burst.add(readRequest(1, RawPeerServer.REGION_SIZE));
            for (int msn = 2; msn <= RawPeerServer.IRD + 1; msn++) {
                burst.add(readRequest(msn, 1));
            }
            List<byte[]> sent = s.peer.sendBurst(burst);
            // The refusal moves the queue pair out of RTS at once; the Terminate itself (terminateSent)
            // can only go once the peer reads again, behind the 8 MiB.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (s.served.qp.state() == QpState.RTS) {
                assertTrue(System.nanoTime() < deadline, "the fifth Read Request was not refused within "
                        + WAIT_SECONDS + " s: the queue pair is still in RTS");
                Thread.sleep(1);
            }
            assertEquals(QpState.TERMINATE, s.served.qp.state(), "the refusal of the fifth Read Request");
            s.peer.autoRead(true);
            s.expectTerminated(TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, sent.get(RawPeerServer.IRD),
                    false, 900, 901);
            // The IRD requests accepted were answered as far as the connection took their responses
            // (the responder issues only while it is writable), then the Terminate ended the stream.
            assertTrue(s.peer.readResponseOctets() > 0, "no Read Response before the Terminate");
            assertTrue(s.peer.readResponseOctets() < RawPeerServer.REGION_SIZE,
                    "the whole 8 MiB Read Response was queued for a peer that did not read");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // RFC 5040 section 7.2: RDMAP errors

    @Test
    void rdmapVersion2IsRdmapInvalidVersion() throws Exception {
        expectTerminate(TerminateError.RDMAP_INVALID_VERSION, false,
                untagged(DdpHeaders.controlByte(false, true), RdmapHeaders.controlByte(2, 0, RdmapOpcode.SEND.code()),
                        DdpHeaders.QN_SEND, 1, 0, 8));
    }

    @Test
    void readRequestWithRdmapVersion2CarriesTheReadRequestHeader() throws Exception {
        expectTerminate(TerminateError.RDMAP_INVALID_VERSION, true, readRequest(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(2, 0, RdmapOpcode.RDMA_READ_REQUEST.code()), DdpHeaders.QN_READ_REQUEST,
                1, 8));
    }

    @Test
    void reservedOpcodeIsRdmapUnexpectedOpcode() throws Exception {
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, false, untagged(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapHeaders.RDMAP_VERSION, 0, 0xC), DdpHeaders.QN_SEND, 1, 0, 8));
    }

    @Test
    void atomicRequestWithAReservedOperationIsRdmapUnexpectedOpcode() throws Exception {
        // RFC 7306 section 5.2.1: an Atomic Request travels on queue 1; its 52-octet body here starts
        // 0xA0A1A2A3, Atomic Operation 3, which is reserved: checked before the target.
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, false, untagged(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapOpcode.ATOMIC_REQUEST), DdpHeaders.QN_READ_REQUEST, 1, 0, 52));
    }

    @Test
    void sendOnTheTaggedModelIsRdmapUnexpectedOpcode() throws Exception {
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, false, tagged(DdpHeaders.controlByte(true, true),
                RdmapHeaders.controlByte(RdmapOpcode.SEND), server.region.stag(), server.region.address(), 8));
    }

    @Test
    void readResponseWithNoReadOutstandingIsRdmapUnexpectedOpcode() throws Exception {
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, false, tagged(DdpHeaders.controlByte(true, true),
                RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE), server.region.stag(),
                server.region.address(), 16));
    }

    @Test
    void sendOnTheReadRequestQueueIsRdmapUnexpectedOpcode() throws Exception {
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, false, untagged(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapOpcode.SEND), DdpHeaders.QN_READ_REQUEST, 1, 0, 8));
    }

    @Test
    void readRequestOnTheSendQueueIsRdmapUnexpectedOpcodeCarryingIt() throws Exception {
        expectTerminate(TerminateError.RDMAP_UNEXPECTED_OPCODE, true, readRequest(DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), DdpHeaders.QN_SEND, 1, 8));
    }

    // A Read Response that does not answer the server's outstanding Read.

    @Test
    void readResponseToTheWrongStagIsRdmapUnexpectedOpcode() throws Exception {
        expectBadReadResponse((stag, offset, size) -> readResponse(stag ^ 0x100, offset, size, true));
    }

    @Test
    void readResponseAtTheWrongOffsetIsRdmapUnexpectedOpcode() throws Exception {
        expectBadReadResponse((stag, offset, size) -> readResponse(stag, offset + 8, size, true));
    }

    @Test
    void readResponseLongerThanTheReadIsRdmapUnexpectedOpcode() throws Exception {
        expectBadReadResponse((stag, offset, size) -> readResponse(stag, offset, size + 1, true));
    }

    @Test
    void readResponseEndingShortIsRdmapUnexpectedOpcode() throws Exception {
        expectBadReadResponse((stag, offset, size) -> readResponse(stag, offset, size - 1, true));
    }

    @FunctionalInterface
    private interface BadResponse {
        ByteBuf build(int sinkStag, long sinkOffset, int size);
    }

    private static ByteBuf readResponse(int stag, long offset, int payload, boolean last) {
        return tagged(DdpHeaders.controlByte(true, last), RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE),
                stag, offset, payload);
    }

    /**
     * The server Reads 64 octets from the raw peer, which answers with {@code bad}: the server
     * terminates, and its Read completes in flush error (the engine completes send work that a local
     * error interrupts that way).
     */
    private void expectBadReadResponse(BadResponse bad) throws Exception {
        try (Session s = new Session()) {
            // RFC 5044 section 7.1.2: the responder sends nothing before the initiator's first FPDU.
            s.peer.send(goodWrite(8));
            s.served.qp.postSend(SendWorkRequest.read(77, 0x5000_0000L, PEER_SINK_STAG,
                    new Sge(server.region, 2 * RawPeerServer.RECEIVE_SIZE, 64)));
            ByteBuf request = Unpooled.wrappedBuffer(s.peer.awaitReadRequest());
            int body = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            assertEquals(64, ReadRequestHeader.readSize(request, body));
            assertEquals(PEER_SINK_STAG, ReadRequestHeader.sourceStag(request, body));
            byte[] sent = s.peer.send(bad.build(ReadRequestHeader.sinkStag(request, body),
                    ReadRequestHeader.sinkTaggedOffset(request, body),
                    (int) ReadRequestHeader.readSize(request, body)));
            request.release();
            List<WorkCompletion> completions = s.expectTerminated(TerminateError.RDMAP_UNEXPECTED_OPCODE, sent, false,
                    900, 901);
            // The Read whose response failed completes in error itself, carrying the Terminate's error.
            assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == 77 && wc.opcode() == WcOpcode.RDMA_READ
                    && wc.status() == WcStatus.LOCAL_QP_OPERATION_ERROR
                    && wc.error() == TerminateError.RDMAP_UNEXPECTED_OPCODE), completions.toString());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The peer ends the stream: Terminate, close, reset, a damaged FPDU

    @Test
    void terminateInTheMiddleOfASendEndsTheQueuePair() throws Exception {
        try (Session s = new Session()) {
            CompletableFuture<QpState> stateOnTerminate = new CompletableFuture<>();
            CompletableFuture<AsyncEvent> event = new CompletableFuture<>();
            server.rnic.onAsyncEvent(e -> {
                if (e.queuePair() == s.served.qp && e.type() == AsyncEvent.Type.TERMINATE_RECEIVED) {
                    stateOnTerminate.complete(s.served.qp.state());
                    event.complete(e);
                }
            });
            s.peer.send(send(false, 1, 0, 16));
            s.peer.send(TerminateMessages.build(s.peer.channel().alloc(), TerminateError.LLP_CRC_ERROR, 1, null));
            assertEquals(QpState.TERMINATE, stateOnTerminate.get(WAIT_SECONDS, TimeUnit.SECONDS));
            assertEquals(TerminateError.LLP_CRC_ERROR, event.get().error(), "the async event names the error");
            s.peer.awaitClose();
            s.expectServerDown(null, 900, 901);
            RemoteTerminate received = s.served.qp.terminateReceived();
            assertNotNull(received);
            assertEquals(TerminateError.LLP_CRC_ERROR, received.error());
            assertEquals(TerminateLayer.LLP, received.error().layer());
            assertEquals("MPA CRC Error", received.error().rfcName());
            assertTrue(received.describe().contains("MPA CRC Error"), received.describe());
            // A Terminate is not answered with one.
            assertTrue(s.peer.received().stream().noneMatch(Ulpdus::isTerminate));
        }
    }

    @Test
    void terminateCarryingAReadRequestIsReadByItsRfcName() throws Exception {
        try (Session s = new Session()) {
            ByteBuf refused = readRequest(1, 8);
            ByteBuf terminate = TerminateMessages.build(s.peer.channel().alloc(), TerminateError.RDMAP_INVALID_STAG, 1,
                    refused);
            refused.release();
            s.peer.send(terminate);
            s.peer.awaitClose();
            s.expectServerDown(null, 900, 901);
            RemoteTerminate received = s.served.qp.terminateReceived();
            assertEquals(TerminateError.RDMAP_INVALID_STAG, received.error());
            assertEquals(TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_R, received.hdrct());
            assertEquals("Invalid STag", received.error().rfcName());
        }
    }

    @Test
    void closeInTheMiddleOfASendFlushesWithoutTerminate() throws Exception {
        try (Session s = new Session()) {
            s.peer.send(send(false, 1, 0, 16));
            s.peer.closeGracefully();
            s.expectServerDown(null, 900, 901);
            assertNull(s.served.qp.terminateReceived());
            assertNull(s.served.qp.connectionError(), "a graceful close is no error");
        }
    }

    @Test
    void resetInTheMiddleOfASendFlushesWithoutTerminate() throws Exception {
        try (Session s = new Session()) {
            s.peer.send(send(false, 1, 0, 16));
            s.peer.reset();
            s.expectServerDown(null, 900, 901);
            assertNull(s.served.qp.terminateReceived());
            // The reset is what ended the connection, and the queue pair says so.
            Throwable error = s.served.qp.connectionError();
            assertNotNull(error, "the reset is the connection's error");
            assertTrue(String.valueOf(error.getMessage()).toLowerCase().contains("reset"), error.toString());
        }
    }

    @Test
    void badCrcIsAnLlpTerminateCarryingNothing() throws Exception {
        try (Session s = new Session()) {
            // The first FPDU is good: RFC 5044 section 7.1.2 keeps the responder silent until one arrives.
            s.peer.send(goodWrite(8));
            s.peer.sendCorrupted(send(true, 1, 0, 8));
            s.expectTerminated(TerminateError.LLP_CRC_ERROR, null, false, 900, 901);
        }
    }

    /**
     * RFC 5044 section 8: a ULPDU whose CRC fails is not passed to DDP. A bit flipped on the wire in
     * any header field of a Write or a Send (the first FPDU of the stream, so nothing else moves
     * memory) gives the LLP CRC Terminate, never the DDP or RDMAP error the damaged header would
     * earn, and not one octet of that FPDU reaches registered memory: with CRC on, the deframer holds
     * each FPDU until its CRC is verified. The flips keep the damaged header inside the region where
     * they can (TO + 64, a neighbour's MSN), so that placing before the check would show.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "Write STag, true, 5, 0x01",
        "Write Tagged Offset, true, 13, 0x40",
        "Write opcode, true, 1, 0x01",
        "Write L and DDP version, true, 0, 0x41",
        "Send QN, false, 9, 0x01",
        "Send MSN, false, 13, 0x02",
        "Send MO, false, 17, 0x08",
        "Send opcode (to Send with SE), false, 1, 0x06",
    })
    void aHeaderBitFlippedUnderCrcIsTheCrcTerminateAndPlacesNothing(String field, boolean write, int offset,
            String mask) throws Exception {
        ByteBuf memory = server.region.buffer();
        byte[] before = ByteBufUtil.getBytes(memory, 0, RawPeerServer.REGION_SIZE);
        try (Session s = new Session()) {
            ByteBuf ulpdu = write
                    ? tagged(DdpHeaders.controlByte(true, true), RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE),
                            server.region.stag(), server.region.address() + (5 << 20), 64)
                    : send(true, 1, 0, 64);
            s.peer.sendCorrupted(ulpdu, offset, Integer.decode(mask));
            s.expectTerminated(TerminateError.LLP_CRC_ERROR, null, false, 900, 901);
        }
        byte[] after = ByteBufUtil.getBytes(memory, 0, RawPeerServer.REGION_SIZE);
        for (int i = 0; i < before.length; i++) {
            if (before[i] != after[i]) {
                fail(field + " flipped: octet " + i + " of the region changed from " + before[i] + " to " + after[i]
                        + " though its FPDU failed its CRC");
            }
        }
    }

    /** A Read Response whose FPDU fails its CRC never completes the Read: it is flushed with the stream. */
    @Test
    void aReadResponseWithABadCrcNeverCompletesTheRead() throws Exception {
        try (Session s = new Session()) {
            s.peer.send(goodWrite(8));
            s.served.qp.postSend(SendWorkRequest.read(77, 0x5000_0000L, PEER_SINK_STAG,
                    new Sge(server.region, 2 * RawPeerServer.RECEIVE_SIZE, 64)));
            ByteBuf request = Unpooled.wrappedBuffer(s.peer.awaitReadRequest());
            int body = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            s.peer.sendCorrupted(readResponse(ReadRequestHeader.sinkStag(request, body),
                    ReadRequestHeader.sinkTaggedOffset(request, body), (int) ReadRequestHeader.readSize(request, body),
                    true));
            request.release();
            List<WorkCompletion> completions = s.expectTerminated(TerminateError.LLP_CRC_ERROR, null, false, 900, 901);
            assertTrue(completions.stream().anyMatch(wc -> wc.workRequestId() == 77
                    && wc.status() == WcStatus.WORK_REQUEST_FLUSH_ERROR), completions.toString());
            assertTrue(completions.stream().noneMatch(wc -> wc.workRequestId() == 77 && wc.status() == WcStatus.SUCCESS),
                    completions.toString());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Other queue pairs on the same RNIC

    @Test
    void otherQueuePairsOnTheSameRnicCarryOn() throws Exception {
        try (RawPeerServer.HealthyClient healthy = server.healthyClient()) {
            healthy.roundTrip();
            try (Session s = new Session()) {
                s.peer.send(goodWrite(8));
                byte[] bad = s.peer.send(tagged(DdpHeaders.controlByte(true, true, 0, 2),
                        RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), server.region.stag(), 0, 8));
                s.expectTerminated(TerminateError.DDP_TAGGED_INVALID_VERSION, bad, false, 900, 901);
            }
            healthy.roundTrip();
            // And a new connection on the same listener still works.
            try (RawPeerServer.HealthyClient another = server.healthyClient()) {
                another.roundTrip();
            }
            healthy.roundTrip();
        }
    }

    @Test
    void anotherQueuePairCarriesOnAfterTheIrdOverflow() throws Exception {
        try (RawPeerServer.HealthyClient healthy = server.healthyClient()) {
            readRequestsBeyondTheIrdAreDdpNoBuffer();
            healthy.roundTrip();
        }
    }

    @Test
    void anotherQueuePairCarriesOnAfterAPeerReset() throws Exception {
        try (RawPeerServer.HealthyClient healthy = server.healthyClient()) {
            try (Session s = new Session()) {
                s.peer.send(send(false, 1, 0, 16));
                s.peer.reset();
                s.expectServerDown(null, 900, 901);
            }
            healthy.roundTrip();
        }
    }

    @Test
    void anotherQueuePairCarriesOnAfterABadCrc() throws Exception {
        try (RawPeerServer.HealthyClient healthy = server.healthyClient()) {
            try (Session s = new Session()) {
                s.peer.send(goodWrite(8));
                s.peer.sendCorrupted(send(true, 1, 0, 8));
                s.expectTerminated(TerminateError.LLP_CRC_ERROR, null, false, 900, 901);
            }
            healthy.roundTrip();
        }
    }
}
