package org.jiwarp.rpcrdma;

import static org.jiwarp.rpcrdma.TestProgram.BLOCK;
import static org.jiwarp.rpcrdma.TestProgram.BULK;
import static org.jiwarp.rpcrdma.TestProgram.LONG;
import static org.jiwarp.rpcrdma.TestProgram.NULL;
import static org.jiwarp.rpcrdma.TestProgram.PROGRAM;
import static org.jiwarp.rpcrdma.TestProgram.pattern;
import static org.jiwarp.rpcrdma.TestProgram.sum;
import static org.jiwarp.rpcrdma.TestProgram.summed;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients that break the rules of RFC 8166 against the responder, each beside a well-behaved
 * {@link RpcRdmaClient} that is served meanwhile and afterwards: chunks naming memory the client
 * never registered for this connection, more calls than the grant (and the rule that closes a
 * connection whose answers beyond it stay in flight), a Reply or Write chunk too small, a client
 * that stops reading its socket while calls flow, and a client that resets while the server reads
 * its Read chunk. After each, the server holds nothing for the hostile client:
 * no region, no call, no buffer (the leak check).
 */
class RpcRdmaServerHostileClientTest {

    private static final int CREDITS = 4;
    private static final int MAX_SEGMENTS = 16;
    /**
     * The send queue depth RpcRdmaServer gives each connection: a Read per segment, a Write per
     * segment of the Write and Reply chunks and the Send, for every credit, and the credits again
     * for the excess answers.
     */
    private static final int SEND_DEPTH = CREDITS * (3 * MAX_SEGMENTS + 1) + CREDITS;

    private Rnic serverRnic;
    private RpcRdmaServer server;
    private Rnic clientRnic;
    private final TestProgram program = new TestProgram(2 << 20);

