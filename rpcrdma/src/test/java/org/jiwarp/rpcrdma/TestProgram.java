package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The RPC program the responder's tests serve (program {@value #PROGRAM}, version 1): it echoes,
 * sums, hands bulk data back as a DDP-eligible item, makes long replies, and blocks on demand,
 * counting the calls that reach it where a test waits for them.
 */
final class TestProgram implements RpcHandler {

    static final int PROGRAM = 400017;
    static final int NULL = 0;
    /** Arguments: an opaque; results: its length and a sum of its octets. */
    static final int SUM = 1;
    /** Arguments: an opaque; results: its length word, then the data as a DDP-eligible item. */
    static final int BULK = 2;
    /** Waits for {@link #release}; results: none. */
    static final int BLOCK = 3;
    /** Arguments: n; results: an opaque of n patterned octets. */
    static final int LONG = 4;
    /** Arguments: an opaque, then an int; results: the opaque's length and sum, then the int. */
    static final int TAIL = 5;

    private final int maxBulk;
    private final AtomicInteger blocking = new AtomicInteger();
    private final AtomicInteger longReplies = new AtomicInteger();
    private volatile CountDownLatch release = new CountDownLatch(1);

    /** @param maxBulk the most octets BULK takes */
    TestProgram(int maxBulk) {
        this.maxBulk = maxBulk;
    }

    /** This program, as a server's handler dispatches to it. */
    RpcHandler programs() {
        return RpcPrograms.builder().add(PROGRAM, 1, this).build();
    }

    /** BLOCK calls that have reached the handler. */
    int blocking() {
        return blocking.get();
    }

    /** LONG calls that have reached the handler. */
    int longReplies() {
        return longReplies.get();
    }

    /** Whether {@code calls} BLOCK calls reached the handler within {@code seconds}. */
    boolean awaitBlocking(int calls, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (blocking.get() < calls) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Lets the BLOCK calls waiting, and those to come, answer. */
    void release() {
        release.countDown();
    }

    /** BLOCK calls from now on wait for the next {@link #release}. */
    void blockAgain() {
        release = new CountDownLatch(1);
    }

    @Override
    public RpcReply handle(RpcCall call) {
        ByteBuf args = call.arguments();
        switch (call.procedure()) {
            case NULL:
                return RpcReply.success(null);
            case SUM: {
                byte[] data = Xdr.getOpaque(args, 1 << 20);
                ByteBuf out = Unpooled.buffer(8);
                Xdr.putInt(out, data.length);
                Xdr.putInt(out, sum(data));
                return RpcReply.success(out);
            }
            case BULK: {
                int length = Xdr.getLength(args, maxBulk, "the bulk data");
                ByteBuf data = args.readRetainedSlice(length);
                ByteBuf out = Unpooled.buffer(4);
                Xdr.putInt(out, length);
                return RpcReply.success(out, data);
            }
            case BLOCK:
                CountDownLatch latch = release;
                blocking.incrementAndGet();
                try {
                    latch.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return RpcReply.success(null);
            case LONG: {
                longReplies.incrementAndGet();
                int n = Xdr.getInt(args);
                ByteBuf out = Unpooled.buffer(n + 8);
                Xdr.putOpaque(out, pattern(n));
                return RpcReply.success(out);
            }
            case TAIL: {
                byte[] data = Xdr.getOpaque(args, 1 << 20);
                ByteBuf out = Unpooled.buffer(12);
                Xdr.putInt(out, data.length);
                Xdr.putInt(out, sum(data));
                Xdr.putInt(out, Xdr.getInt(args));
                return RpcReply.success(out);
            }
            default:
                return RpcReply.procUnavail();
        }
    }

    /** SUM of {@code data} by {@code client}: the sum the server computed, its length checked. */
    static int summed(RpcRdmaClient client, byte[] data) {
        RpcRdmaReply reply = client.call(RpcRdmaCall.inline(PROGRAM, 1, SUM, out -> Xdr.putOpaque(out, data)),
                AuthSys.root("t"));
        try {
            Rpc.getAcceptedReply(reply.message());
            assertEquals(data.length, Xdr.getInt(reply.message()));
            return Xdr.getInt(reply.message());
        } finally {
            reply.release();
        }
    }

    static int sum(byte[] data) {
        int sum = 0;
        for (byte b : data) {
            sum = sum * 31 + b;
        }
        return sum;
    }

    static byte[] pattern(int n) {
        byte[] data = new byte[n];
        for (int i = 0; i < n; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        return data;
    }
}
