package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.BitSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RpcTcpServer} over real loopback TCP: calls from {@link TcpRpcClient}, and from a raw
 * socket for what that client never sends (several fragments, records too long, garbage, calls
 * pipelined, a client that never reads).
 */
class RpcTcpServerTest {

    private static final int PROGRAM = 400018;
    private static final int NULL = 0;
    private static final int ECHO = 1;
    /** Answers an int n with n as the length word and an n-octet DDP-eligible item. */
    private static final int DDP = 2;
    /** Answers an int n with n octets of results. */
    private static final int BIG = 3;
    private static final int THROW = 4;
    /** Waits on {@link #release}. */
    private static final int BLOCK = 5;

    private final CountDownLatch release = new CountDownLatch(1);
    private RpcTcpServer server;

    @AfterEach
    void close() {
        release.countDown();
        if (server != null) {
            server.close();
        }
    }

    private RpcReply handle(RpcCall call) {
        ByteBuf args = call.arguments();
        switch (call.procedure()) {
            case NULL:
                return RpcReply.success(null);
            case ECHO:
                return RpcReply.success(Unpooled.copiedBuffer(args));
            case DDP: {
                int n = Xdr.getInt(args);
                ByteBuf data = Unpooled.buffer(n);
                for (int i = 0; i < n; i++) {
                    data.writeByte(i + 1);
                }
                return RpcReply.success(Unpooled.buffer(4).writeInt(n), data);
            }
            case BIG: {
                int n = Xdr.getInt(args);
                return RpcReply.success(Unpooled.buffer(n).writeZero(n));
            }
            case THROW:
                throw new IllegalStateException("the handler fails");
            case BLOCK:
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return RpcReply.success(null);
            default:
                return RpcReply.procUnavail();
        }
    }

    private RpcTcpServer start(RpcTcpServer.Options options) {
        RpcHandler programs = RpcPrograms.builder().add(PROGRAM, 1, this::handle).build();
        server = RpcTcpServer.listen(new InetSocketAddress("127.0.0.1", 0), programs, options);
        return server;
    }

    @Test
    @Timeout(60)
    void callsAreAnsweredWithTheirResultsAndTheDdpItemPadded() {
        start(RpcTcpServer.Options.defaults());
        assertTrue(server.localAddress().getPort() > 0);
        try (TcpRpcClient client = TcpRpcClient.connect(server.localAddress())) {
            release(client.call(PROGRAM, 1, NULL, null, a -> { }), new byte[0]);
            release(client.call(PROGRAM, 1, ECHO, AuthSys.root("t"), a -> a.writeInt(0x01020304).writeInt(7)),
                    new byte[] {1, 2, 3, 4, 0, 0, 0, 7});
            // Five octets of DDP-eligible data: the length word, the item, three octets of XDR pad.
            release(client.call(PROGRAM, 1, DDP, null, a -> a.writeInt(5)),
                    new byte[] {0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0});
            RpcException failed = assertThrows(RpcException.class, () -> client.call(PROGRAM, 1, THROW, null,
                    a -> { }));
            assertEquals("the server failed with a system error", failed.getMessage());
            RpcException mismatch = assertThrows(RpcException.class, () -> client.call(PROGRAM, 7, NULL, null,
                    a -> { }));
            assertTrue(mismatch.getMessage().contains("it speaks 1 to 1"), mismatch.getMessage());
            assertEquals(1, server.connections());
        }
    }

    @Test
    @Timeout(60)
    void theServerDeniesWhatTheRdmaServerDenies() throws Exception {
        start(RpcTcpServer.Options.defaults());
        try (Raw raw = new Raw(server.localAddress())) {
            ByteBuf call = Unpooled.buffer();
            callHeader(call, 11, 3, NULL); // RPC version 3
            raw.send(call);
            assertArrayEquals(ints(11, Rpc.REPLY, Rpc.MSG_DENIED, Rpc.RPC_MISMATCH, 2, 2), raw.record());

            call = Unpooled.buffer();
            Xdr.putInt(call, 12);
            Xdr.putInt(call, Rpc.CALL);
            Xdr.putInt(call, 2);
            Xdr.putInt(call, PROGRAM);
            Xdr.putInt(call, 1);
            Xdr.putInt(call, NULL);
            Xdr.putInt(call, 6); // RPCSEC_GSS: not taken
            Xdr.putInt(call, 0);
            Xdr.putInt(call, 0);
            Xdr.putInt(call, 0);
            raw.send(call);
            assertArrayEquals(ints(12, Rpc.REPLY, Rpc.MSG_DENIED, Rpc.AUTH_ERROR, Rpc.AUTH_BADCRED), raw.record());
        }
    }

