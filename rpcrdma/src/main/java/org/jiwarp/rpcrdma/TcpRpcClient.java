package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * ONC RPC over TCP with record marking (RFC 5531 section 11): each call goes as one record
 * fragment whose 4-octet header has the last-fragment bit and the length; replies may come in
 * several fragments and in any order, matched to their calls by xid. Calls may be made from
 * several threads at once and are pipelined on the one connection, as the Linux client does.
 * For MOUNT, which NFSv3 over RDMA still reaches over TCP (RFC 8267 section 5.1), and for NFS
 * over TCP itself.
 */
public final class TcpRpcClient implements RpcTransport {

    private static final int LAST_FRAGMENT = 0x8000_0000;
    /** The longest reply taken: a 1 MiB READ with its headers. */
    private static final int MAX_RECORD = (1 << 20) + 64 * 1024;
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String peer;
    private final AtomicInteger xids = new AtomicInteger((int) System.nanoTime());
    private final Map<Integer, CompletableFuture<ByteBuf>> pending = new ConcurrentHashMap<>();
    private volatile RpcException failure;

    private TcpRpcClient(Socket socket, String peer) throws IOException {
        this.socket = socket;
        this.peer = peer;
        this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        Thread reader = new Thread(this::readReplies, "rpc-tcp-reader " + peer);
        reader.setDaemon(true);
        reader.start();
    }

    public static TcpRpcClient connect(InetSocketAddress server) {
        Socket socket = new Socket();
        String peer = server.getHostString() + " port " + server.getPort();
        try {
            socket.connect(server, 10_000);
            socket.setTcpNoDelay(true);
            return new TcpRpcClient(socket, peer);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already failing
            }
            throw new RpcException("cannot connect to " + peer + " over TCP: " + Failures.describe(e), e);
        }
    }

    /**
     * Calls and returns the reply's results (after an accepted, successful reply header); the
     * caller releases them.
     *
     * @throws RpcException when the server denies the call or the connection fails
     */
    public ByteBuf call(int program, int version, int procedure, AuthSys credential, Consumer<ByteBuf> arguments) {
        RpcRdmaReply reply = call(RpcRdmaCall.inline(program, version, procedure, arguments), credential);
        try {
            Rpc.getAcceptedReply(reply.message());
            return reply.message();
        } catch (RuntimeException e) {
            reply.release();
            throw e;
        }
    }

    /** A call; a Read chunk's data goes inline at the end of the arguments with its XDR padding. */
    @Override
    public RpcRdmaReply call(RpcRdmaCall call, AuthSys credential) {
        int xid = xids.incrementAndGet();
        ByteBuf message = Unpooled.buffer(256);
        message.writeInt(0); // the record mark, filled in below
        Rpc.putCall(message, xid, call.program(), call.version(), call.procedure(), credential);
        call.arguments().accept(message);
        ByteBuf data = call.readChunk();
        int dataLength = data == null ? 0 : data.readableBytes();
        int length = message.readableBytes() - 4 + dataLength + Xdr.pad(dataLength);
        if (length > MAX_RECORD) {
            message.release();
            throw new RpcException("a call of " + length + " octets, more than " + MAX_RECORD);
        }
        message.setInt(0, LAST_FRAGMENT | length);
        CompletableFuture<ByteBuf> reply = new CompletableFuture<>();
        pending.put(xid, reply);
        boolean answered = false;
        try {
            synchronized (out) {
                out.write(message.array(), message.arrayOffset() + message.readerIndex(), message.readableBytes());
                if (dataLength > 0) {
                    data.getBytes(data.readerIndex(), out, dataLength);
                    out.write(new byte[Xdr.pad(dataLength)]);
                }
                out.flush();
            }
            if (failure != null) {
                reply.completeExceptionally(failure); // the reader ended before the call was pending
            }
            ByteBuf answer = reply.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            answered = true;
            return new RpcRdmaReply(null, answer, Unpooled.EMPTY_BUFFER, 0);
        } catch (IOException e) {
            throw fail(new RpcException("the TCP connection to " + peer + " failed: " + Failures.describe(e), e));
        } catch (TimeoutException e) {
            throw new RpcException("no reply from " + peer + " within " + CALL_TIMEOUT.toSeconds() + " seconds");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RpcException r ? r : new RpcException(Failures.describe(e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("interrupted while waiting for a reply", e);
        } finally {
            message.release();
            pending.remove(xid);
            if (!answered) {
                reply.thenAccept(ByteBuf::release); // a reply that comes after the call gave up
            }
        }
    }

    private void readReplies() {
        try {
            while (true) {
                ByteBuf record = readRecord();
                CompletableFuture<ByteBuf> call = record.readableBytes() >= 4 ? pending.remove(Rpc.peekXid(record)) : null;
                if (call == null || !call.complete(record)) {
                    record.release(); // a reply to a call that timed out, or not a reply at all
                }
            }
        } catch (IOException | RuntimeException e) {
            fail(new RpcException(socket.isClosed() ? "the TCP connection to " + peer + " is closed"
                    : "the TCP connection to " + peer + " failed: " + Failures.describe(e), e));
        }
    }

    private ByteBuf readRecord() throws IOException {
        ByteBuf record = PooledByteBufAllocator.DEFAULT.heapBuffer();
        try {
            while (true) {
                int mark = readMark();
                int length = mark & ~LAST_FRAGMENT;
                if (record.readableBytes() + (long) length > MAX_RECORD) {
                    throw new IOException("the server sent a record of more than " + MAX_RECORD + " octets");
                }
                record.ensureWritable(length);
                for (int left = length; left > 0; ) {
                    int n = record.writeBytes(in, left);
                    if (n < 0) {
                        throw new IOException("the server closed the connection inside a record");
                    }
                    left -= n;
                }
                if ((mark & LAST_FRAGMENT) != 0) {
                    return record;
                }
            }
        } catch (IOException | RuntimeException e) {
            record.release();
            throw e;
        }
    }

    private int readMark() throws IOException {
        int mark = 0;
        for (int i = 0; i < 4; i++) {
            int b = in.read();
            if (b < 0) {
                throw new IOException(i == 0 ? "the server closed the connection" : "the server closed the connection inside a record mark");
            }
            mark = mark << 8 | b;
        }
        return mark;
    }

    private RpcException fail(RpcException e) {
        if (failure == null) {
            failure = e;
        }
        pending.values().forEach(call -> call.completeExceptionally(failure));
        return e;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to do
        }
    }
}
