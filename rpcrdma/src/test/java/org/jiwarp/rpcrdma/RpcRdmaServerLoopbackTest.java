package org.jiwarp.rpcrdma;

import static org.jiwarp.rpcrdma.TestProgram.BLOCK;
import static org.jiwarp.rpcrdma.TestProgram.BULK;
import static org.jiwarp.rpcrdma.TestProgram.LONG;
import static org.jiwarp.rpcrdma.TestProgram.NULL;
import static org.jiwarp.rpcrdma.TestProgram.PROGRAM;
import static org.jiwarp.rpcrdma.TestProgram.TAIL;
import static org.jiwarp.rpcrdma.TestProgram.pattern;
import static org.jiwarp.rpcrdma.TestProgram.sum;
import static org.jiwarp.rpcrdma.TestProgram.summed;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.jiwarp.rnic.Rnic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The responder over loopback TCP on its own RNIC, against jiwarp's {@link RpcRdmaClient} (and a
 * {@link RawRequester} for what that client never sends), serving {@link TestProgram}.
 */
class RpcRdmaServerLoopbackTest {

    private static final int CREDITS = 4;

    private Rnic serverRnic;
    private RpcRdmaServer server;
    private Rnic clientRnic;
    private final TestProgram program = new TestProgram(1 << 20);