    @Test
    @Timeout(60)
    void aRecordInSeveralFragmentsIsOneCall() throws Exception {
        start(RpcTcpServer.Options.defaults());
        try (Raw raw = new Raw(server.localAddress())) {
            ByteBuf call = Unpooled.buffer();
            callHeader(call, 21, 2, ECHO);
            for (int i = 0; i < 3000; i++) {
                call.writeInt(i);
            }
            byte[] whole = new byte[call.readableBytes()];
            call.readBytes(whole);
            call.release();
            // Three fragments and an empty one between them, the cuts not on XDR boundaries.
            raw.fragment(whole, 0, 7, false);
            raw.fragment(whole, 7, 0, false);
            raw.fragment(whole, 7, 5000, false);
            raw.fragment(whole, 5007, whole.length - 5007, true);
            byte[] reply = raw.record();
            ByteBuf in = Unpooled.wrappedBuffer(reply);
            assertEquals(21, Rpc.getAcceptedReply(in));
            assertEquals(12000, in.readableBytes());
            for (int i = 0; i < 3000; i++) {
                assertEquals(i, in.readInt());
            }
        }
    }

    @Test
    @Timeout(60)
    void aRecordLongerThanTheBoundClosesOnlyItsConnection() throws Exception {
        start(RpcTcpServer.Options.defaults().maxRecord(4096));
        try (Raw raw = new Raw(server.localAddress()); TcpRpcClient other = TcpRpcClient.connect(
                server.localAddress())) {
            release(other.call(PROGRAM, 1, NULL, null, a -> { }), new byte[0]);
            ByteBuf call = Unpooled.buffer();
            callHeader(call, 31, 2, ECHO);
            call.writeZero(3000);
            byte[] first = new byte[call.readableBytes()];
            call.readBytes(first);
            call.release();
            raw.fragment(first, 0, first.length, false);
            raw.fragment(new byte[2000], 0, 2000, true); // 5000 and more octets in the record: too long
            raw.expectClosed();
            awaitTrue(() -> server.connectionsClosedForErrors() == 1);
            release(other.call(PROGRAM, 1, ECHO, null, a -> a.writeInt(9)), new byte[] {0, 0, 0, 9});
            awaitTrue(() -> server.connections() == 1);
        }
    }

    @Test
    @Timeout(60)
    void aRecordThatIsNotACallClosesItsConnection() throws Exception {
        start(RpcTcpServer.Options.defaults());
        try (Raw raw = new Raw(server.localAddress())) {
            raw.send(Unpooled.buffer().writeInt(41).writeInt(Rpc.REPLY).writeInt(0).writeInt(0));
            raw.expectClosed();
            awaitTrue(() -> server.connectionsClosedForErrors() == 1);
        }
    }

    @Test
    @Timeout(60)
    void manyPipelinedCallsAreAllAnsweredWithFewInProgress() throws Exception {
        start(RpcTcpServer.Options.defaults().maxCallsInProgress(8));
        int calls = 500;
        try (Raw raw = new Raw(server.localAddress())) {
            ByteBuf all = Unpooled.buffer();
            for (int xid = 0; xid < calls; xid++) {
                int start = all.writerIndex();
                all.writeInt(0);
                callHeader(all, xid, 2, ECHO);
                all.writeInt(xid);
                all.setInt(start, RpcTcpConnection.LAST_FRAGMENT | (all.writerIndex() - start - 4));
            }
            raw.out.write(all.array(), all.arrayOffset(), all.readableBytes());
            raw.out.flush();
            all.release();
            BitSet seen = new BitSet();
            for (int i = 0; i < calls; i++) {
                ByteBuf in = Unpooled.wrappedBuffer(raw.record());
                int xid = Rpc.getAcceptedReply(in);
                assertEquals(xid, in.readInt(), "the reply to " + xid + " carries another call's result");
                assertTrue(!seen.get(xid), "a second reply to " + xid);
                seen.set(xid);
            }
            assertEquals(calls, seen.cardinality());
            int peak = server.peakCallsInProgress();
            assertTrue(peak <= 8, peak + " calls were in progress at once on one connection, more than 8");
        }
    }

    @Test
    @Timeout(120)
    void aClientThatNeverReadsHoldsBoundedMemoryAndOthersAreServed() throws Exception {
        int maxCalls = 8;
        int replyOctets = 64 << 10;
        start(RpcTcpServer.Options.defaults().maxCallsInProgress(maxCalls).maxRecord(16 << 10));
        Raw greedy = new Raw(server.localAddress());
        AtomicLong sent = new AtomicLong();
        // 20000 calls of 1 KiB asking 64 KiB each: 20 MB of calls, more than loopback's socket
        // buffers take, asking 1.3 GB of replies.
        Thread writer = new Thread(() -> {
            ByteBuf call = Unpooled.buffer();
            try {
                for (int xid = 0; xid < 20_000; xid++) {
                    call.clear().writeInt(0);
                    callHeader(call, xid, 2, BIG);
                    call.writeInt(replyOctets).writeZero(1024);
                    call.setInt(0, RpcTcpConnection.LAST_FRAGMENT | (call.readableBytes() - 4));
                    greedy.out.write(call.array(), call.arrayOffset(), call.readableBytes());
                    sent.addAndGet(call.readableBytes());
                }
            } catch (IOException closed) {
                // the test closes the socket under the blocked writer
            } finally {
                call.release();
            }
        }, "never-reading-client");
        writer.setDaemon(true);
        writer.start();
        try {
            long bound = maxCalls * (replyOctets + 2048L) + (16 << 10) + (256 << 10);
            long peak = 0;
            awaitTrue(() -> server.callsInProgress() >= maxCalls);
            try (TcpRpcClient other = TcpRpcClient.connect(server.localAddress())) {
                for (int i = 0; i < 200; i++) {
                    peak = Math.max(peak, server.octetsHeld());
                    release(other.call(PROGRAM, 1, ECHO, null, a -> a.writeInt(5)), new byte[] {0, 0, 0, 5});
                    Thread.sleep(5);
                }
            }
            assertTrue(peak <= bound, "the server held " + peak + " octets for a client that does not read, more "
                    + "than " + bound + " (sent " + sent.get() + ")");
            assertTrue(sent.get() > 2 * bound, "the client got only " + sent.get() + " octets out, so the bound "
                    + "above was not tested");
        } finally {
            greedy.close();
            writer.join(30_000);
        }
        awaitTrue(() -> server.connections() == 0 && server.octetsHeld() == 0 && server.callsInProgress() == 0);
    }

