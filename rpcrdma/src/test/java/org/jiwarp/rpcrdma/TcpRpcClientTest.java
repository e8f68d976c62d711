package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TCP client (RFC 5531 section 11) against a scripted server on a real loopback socket:
 * pipelined calls from several threads answered out of order and in several fragments each, a
 * Read chunk's data sent inline with its XDR padding, and a server that closes mid-call.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpRpcClientTest {

    private static final int CALLS = 8;

    @Test
    void pipelinedCallsAnsweredInReverseOrderAndInFragmentsEachGetTheirOwnReply() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> serve(listener, calls -> {
                // Every call held until all have come: the client pipelines them on one connection.
                List<byte[]> replies = new ArrayList<>();
                for (byte[] call : calls) {
                    ByteBuf in = Unpooled.wrappedBuffer(call);
                    RpcCall c = Rpc.getCall(in);
                    ByteBuf out = Unpooled.buffer();
                    Rpc.putAcceptedReply(out, c.xid(), Rpc.SUCCESS);
                    Xdr.putInt(out, c.procedure() * 10); // the answer names its call
                    c.arguments().release();
                    replies.add(0, bytes(out));
                }
                return replies;
            }, CALLS));
            try (TcpRpcClient client = TcpRpcClient.connect((InetSocketAddress) listener.getLocalSocketAddress())) {
                ExecutorService pool = Executors.newFixedThreadPool(CALLS);
                try {
                    List<Future<Integer>> answers = new ArrayList<>();
                    for (int procedure = 1; procedure <= CALLS; procedure++) {
                        int p = procedure;
                        answers.add(pool.submit(() -> {
                            ByteBuf results = client.call(100003, 3, p, AuthSys.root("test"), out -> { });
                            try {
                                return Xdr.getInt(results);
                            } finally {
                                results.release();
                            }
                        }));
                    }
                    for (int procedure = 1; procedure <= CALLS; procedure++) {
                        assertEquals(procedure * 10, answers.get(procedure - 1).get(20, TimeUnit.SECONDS),
                                "the reply to procedure " + procedure);
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
            server.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void aReadChunksDataGoesInlineAtItsPositionWithItsPadding() throws Exception {
        byte[] data = {1, 2, 3, 4, 5};
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<byte[]> received = new CompletableFuture<>();
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> serve(listener, calls -> {
                received.complete(calls.get(0));
                RpcCall c = Rpc.getCall(Unpooled.wrappedBuffer(calls.get(0)));
                c.arguments().release();
                ByteBuf out = Unpooled.buffer();
                Rpc.putAcceptedReply(out, c.xid(), Rpc.SUCCESS);
                return List.of(bytes(out));
            }, 1));
            try (TcpRpcClient client = TcpRpcClient.connect((InetSocketAddress) listener.getLocalSocketAddress())) {
                RpcRdmaCall call = RpcRdmaCall.inline(100003, 3, 7, out -> Xdr.putInt(out, data.length))
                        .withReadChunk(Unpooled.wrappedBuffer(data)).withWriteChunk(4096);
                RpcRdmaReply reply = client.call(call, AuthSys.root("test"));
                assertEquals(0, reply.writeChunkData().readableBytes(), "over TCP nothing comes in a Write chunk");
                reply.release();
            }
            ByteBuf call = Unpooled.wrappedBuffer(received.get(20, TimeUnit.SECONDS));
            RpcCall c = Rpc.getCall(call);
            ByteBuf arguments = c.arguments();
            assertEquals(data.length, Xdr.getInt(arguments));
            assertArrayEquals(data, Xdr.getFixedOpaque(arguments, data.length));
            assertEquals(0, arguments.readableBytes(), "the data and its padding end the call");
            arguments.release();
            server.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void aServerThatClosesFailsTheCallInWords() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> serve(listener, calls -> null, 1));
            try (TcpRpcClient client = TcpRpcClient.connect((InetSocketAddress) listener.getLocalSocketAddress())) {
                RpcException e = assertThrows(RpcException.class,
                        () -> client.call(100003, 3, 0, null, out -> { }));
                assertTrue(e.getMessage().contains("closed"), e.getMessage());
            }
            server.get(20, TimeUnit.SECONDS);
        }
    }

    /** A scripted server: reads {@code count} calls, answers each of {@code answer}'s replies in two fragments, or closes on null. */
    private static void serve(ServerSocket listener, java.util.function.Function<List<byte[]>, List<byte[]>> answer,
            int count) {
        try (Socket socket = listener.accept()) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            List<byte[]> calls = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int mark = in.readInt();
                assertTrue(mark < 0, "a call in one fragment, the last");
                byte[] call = new byte[mark & 0x7FFF_FFFF];
                in.readFully(call);
                calls.add(call);
            }
            List<byte[]> replies = answer.apply(calls);
            if (replies == null) {
                return;
            }
            for (byte[] reply : replies) {
                int half = reply.length / 2;
                out.writeInt(half);
                out.write(reply, 0, half);
                out.writeInt(0x8000_0000 | (reply.length - half));
                out.write(reply, half, reply.length - half);
            }
            out.flush();
            in.read(); // until the client closes
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] bytes(ByteBuf out) {
        byte[] b = new byte[out.readableBytes()];
        out.readBytes(b);
        out.release();
        return b;
    }
}