    @BeforeEach
    void start() {
        serverRnic = Rnic.open();
        RpcHandler programs = program.programs();
        // Eight workers: a hostile client's blocked calls (at most the grant, four) leave workers for the other.
        server = RpcRdmaServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0), programs,
                new RpcRdmaServer.Options(CREDITS, 4096, 4, 8, MAX_SEGMENTS, 2 << 20));
        clientRnic = Rnic.open();
    }

    @AfterEach
    void stop() {
        program.release();
        clientRnic.close();
        server.close();
        serverRnic.close();
    }

    // ---- 1. Chunks outside what the client registered for this connection ----

    @Test
    @Timeout(60)
    void aReadChunkWithAnUnknownStag() throws Exception {
        outsideTheRegistration((raw, data) -> call(1, BULK, List.of(new ReadSegment(44,
                new RdmaSegment(0x7777_7700, 4096, 0))), List.of(), null, Unpooled.buffer().writeInt(4096)), true);
    }

    @Test
    @Timeout(60)
    void aReadChunkBeginningBeyondItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.expose(data);
            return call(1, BULK, List.of(new ReadSegment(44, new RdmaSegment(region.handle(), 1024,
                    region.offset() + region.length()))), List.of(), null, Unpooled.buffer().writeInt(1024));
        }, true);
    }

    @Test
    @Timeout(60)
    void aReadChunkLongerThanItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.expose(data);
            return call(1, BULK, List.of(new ReadSegment(44, new RdmaSegment(region.handle(), 2 * region.length(),
                    region.offset()))), List.of(), null, Unpooled.buffer().writeInt(2 * region.length()));
        }, true);
    }

    @Test
    @Timeout(60)
    void aReadChunkInAnotherProtectionDomain() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeInAnotherDomain(data);
            return call(1, BULK, List.of(new ReadSegment(44, region)), List.of(), null,
                    Unpooled.buffer().writeInt(region.length()));
        }, true);
    }

    @Test
    @Timeout(60)
    void aWriteChunkWithAnUnknownStag() throws Exception {
        outsideTheRegistration((raw, data) -> call(1, BULK, List.of(),
                List.of(List.of(new RdmaSegment(0x7777_7700, 4096, 0))), null, bulkArguments(1000)), false);
    }

    @Test
    @Timeout(60)
    void aWriteChunkBeginningBeyondItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeWritable(data);
            return call(1, BULK, List.of(), List.of(List.of(new RdmaSegment(region.handle(), 1000,
                    region.offset() + region.length()))), null, bulkArguments(1000));
        }, false);
    }

    @Test
    @Timeout(60)
    void aWriteChunkLongerThanItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeWritable(data.slice(0, 512));
            return call(1, BULK, List.of(), List.of(List.of(new RdmaSegment(region.handle(), 1000,
                    region.offset()))), null, bulkArguments(1000));
        }, false);
    }

    @Test
    @Timeout(60)
    void aWriteChunkInAnotherProtectionDomain() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeInAnotherDomain(data);
            return call(1, BULK, List.of(), List.of(List.of(region)), null, bulkArguments(1000));
        }, false);
    }

    @Test
    @Timeout(60)
    void aReplyChunkWithAnUnknownStag() throws Exception {
        outsideTheRegistration((raw, data) -> call(1, LONG, List.of(), List.of(),
                List.of(new RdmaSegment(0x7777_7700, 32 * 1024, 0)), Unpooled.buffer().writeInt(20_000)), false);
    }

    @Test
    @Timeout(60)
    void aReplyChunkBeginningBeyondItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeWritable(data);
            return call(1, LONG, List.of(), List.of(), List.of(new RdmaSegment(region.handle(), 32 * 1024,
                    region.offset() + region.length())), Unpooled.buffer().writeInt(20_000));
        }, false);
    }

    @Test
    @Timeout(60)
    void aReplyChunkLongerThanItsRegion() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeWritable(data.slice(0, 4096)); // the chunk claims 32 KiB
            return call(1, LONG, List.of(), List.of(), List.of(new RdmaSegment(region.handle(), 32 * 1024,
                    region.offset())), Unpooled.buffer().writeInt(20_000));
        }, false);
    }

    @Test
    @Timeout(60)
    void aReplyChunkInAnotherProtectionDomain() throws Exception {
        outsideTheRegistration((raw, data) -> {
            RdmaSegment region = raw.exposeInAnotherDomain(data);
            return call(1, LONG, List.of(), List.of(), List.of(region), Unpooled.buffer().writeInt(20_000));
        }, false);
    }

    /**
     * A hostile requester's call whose chunk names memory its RNIC refuses: the client's RNIC
     * answers the server's RDMA Read or Write with a Terminate, which RFC 8166 section 4.5.3 calls
     * typically fatal to the connection (its RDMA_ERROR comes only once the requester has
     * reconnected): the connection goes, no reply reaches the client (its receives are flushed),
     * the call is dropped with everything it held (a Read's sink before the handler ever saw the
     * call), and the other client is served before and after.
     */
    private void outsideTheRegistration(BiFunction<RawRequester, ByteBuf, ByteBuf> hostileCall, boolean read)
            throws Exception {
        ByteBuf data = Unpooled.directBuffer(32 * 1024).writeZero(32 * 1024);
        try (RpcRdmaClient other = client(); RawRequester hostile = new RawRequester(server.localAddress(), false)) {
            assertEquals(sum(pattern(9)), summed(other, pattern(9)));
            assertEquals(2, server.connections());
            hostile.send(hostileCall.apply(hostile, data));
            waitFor(() -> server.connections() == 1, "the hostile connection went");
            IllegalStateException flushed = assertThrows(IllegalStateException.class, hostile::nextReply,
                    "no reply reaches the hostile client: its receive completes flushed");
            assertTrue(flushed.getMessage().contains("receive failed"), flushed.getMessage());
            assertEquals(sum(pattern(300)), summed(other, pattern(300)), "the other client is served on");
            waitFor(() -> server.regionsHeld() == 0 && server.callsInProgress() == 0, "nothing held");
            if (read) {
                assertEquals(1, server.dropped(), "the call whose Read chunk was refused is dropped");
            }
            assertEquals(0, server.errorsSent(),
                    "RFC 8166 section 4.5.3: no RDMA_ERROR on the connection a refused RDMA Read or Write ends");
        } finally {
            data.release();
        }
    }

    // ---- 2. More calls than the grant ----

    /**
     * Twice the grant at once, without waiting (RFC 8166 section 3.3.1): the calls beyond the grant
     * are answered SYSTEM_ERR at once, each naming its xid and granting the credits, without the
     * handler; the granted ones reach the handler and are answered when it returns; the connection
     * stays (fewer excess answers in flight than the grant) and its grant is whole again after;
     * the other client is served while the hostile one holds every credit it has.
     */
    @Test
    @Timeout(60)
    void twiceTheGrantAtOnce() throws Exception {
        try (RpcRdmaClient other = client(); RawRequester hostile = new RawRequester(server.localAddress(), false)) {
            for (int xid = 1; xid <= 2 * CREDITS; xid++) {
                hostile.send(call(xid, BLOCK, List.of(), List.of(), null, Unpooled.EMPTY_BUFFER));
            }
            for (int xid = CREDITS + 1; xid <= 2 * CREDITS; xid++) {
                ByteBuf reply = next(hostile);
                try {
                    RpcRdmaHeader header = RpcRdmaHeader.decode(reply);
                    assertEquals(xid, header.xid(), "the calls beyond the grant are answered first, in order");
                    assertEquals(RpcRdmaHeader.RDMA_MSG, header.procedure());
                    assertEquals(CREDITS, header.credits(), "the answer grants the credits");
                    assertEquals(List.of(), header.writeList());
                    RpcException e = assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(reply));
                    assertTrue(e.getMessage().contains("system error"), e.getMessage());
                } finally {
                    reply.release();
                }
            }
            waitFor(() -> program.blocking() == CREDITS, "the granted calls reached the handler");
            assertEquals(CREDITS, server.excessCalls(), "exactly the calls beyond the grant");
            // The excess answers' Send completions may come a little after the client has them.
            waitFor(() -> server.callsInProgress() == CREDITS, "the granted calls held, nothing for the excess");
            assertEquals(sum(pattern(77)), summed(other, pattern(77)), "the other client is served meanwhile");
            assertEquals(2, server.connections(), "fewer excess answers in flight than the grant: it stays");
            program.release();
            boolean[] answered = new boolean[CREDITS + 1];
            for (int i = 0; i < CREDITS; i++) {
                ByteBuf reply = next(hostile);
                try {
                    RpcRdmaHeader header = RpcRdmaHeader.decode(reply);
                    assertEquals(CREDITS, header.credits());
                    assertEquals(header.xid(), Rpc.getAcceptedReply(reply));
                    answered[header.xid()] = true;
                } finally {
                    reply.release();
                }
            }
            for (int xid = 1; xid <= CREDITS; xid++) {
                assertTrue(answered[xid], "the granted call " + xid + " was answered");
            }
            waitFor(() -> server.callsInProgress() == 0, "the granted calls are done");
            program.blockAgain();
            for (int xid = 100; xid < 100 + CREDITS; xid++) {
                hostile.send(call(xid, BLOCK, List.of(), List.of(), null, Unpooled.EMPTY_BUFFER));
            }
            waitFor(() -> program.blocking() == 2 * CREDITS, "the whole grant is held by the handler again");
            program.release();
            for (int i = 0; i < CREDITS; i++) {
                ByteBuf reply = next(hostile);
                try {
                    RpcRdmaHeader.decode(reply);
                    assertTrue(Rpc.getAcceptedReply(reply) >= 100, "the whole grant serves again");
                } finally {
                    reply.release();
                }
            }
            assertEquals(CREDITS, server.excessCalls(), "no credit was lost to the excess");
        }
        waitFor(() -> server.regionsHeld() == 0 && server.connections() == 0, "nothing held");
    }

    /**
     * The responder's rule for a client that goes on beyond the grant (RFC 8166 section 3.3.1 leaves
     * it to the responder): a connection with as many SYSTEM_ERR answers in flight as the grant is
     * closed at the next call beyond the grant. A client that stops reading keeps its answers in
     * flight: its socket is filled first with long replies, one call at a time, until three replies
     * stay unsent (their calls stay in service); then the grant is held, one call by the handler and
     * the others waiting for a place in service, the grant's worth of calls beyond it is answered
     * (and stays in flight) with the connection up, and one more closes it.
     */
    @Test
    @Timeout(120)
    void asManyExcessAnswersInFlightAsTheGrantAndOneMoreCloses() throws Exception {
        try (RpcRdmaClient other = client(); MpaRequester stuck = new MpaRequester(server.localAddress(), true)) {
            int xid = 0;
            // One call at a time, each answered before the next (its reply posted: two regions for
            // each call held), until three replies stay behind the full socket.
            while (server.callsInProgress() < 3) {
                assertTrue(xid < 1000, "the client's socket never filled");
                xid++;
                assertTrue(stuck.send(call(xid, LONG, List.of(), List.of(), List.of(new RdmaSegment(0x5151_5100,
                        512 * 1024, 0)), Unpooled.buffer().writeInt(256 * 1024))));
                int sent = xid;
                waitFor(() -> program.longReplies() == sent && server.regionsHeld() == 2 * server.callsInProgress(),
                        "call " + sent + " answered");
            }
            assertEquals(0, server.excessCalls(), "one call at a time never went beyond the grant");
            int stuckCalls = server.callsInProgress();
            for (int i = 0; i < CREDITS; i++) {
                assertTrue(stuck.send(call(++xid, BLOCK, List.of(), List.of(), null, Unpooled.EMPTY_BUFFER)));
            }
            // As many reach the handler as places in service are left; the rest wait, holding their credits.
            waitFor(() -> program.blocking() == CREDITS - stuckCalls
                    && server.callsInProgress() == stuckCalls + CREDITS, "the grant is held");
            for (int i = 0; i < CREDITS; i++) {
                assertTrue(stuck.send(call(++xid, NULL, List.of(), List.of(), null, Unpooled.EMPTY_BUFFER)));
            }
            waitFor(() -> server.excessCalls() == CREDITS, "the calls beyond the grant were answered");
            assertEquals(2, server.connections(), "as many answers in flight as the grant: the connection stays");
            assertEquals(sum(pattern(21)), summed(other, pattern(21)), "the other client is served meanwhile");
            stuck.send(call(++xid, NULL, List.of(), List.of(), null, Unpooled.EMPTY_BUFFER));
            waitFor(() -> server.connections() == 1, "one more beyond the grant closes the connection");
            assertEquals(CREDITS + 1, server.excessCalls(),
                    "the call that closed it was the one after the grant's worth");
            program.release();
            assertEquals(sum(pattern(22)), summed(other, pattern(22)), "the other client is served after");
        }
        waitFor(() -> server.regionsHeld() == 0 && server.callsInProgress() == 0 && server.connections() == 0,
                "nothing held");
    }

    // ---- 3. Chunks too small for the reply ----

    /**
     * RFC 8166 sections 3.5.3 and 4.5.3: a reply too long for the client's inline size whose Reply
     * chunk is too small, or missing, and a DDP-eligible item larger than its Write chunk, are
     * answered with RDMA_ERROR ERR_CHUNK: exactly xid, version 1, the credits, RDMA_ERROR and
     * ERR_CHUNK on the wire, nothing written into the chunk, and the connection serves on.
     */
    @Test
    @Timeout(60)
    void chunksTooSmallForTheReplyAreErrChunkOnTheWire() throws Exception {
        ByteBuf replySink = Unpooled.directBuffer(8 * 1024).writeZero(8 * 1024);
        ByteBuf writeSink = Unpooled.directBuffer(512).writeZero(512);
        try (RpcRdmaClient other = client(); RawRequester hostile = new RawRequester(server.localAddress(), false)) {
            RdmaSegment reply = hostile.exposeWritable(replySink);
            RdmaSegment write = hostile.exposeWritable(writeSink);
            hostile.send(call(0x21, LONG, List.of(), List.of(), List.of(reply), Unpooled.buffer().writeInt(20_000)));
            assertErrChunkOctets(0x21, hostile);
            hostile.send(call(0x22, LONG, List.of(), List.of(), null, Unpooled.buffer().writeInt(20_000)));
            assertErrChunkOctets(0x22, hostile);
            hostile.send(call(0x23, BULK, List.of(), List.of(List.of(write)), null, bulkArguments(1000)));
            assertErrChunkOctets(0x23, hostile);
            assertEquals(3, server.errorsSent());
            assertEquals(-1, replySink.forEachByte(b -> b == 0), "nothing written into the Reply chunk");
            assertEquals(-1, writeSink.forEachByte(b -> b == 0), "nothing written into the Write chunk");
            hostile.send(call(0x24, LONG, List.of(), List.of(), null, Unpooled.buffer().writeInt(100)));
            ByteBuf served = next(hostile);
            try {
                RpcRdmaHeader.decode(served);
                assertEquals(0x24, Rpc.getAcceptedReply(served), "the connection serves on");
            } finally {
                served.release();
            }
            assertEquals(sum(pattern(5)), summed(other, pattern(5)));
        } finally {
            replySink.release();
            writeSink.release();
        }
        waitFor(() -> server.regionsHeld() == 0 && server.connections() == 0, "nothing held");
    }

    private static void assertErrChunkOctets(int xid, RawRequester raw) throws InterruptedException {
        ByteBuf reply = next(raw);
        try {
            byte[] expected = java.nio.ByteBuffer.allocate(20).putInt(xid).putInt(1).putInt(CREDITS)
                    .putInt(4 /* RDMA_ERROR */).putInt(2 /* ERR_CHUNK */).array();
            assertArrayEquals(expected, ByteBufUtil.getBytes(reply), "RDMA_ERROR ERR_CHUNK, exactly five words");
        } finally {
            reply.release();
        }
    }

    // ---- 4. A client that stops reading ----

    /**
     * A client that stops reading its socket and keeps sending calls whose replies are long (64 KiB
     * each, into a Reply chunk): the replies queue behind TCP, whose buffers fill, and their Sends
     * stop completing. The calls held for the client are then bounded by the grant three times
     * over, whatever the send queue's depth ({@link #SEND_DEPTH}, far larger): the calls in service
     * (from their pull to their Send's completion, at most the grant), the calls waiting for a
     * place in service (each holds a credit: at most the grant), and the excess answers in flight
     * (at most the grant; one more closes the connection). A call in service holds two regions
     * (its Reply chunk's source and its Send), an excess answer one, a waiting call none. The
     * client is given up by the excess rule as long as it sends, and the other client is served
     * meanwhile and after; nothing is held afterwards.
     */
    @Test
    @Timeout(120)
    void aClientThatStopsReadingIsBoundedAndGivenUp() throws Exception {
        // The other client's last call may be held until its Send completes: one call, two regions.
        int callBound = 3 * CREDITS + 1;
        int regionBound = 2 * CREDITS + CREDITS + 2;
        try (RpcRdmaClient other = client(); MpaRequester stuck = new MpaRequester(server.localAddress(), true)) {
            int mostCalls = 0;
            int mostRegions = 0;
            int sent = 0;
            long before = server.repliesPosted();
            while (server.connections() == 2 && sent < 100_000) {
                if (!stuck.send(call(sent + 1, LONG, List.of(), List.of(), List.of(new RdmaSegment(0x5151_5100,
                        128 * 1024, 0)), Unpooled.buffer().writeInt(64 * 1024)))) {
                    break; // the server closed the connection under the write
                }
                sent++;
                // Each call answered before the next (up to a bound: a waiting call is not): the grant
                // never overrun, the excess rule cannot give the client up before the replies pile up.
                long answered = before + sent;
                waitAtMost(Duration.ofMillis(200), () -> server.repliesPosted() >= answered);
                mostCalls = Math.max(mostCalls, server.callsInProgress());
                mostRegions = Math.max(mostRegions, server.regionsHeld());
                assertTrue(mostCalls <= callBound, "calls held for a client that stopped reading: " + mostCalls);
                assertTrue(mostRegions <= regionBound, "regions held for a client that stopped reading: "
                        + mostRegions);
                if (sent % 50 == 0) {
                    assertEquals(sum(pattern(33)), summed(other, pattern(33)), "the other client is served meanwhile");
                }
            }
            waitFor(() -> server.connections() == 1, "the client that stopped reading was given up");
            assertTrue(server.excessCalls() > 0 || server.dropped() > 0, "it went by a rule of the responder");
            assertEquals(sum(pattern(44)), summed(other, pattern(44)), "the other client is served after");
        }
        waitFor(() -> server.regionsHeld() == 0 && server.callsInProgress() == 0 && server.connections() == 0,
                "nothing held");
    }

    // ---- 5. A client that resets mid-call ----

    /**
     * A client that resets its connection (TCP RST) while the server's RDMA Read of its 1 MiB Read
     * chunk waits for the Read Response: the call is dropped with its sink, the connection goes,
     * and the other client is served before and after.
     */
    @Test
    @Timeout(60)
    void aClientThatResetsDuringTheReadOfItsReadChunk() throws Exception {
        try (RpcRdmaClient other = client(); MpaRequester gone = new MpaRequester(server.localAddress(), false)) {
            assertTrue(gone.send(call(1, BULK, List.of(new ReadSegment(44, new RdmaSegment(0x4242_4200, 1 << 20, 0))),
                    List.of(), null, Unpooled.buffer().writeInt(1 << 20))));
            byte[] readRequest = gone.connection.await(u -> Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST,
                    DdpHeaders.QN_READ_REQUEST), 10_000);
            assertNotNull(readRequest, "the server reads the Read chunk");
            assertEquals(1, server.callsInProgress(), "the call waits for its Read Response");
            assertEquals(1, server.regionsHeld(), "the Read's sink");
            assertEquals(sum(pattern(11)), summed(other, pattern(11)), "the other client is served meanwhile");
            gone.connection.reset();
            waitFor(() -> server.connections() == 1, "the reset connection went");
            waitFor(() -> server.regionsHeld() == 0 && server.callsInProgress() == 0, "nothing held");
            assertEquals(1, server.dropped(), "the call is dropped");
            assertEquals(sum(pattern(12)), summed(other, pattern(12)), "the other client is served after");
        }
        waitFor(() -> server.connections() == 0, "the other client went too");
    }

    // ---- helpers ----

    /**
     * A requester that speaks MPA by hand over a plain socket (the conformance library's raw peer):
     * it sends RPC-over-RDMA calls as Sends and may never read what comes back, or reset.
     */
    private static final class MpaRequester implements AutoCloseable {

        final RawConnection connection;
        private long msn = 1;

        MpaRequester(InetSocketAddress server, boolean neverRead) throws IOException {
            connection = new RawConnection(new Socket(server.getAddress(), server.getPort()));
            connection.write(MpaBytes.request(true, false, 16, new PrivateData(1, false, 4096, 4096).encode())
                    .bytes());
            MpaBytes.Parsed reply = connection.readMpaFrame(10_000);
            assertFalse(reply.reject(), "the server accepted the connection");
            if (neverRead) {
                connection.pauseReading(); // before the reader starts: it never reads
            }
            connection.startFullOperation(true, false, reply.marker());
        }

        /** Sends {@code message} (released) as one Send; false when the server has closed the connection. */
        boolean send(ByteBuf message) {
            ByteBuf ulpdu = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + message.readableBytes());
            try {
                DdpHeaders.writeUntagged(ulpdu, true, Ulpdus.rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, msn++, 0);
                ulpdu.writeBytes(message);
                connection.send(ByteBufUtil.getBytes(ulpdu));
                return true;
            } catch (IOException e) {
                return false;
            } finally {
                ulpdu.release();
                message.release();
            }
        }

        @Override
        public void close() {
            connection.close();
        }
    }

    private RpcRdmaClient client() {
        return RpcRdmaClient.connect(clientRnic, server.localAddress(), new RpcRdmaClient.Options(8, 4096, true,
                Duration.ZERO, Duration.ofSeconds(20)));
    }

    /** An RDMA_MSG call: the header with its chunks, then the RPC call with {@code arguments} (released). */
    private static ByteBuf call(int xid, int procedure, List<ReadSegment> readList, List<List<RdmaSegment>> writeList,
            List<RdmaSegment> replyChunk, ByteBuf arguments) {
        ByteBuf out = Unpooled.buffer();
        RpcRdmaHeader.message(xid, 8, RpcRdmaHeader.RDMA_MSG, readList, writeList, replyChunk).encode(out);
        Rpc.putCall(out, xid, PROGRAM, 1, procedure, null);
        out.writeBytes(arguments);
        arguments.release();
        return out;
    }

    /** BULK's arguments with its data inline: an opaque of {@code n} patterned octets. */
    private static ByteBuf bulkArguments(int n) {
        ByteBuf args = Unpooled.buffer(n + 8);
        Xdr.putOpaque(args, pattern(n));
        return args;
    }

    private static ByteBuf next(RawRequester raw) throws InterruptedException {
        ByteBuf reply = raw.nextReply();
        assertNotNull(reply, "no reply within 10 s");
        return reply;
    }

    /** Polls {@code condition} for up to 20 s; fails with {@code what} when it never holds. */
    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within 20 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Polls {@code condition} for up to {@code limit}, and goes on whether or not it came to hold. */
    private static void waitAtMost(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }
}