    @Test
    @Timeout(60)
    void aConnectionBeyondTheLimitIsClosedAndTheOthersServed() throws Exception {
        start(RpcTcpServer.Options.defaults().maxConnections(1));
        try (TcpRpcClient first = TcpRpcClient.connect(server.localAddress())) {
            release(first.call(PROGRAM, 1, NULL, null, a -> { }), new byte[0]); // the first is accepted
            try (Raw second = new Raw(server.localAddress())) {
                second.expectClosed();
            }
            assertEquals(1, server.refusedConnections());
            release(first.call(PROGRAM, 1, ECHO, null, a -> a.writeInt(3)), new byte[] {0, 0, 0, 3});
            assertEquals(1, server.connections());
        }
    }

    @Test
    @Timeout(60)
    void closeEndsWithClientsConnectedAndCallsBlocked() throws Exception {
        start(RpcTcpServer.Options.defaults());
        try (Raw idle = new Raw(server.localAddress()); Raw blocked = new Raw(server.localAddress())) {
            ByteBuf call = Unpooled.buffer();
            callHeader(call, 51, 2, BLOCK);
            blocked.send(call);
            awaitTrue(() -> server.connections() == 2 && server.callsInProgress() == 1);
            assertTimeoutPreemptively(Duration.ofSeconds(20), server::close);
            idle.expectClosed();
            blocked.expectClosed();
            assertEquals(0, server.connections());
        }
    }

    // --- helpers

    private static void callHeader(ByteBuf out, int xid, int rpcVersion, int procedure) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, Rpc.CALL);
        Xdr.putInt(out, rpcVersion);
        Xdr.putInt(out, PROGRAM);
        Xdr.putInt(out, 1);
        Xdr.putInt(out, procedure);
        Xdr.putInt(out, AuthSys.NONE);
        Xdr.putInt(out, 0);
        Xdr.putInt(out, AuthSys.NONE);
        Xdr.putInt(out, 0);
    }

    private static byte[] ints(int... values) {
        ByteBuf out = Unpooled.buffer();
        for (int v : values) {
            out.writeInt(v);
        }
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        out.release();
        return bytes;
    }

    /** Checks the results are {@code expected} and releases them. */
    private static void release(ByteBuf results, byte[] expected) {
        try {
            byte[] got = new byte[results.readableBytes()];
            results.readBytes(got);
            assertArrayEquals(expected, got);
        } finally {
            results.release();
        }
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the condition did not hold within 20 s");
            }
            Thread.sleep(10);
        }
    }

    /** A raw record-marking client. */
    private static final class Raw implements AutoCloseable {
        final Socket socket = new Socket();
        final OutputStream out;
        final DataInputStream in;

        Raw(InetSocketAddress server) throws IOException {
            socket.connect(server, 10_000);
            socket.setSoTimeout(20_000);
            out = socket.getOutputStream();
            in = new DataInputStream(socket.getInputStream());
        }

        /** {@code message} as one record of one fragment; releases it. */
        void send(ByteBuf message) throws IOException {
            byte[] bytes = new byte[message.readableBytes()];
            message.readBytes(bytes);
            message.release();
            fragment(bytes, 0, bytes.length, true);
        }

        void fragment(byte[] bytes, int offset, int length, boolean last) throws IOException {
            byte[] mark = ints((last ? RpcTcpConnection.LAST_FRAGMENT : 0) | length);
            out.write(mark);
            out.write(bytes, offset, length);
            out.flush();
        }

        /** One reply, which must come as a single fragment. */
        byte[] record() throws IOException {
            int mark = in.readInt();
            assertTrue((mark & RpcTcpConnection.LAST_FRAGMENT) != 0, "a reply in more than one fragment");
            byte[] reply = new byte[mark & ~RpcTcpConnection.LAST_FRAGMENT];
            in.readFully(reply);
            return reply;
        }

        void expectClosed() throws IOException {
            try {
                int got = in.read();
                assertEquals(-1, got, "the server sent more instead of closing");
            } catch (EOFException | SocketException closed) {
                // a reset says it as well
            } catch (java.net.SocketTimeoutException e) {
                throw new AssertionError("the server kept the connection open for 20 s", e);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
