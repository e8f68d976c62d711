package org.jiwarp.tools.rping;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.rping.RpingMessages;

/**
 * The client side of rping ({@code rping -c}): {@code count} pings of {@code size} octets, each
 * validated ({@code -V}) when asked, driven by its completions on the event loop. The result says
 * how many pings completed and their round trips.
 */
public final class RpingClient {

    /**
     * What a run did.
     *
     * @param serverLeft {@code true} when an endless run ({@code count} 0) ended because the server
     *                   closed the connection, which is how such a run ends
     */
    public record Result(long pings, long validated, Histogram roundTrips, boolean serverLeft) {
    }

    private final QueuePair qp;
    private final MemoryRegion receiveBuffer;
    private final MemoryRegion sendBuffer;
    private final MemoryRegion startBuffer;
    private final MemoryRegion rdmaBuffer;
    private final ReceiveWorkRequest receive;
    private final SendWorkRequest send;
    private final int size;
    private final long count;
    private final boolean validate;
    private final boolean verbose;
    private final Consumer<String> out;
    private final Consumer<String> debug;
    private final CompletableFuture<Result> result = new CompletableFuture<>();
    private final Histogram roundTrips = new Histogram(3);
    private long ping;
    private long validated;
    private long startedAt;
    private boolean waitingForWrite;

    private RpingClient(Rnic rnic, int size, long count, boolean validate, boolean verbose, Consumer<String> out,
            Consumer<String> debug) {
        this.debug = debug;
        this.size = size;
        this.count = count;
        this.validate = validate;
        this.verbose = verbose;
        this.out = out;
        ProtectionDomain pd = rnic.allocatePd();
        CompletionQueue cq = rnic.createCq(32);
        this.qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(16).receiveDepth(2).ird(1).ord(1));
        this.receiveBuffer = pd.register(ByteBuffer.allocateDirect(RpingMessages.INFO_LENGTH), Access.LOCAL_WRITE);
        this.sendBuffer = pd.register(ByteBuffer.allocateDirect(RpingMessages.INFO_LENGTH), 0);
        int access = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
        this.startBuffer = pd.register(ByteBuffer.allocateDirect(size), access);
        this.rdmaBuffer = pd.register(ByteBuffer.allocateDirect(size), access);
        this.receive = new ReceiveWorkRequest(0, Sge.of(receiveBuffer));
        this.send = SendWorkRequest.send(1, Sge.of(sendBuffer));
        cq.onCompletion(this::onCompletion);
        qp.postReceive(receive);
    }

    /**
     * Connects and pings; the future completes with the result, or exceptionally with what went
     * wrong (a failed connection, a failed work request with its Terminate, a data mismatch).
     *
     * @param source the local address to connect from (rping's {@code -I}), or {@code null}
     * @param count  pings to make; 0 pings until the server closes the connection
     * @param debug  where rping's {@code -d} lines go (the connection, each ping's round trip), or
     *               {@code null}
     */
    public static CompletableFuture<Result> run(Rnic rnic, InetSocketAddress server, InetSocketAddress source,
            int size, long count, boolean validate, boolean verbose, Consumer<String> out, Consumer<String> debug) {
        if (size < RpingMessages.MIN_SIZE || size > RpingMessages.MAX_SIZE) {
            throw new IllegalArgumentException("invalid size " + size + " (valid range is " + RpingMessages.MIN_SIZE
                    + " to " + RpingMessages.MAX_SIZE + ")");
        }
        RpingClient client = new RpingClient(rnic, size, count, validate, verbose, out, debug);
        client.qp.closeFuture().thenRun(() -> {
            String note = client.terminateNote();
            if (count == 0 && note.isEmpty() && client.ping > 0) {
                client.result.complete(new Result(client.ping, validate ? client.validated : 0, client.roundTrips,
                        true));
            } else {
                client.result.completeExceptionally(new IllegalStateException("the connection closed after "
                        + client.validated + (count == 0 ? "" : " of " + count) + " pings" + note));
            }
            client.deregister();
        });
        rnic.connect(client.qp, server, source, new byte[0]).whenComplete((qp, failure) -> {
            if (failure != null) {
                client.result.completeExceptionally(failure);
            } else {
                if (debug != null) {
                    debug.accept("connected to " + org.jiwarp.tools.Failures.address(server) + ": "
                            + org.jiwarp.tools.Failures.connection(qp.parameters()));
                }
                qp.execute(client::nextPing);
            }
        });
        return client.result.whenComplete((r, failure) -> client.qp.disconnect());
    }

    private String terminateNote() {
        if (qp.terminateReceived() != null) {
            return "; the server sent a Terminate: " + qp.terminateReceived().describe();
        }
        if (qp.terminateSent() != null) {
            return "; jiwarp sent a Terminate: " + qp.terminateSent().describe();
        }
        if (qp.connectionError() != null) {
            return "; the connection failed: " + org.jiwarp.tools.Failures.describe(qp.connectionError());
        }
        return "";
    }

    /** Fills start_buf and advertises it. */
    private void nextPing() {
        RpingMessages.fillPing(startBuffer.buffer(), size, ping);
        RpingMessages.writeInfo(sendBuffer.buffer(), startBuffer.address(), startBuffer.rkey(), size);
        waitingForWrite = false;
        startedAt = System.nanoTime();
        qp.postSend(send);
    }

    private void onCompletion(WorkCompletion wc) {
        if (wc.status() == WcStatus.WORK_REQUEST_FLUSH_ERROR) {
            // The connection is ending; its close says why.
            return;
        }
        if (wc.status() != WcStatus.SUCCESS) {
            result.completeExceptionally(new IllegalStateException("the " + org.jiwarp.tools.Failures.operation(wc.opcode())
                    + " of ping " + ping + " " + org.jiwarp.tools.Failures.status(wc.status()) + terminateNote()));
            return;
        }
        if (wc.opcode() != WcOpcode.RECEIVE) {
            return;
        }
        if (wc.byteLength() != RpingMessages.INFO_LENGTH) {
            result.completeExceptionally(new IllegalStateException("received bogus data, size " + wc.byteLength()));
            return;
        }
        qp.postReceive(receive);
        if (!waitingForWrite) {
            // The server has read start_buf: advertise rdma_buf for its Write.
            waitingForWrite = true;
            RpingMessages.writeInfo(sendBuffer.buffer(), rdmaBuffer.address(), rdmaBuffer.rkey(), size);
            qp.postSend(send);
            return;
        }
        long roundTrip = System.nanoTime() - startedAt;
        roundTrips.recordValue(roundTrip);
        if (debug != null) {
            debug.accept(String.format(java.util.Locale.ROOT, "ping %d: round trip %.1f us", ping, roundTrip / 1e3));
        }
        if (validate && !io.netty.buffer.ByteBufUtil.equals(startBuffer.buffer(), 0, rdmaBuffer.buffer(), 0, size)) {
            result.completeExceptionally(new IllegalStateException("data mismatch in ping " + ping + ": sent '"
                    + RpingMessages.cString(startBuffer.buffer(), size) + "', got back '"
                    + RpingMessages.cString(rdmaBuffer.buffer(), size) + "'"));
            return;
        }
        if (verbose) {
            out.accept("ping data: " + RpingMessages.cString(rdmaBuffer.buffer(), size));
        }
        validated++;
        ping++;
        if (count == 0 || ping < count) {
            nextPing();
        } else {
            result.complete(new Result(ping, validate ? validated : 0, roundTrips, false));
        }
    }

    private void deregister() {
        receiveBuffer.deregister();
        sendBuffer.deregister();
        startBuffer.deregister();
        rdmaBuffer.deregister();
    }
}