    @BeforeEach
    void start() {
        serverRnic = Rnic.open();
        RpcHandler programs = program.programs();
        server = RpcRdmaServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0), programs,
                new RpcRdmaServer.Options(CREDITS, 4096, 4, 4, 16, 1 << 20));
        clientRnic = Rnic.open();
    }

    @AfterEach
    void stop() {
        program.release();
        clientRnic.close();
        server.close();
        serverRnic.close();
    }

    private RpcRdmaClient client(boolean remoteInvalidation) {
        return RpcRdmaClient.connect(clientRnic, server.localAddress(), new RpcRdmaClient.Options(8, 4096,
                remoteInvalidation, Duration.ZERO, Duration.ofSeconds(20)));
    }

    @Test
    @Timeout(60)
    void inlineCallAndReplyAndTheGrant() {
        try (RpcRdmaClient client = client(true)) {
            assertEquals(new PrivateData(1, false, 4096, 4096), client.serverPrivateData());
            RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, NULL, out -> { }), AuthSys.root("t"));
            try {
                assertEquals(RpcRdmaHeader.RDMA_MSG, reply.header().procedure());
                Rpc.getAcceptedReply(reply.message());
                assertEquals(0, reply.message().readableBytes(), "NULL has no results");
            } finally {
                reply.release();
            }
            assertEquals(CREDITS, client.granted(), "RFC 8166 section 3.3.1: the grant is the server's credits");
            byte[] data = pattern(100);
            assertEquals(sum(data), summed(client, data));
            RpcException unavailable = assertThrows(RpcException.class, () -> accepted(client, RpcRdmaCall.inline(
                    PROGRAM + 1, 1, NULL, out -> { })));
            assertTrue(unavailable.getMessage().contains("program"), unavailable.getMessage());
            RpcException mismatch = assertThrows(RpcException.class, () -> accepted(client, RpcRdmaCall.inline(
                    PROGRAM, 2, NULL, out -> { })));
            assertTrue(mismatch.getMessage().contains("1 to 1"), mismatch.getMessage());
            RpcException procedure = assertThrows(RpcException.class, () -> accepted(client, RpcRdmaCall.inline(
                    PROGRAM, 1, 99, out -> { })));
            assertTrue(procedure.getMessage().contains("procedure"), procedure.getMessage());
        }
    }

    @Test
    @Timeout(60)
    void aLongCallComesInAPositionZeroReadChunk() {
        try (RpcRdmaClient client = client(true)) {
            byte[] data = new byte[10_000]; // over the 4 KiB inline threshold: RDMA_NOMSG
            new Random(1).nextBytes(data);
            assertEquals(sum(data), summed(client, data));
        }
    }

    @Test
    @Timeout(60)
    void readChunkDataIsSplicedAtItsPositionAndBulkResultsGoToTheWriteChunk() {
        try (RpcRdmaClient client = client(true)) {
            byte[] data = new byte[100_001]; // not a multiple of 4: the roundup is the server's to restore
            new Random(2).nextBytes(data);
            ByteBuf chunk = Unpooled.directBuffer(data.length).writeBytes(data);
            try {
                RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, BULK,
                        out -> Xdr.putInt(out, data.length)).withReadChunk(chunk).withWriteChunk(128 * 1024),
                        AuthSys.root("t"));
                try {
                    Rpc.getAcceptedReply(reply.message());
                    assertEquals(data.length, Xdr.getInt(reply.message()), "the data item's length stays inline");
                    assertEquals(0, reply.message().readableBytes(), "the data itself is not in the XDR stream");
                    assertArrayEquals(data, ByteBufUtil.getBytes(reply.writeChunkData()), "the Write chunk");
                } finally {
                    reply.release();
                }
            } finally {
                chunk.release();
            }
        }
    }

    /**
     * RFC 8166 section 3.4.5.2: the requester leaves a Read chunk's XDR roundup out of the inline
     * stream; the server puts it back, so what follows the chunk decodes.
     */
    @Test
    @Timeout(60)
    void aReadChunkInTheMiddleOfTheArgumentsGetsItsRoundupBack() throws Exception {
        byte[] data = pattern(5);
        ByteBuf chunk = Unpooled.directBuffer(5).writeBytes(data);
        try (RawRequester raw = new RawRequester(server.localAddress(), false)) {
            RdmaSegment segment = raw.expose(chunk);
            ByteBuf args = Unpooled.buffer().writeInt(5).writeInt(0x7a11); // the length, then the int after the data
            // Position 44: after the 40 octets of the call header and the opaque's length word.
            raw.send(RawRequester.call(1, TAIL, List.of(new ReadSegment(44, segment)), args));
            ByteBuf reply = next(raw);
            try {
                RpcRdmaHeader.decode(reply);
                Rpc.getAcceptedReply(reply);
                assertEquals(5, Xdr.getInt(reply));
                assertEquals(sum(data), Xdr.getInt(reply));
                assertEquals(0x7a11, Xdr.getInt(reply), "the int after the chunk's data");
            } finally {
                reply.release();
            }
        } finally {
            chunk.release();
        }
    }

    @Test
    @Timeout(60)
    void bulkResultsWithoutAWriteChunkComeInline() {
        try (RpcRdmaClient client = client(true)) {
            byte[] data = pattern(101);
            RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, BULK, out -> Xdr.putOpaque(out, data)),
                    AuthSys.root("t"));
            try {
                Rpc.getAcceptedReply(reply.message());
                assertArrayEquals(data, Xdr.getOpaque(reply.message(), 1 << 20));
                assertEquals(0, reply.message().readableBytes(), "with its roundup, and nothing after it");
            } finally {
                reply.release();
            }
        }
    }

    @Test
    @Timeout(60)
    void aLongReplyGoesInTheReplyChunkAndWithoutOneIsErrChunk() {
        try (RpcRdmaClient client = client(true)) {
            RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, LONG, out -> Xdr.putInt(out, 20_000))
                    .withReplyChunk(32 * 1024), AuthSys.root("t"));
            try {
                assertEquals(RpcRdmaHeader.RDMA_NOMSG, reply.header().procedure(), reply.header()::toString);
                Rpc.getAcceptedReply(reply.message());
                assertArrayEquals(pattern(20_000), Xdr.getOpaque(reply.message(), 1 << 20));
            } finally {
                reply.release();
            }
            RpcException tooSmall = assertThrows(RpcException.class, () -> client.call(RpcRdmaCall.inline(PROGRAM, 1,
                    LONG, out -> Xdr.putInt(out, 20_000)).withReplyChunk(8 * 1024), null).release());
            assertTrue(tooSmall.getMessage().contains("ERR_CHUNK"), tooSmall.getMessage());
            RpcException none = assertThrows(RpcException.class, () -> client.call(RpcRdmaCall.inline(PROGRAM, 1,
                    LONG, out -> Xdr.putInt(out, 20_000)), null).release());
            assertTrue(none.getMessage().contains("ERR_CHUNK"), none.getMessage());
            assertEquals(sum(pattern(8)), summed(client, pattern(8)), "the connection serves on");
        }
    }

    @Test
    @Timeout(60)
    void sendWithInvalidateOnlyWhenTheClientsPrivateDataAcceptsIt() {
        for (boolean accepts : new boolean[] {true, false}) {
            try (RpcRdmaClient client = client(accepts)) {
                ByteBuf chunk = Unpooled.directBuffer(64).writeZero(64);
                try {
                    RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, BULK, out -> Xdr.putInt(out, 64))
                            .withReadChunk(chunk).withWriteChunk(64), null);
                    try {
                        assertEquals(accepts, reply.invalidatedStag() != 0, "remote invalidation accepted: " + accepts);
                        assertEquals(accepts ? 1 : 0, client.remoteInvalidations());
                    } finally {
                        reply.release();
                    }
                } finally {
                    chunk.release();
                }
            }
        }
    }

    /**
     * Two clients, eight threads each, as many calls in flight as the grant lets them: every call
     * is answered right, none is beyond the grant, and nothing is held afterwards.
     */
    @Test
    @Timeout(120)
    void manyCallsInFlightFromTwoClientsWithinTheGrant() throws Exception {
        try (RpcRdmaClient a = client(true); RpcRdmaClient b = client(false)) {
            ExecutorService threads = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 16; t++) {
                    RpcRdmaClient client = t % 2 == 0 ? a : b;
                    int seed = t;
                    done.add(threads.submit(() -> {
                        Random random = new Random(seed);
                        for (int i = 0; i < 20; i++) {
                            byte[] data = new byte[random.nextInt(12_000)]; // inline or Position Zero Read chunk
                            random.nextBytes(data);
                            assertEquals(sum(data), summed(client, data));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                threads.shutdownNow();
            }
        }
        assertEquals(0, server.excessCalls(), "the clients kept to the grant, and the server counted right");
        waitFor(() -> server.regionsHeld() == 0 && server.connections() == 0);
    }

    /**
     * Calls beyond the grant (RFC 8166 section 3.3.1 forbids them the requester and leaves the answer
     * to the responder) are answered at once with an RPC-layer error (SYSTEM_ERR), without the
     * handler; the granted ones are served.
     */
    @Test
    @Timeout(60)
    void callsBeyondTheGrantAreAnsweredWithSystemErr() throws Exception {
        try (RawRequester raw = new RawRequester(server.localAddress(), false)) {
            for (int xid = 1; xid <= CREDITS + 2; xid++) {
                raw.send(RawRequester.call(xid, BLOCK, List.of(), Unpooled.EMPTY_BUFFER));
            }
            for (int xid = CREDITS + 1; xid <= CREDITS + 2; xid++) {
                ByteBuf reply = next(raw);
                assertEquals(xid, RpcRdmaHeader.decode(reply).xid(), "the calls beyond the grant are answered first");
                RpcException e = assertThrows(RpcException.class, () -> Rpc.getAcceptedReply(reply));
                assertTrue(e.getMessage().contains("system error"), e.getMessage());
                reply.release();
            }
            assertEquals(2, server.excessCalls());
            program.release();
            for (int i = 1; i <= CREDITS; i++) {
                ByteBuf reply = next(raw);
                RpcRdmaHeader header = RpcRdmaHeader.decode(reply);
                assertEquals(CREDITS, header.credits());
                assertEquals(header.xid(), Rpc.getAcceptedReply(reply));
                reply.release();
            }
        }
    }

    /**
     * RFC 8166 section 4.5: ERR_VERS (in the call's version) and ERR_CHUNK; messages shorter than a
     * header, RDMA_ERROR and RDMA_DONE dropped unanswered; and the connection goes on.
     */
    @Test
    @Timeout(60)
    void malformedHeadersAreAnsweredWithRdmaError() throws Exception {
        try (RawRequester raw = new RawRequester(server.localAddress(), false)) {
            ByteBuf vers = Unpooled.buffer();
            RpcRdmaHeader.message(0x11, 8, RpcRdmaHeader.RDMA_MSG, List.of(), List.of(), null).encode(vers);
            vers.setInt(4, 2);
            raw.send(vers);
            RpcRdmaHeader error = header(raw);
            assertEquals(0x11, error.xid());
            assertEquals(2, error.version(), "ERR_VERS carries the failing call's version");
            assertEquals(RpcRdmaHeader.RDMA_ERROR, error.procedure());
            assertEquals(RpcRdmaHeader.ERR_VERS, error.error());
            assertEquals(1, error.versLow());
            assertEquals(1, error.versHigh());

            ByteBuf badList = Unpooled.buffer();
            Xdr.putInt(badList, 0x12);
            Xdr.putInt(badList, 1);
            Xdr.putInt(badList, 8);
            Xdr.putInt(badList, RpcRdmaHeader.RDMA_MSG);
            Xdr.putInt(badList, 7); // a list discriminator that is no boolean
            badList.writeZero(8); // as long as a header: only shorter messages go unanswered
            raw.send(badList);
            assertErrChunk(0x12, header(raw));

            ByteBuf msgp = Unpooled.buffer();
            RpcRdmaHeader.message(0x13, 8, RpcRdmaHeader.RDMA_MSGP, List.of(), List.of(), null).encode(msgp);
            msgp.writeInt(4).writeInt(1024);
            raw.send(msgp);
            assertErrChunk(0x13, header(raw));

            raw.send(RawRequester.call(0x14, NULL, List.of(new ReadSegment(6, new RdmaSegment(1, 4, 0))),
                    Unpooled.EMPTY_BUFFER));
            assertErrChunk(0x14, header(raw));

            raw.send(Unpooled.buffer().writeLong(0x15)); // too short to name an xid: no answer
            ByteBuf short27 = Unpooled.buffer();
            RpcRdmaHeader.message(0x17, 8, RpcRdmaHeader.RDMA_MSG, List.of(), List.of(), null).encode(short27);
            raw.send(short27.writerIndex(RpcRdmaHeader.MIN_LENGTH - 1)); // one octet short of a header: no answer
            ByteBuf done = Unpooled.buffer();
            RpcRdmaHeader.message(0x18, 8, RpcRdmaHeader.RDMA_DONE, List.of(), List.of(), null).encode(done);
            raw.send(done);
            ByteBuf fromTheClient = Unpooled.buffer();
            RpcRdmaHeader.error(0x19, RpcRdmaHeader.VERSION, 8, RpcRdmaHeader.ERR_CHUNK).encode(fromTheClient);
            raw.send(fromTheClient.writeZero(8)); // an RDMA_ERROR as long as a header
            raw.send(RawRequester.call(0x16, NULL, List.of(), Unpooled.EMPTY_BUFFER));
            ByteBuf reply = next(raw);
            assertEquals(0x16, RpcRdmaHeader.decode(reply).xid(),
                    "the short messages, the RDMA_DONE and the RDMA_ERROR got no answer");
            assertEquals(0x16, Rpc.getAcceptedReply(reply));
            reply.release();
            assertEquals(4, server.errorsSent());
            assertEquals(4, server.dropped());
        }
    }

    /**
     * A client that goes while its call is with the handler: the call is dropped when the handler
     * answers, nothing is held, and another client is served meanwhile.
     */
    @Test
    @Timeout(30)
    void aClientThatGoesMidCallLeavesTheServerServingAnother() throws Exception {
        RawRequester gone = new RawRequester(server.localAddress(), false);
        gone.send(RawRequester.call(1, BLOCK, List.of(), Unpooled.EMPTY_BUFFER));
        assertTrue(program.awaitBlocking(1, 20), "the call reached the handler");
        gone.close();
        waitFor(() -> server.connections() == 0);
        try (RpcRdmaClient other = client(true)) {
            assertEquals(sum(pattern(9)), summed(other, pattern(9)));
            program.release();
            waitFor(() -> server.dropped() == 1);
        }
        waitFor(() -> server.regionsHeld() == 0 && server.connections() == 0);
    }

    /**
     * A Read chunk naming memory the client never registered: the client's RNIC refuses the RDMA
     * Read and terminates; that connection's call is dropped with what it held, the others served.
     */
    @Test
    @Timeout(30)
    void aReadChunkOutsideWhatTheClientRegisteredEndsThatConnectionOnly() throws Exception {
        try (RpcRdmaClient other = client(true); RawRequester hostile = new RawRequester(server.localAddress(), false)) {
            ByteBuf args = Unpooled.buffer().writeInt(4096);
            // Position 44: after the 40 octets of the call header and the opaque's length word.
            hostile.send(RawRequester.call(1, BULK, List.of(new ReadSegment(44,
                    new RdmaSegment(0x7777_7700, 4096, 0x1000))), args));
            waitFor(() -> server.connections() == 1);
            assertEquals(sum(pattern(9)), summed(other, pattern(9)));
            waitFor(() -> server.regionsHeld() == 0);
            assertEquals(1, server.dropped());
        }
    }

    private static void assertErrChunk(int xid, RpcRdmaHeader error) {
        assertEquals(xid, error.xid());
        assertEquals(RpcRdmaHeader.RDMA_ERROR, error.procedure());
        assertEquals(RpcRdmaHeader.ERR_CHUNK, error.error());
    }

    private static ByteBuf next(RawRequester raw) throws InterruptedException {
        ByteBuf reply = raw.nextReply();
        assertNotNull(reply, "no reply within 10 s");
        return reply;
    }

    private static RpcRdmaHeader header(RawRequester raw) throws InterruptedException {
        ByteBuf reply = next(raw);
        try {
            return RpcRdmaHeader.decode(reply);
        } finally {
            reply.release();
        }
    }

    /** Polls {@code condition} until it holds; the test's timeout bounds the wait. */
    private static void waitFor(BooleanSupplier condition) throws InterruptedException {
        while (!condition.getAsBoolean()) {
            Thread.sleep(10);
        }
    }

    /** Makes {@code call} and checks its reply is accepted with SUCCESS. */
    private static void accepted(RpcRdmaClient client, RpcRdmaCall call) {
        RpcRdmaReply reply = client.call(call, null);
        try {
            Rpc.getAcceptedReply(reply.message());
        } finally {
            reply.release();
        }
    }

}
