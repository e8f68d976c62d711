package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.rdmap.TerminateMessages;

/**
 * A queue pair ({@code ibv_qp}): a send queue and a receive queue bound to one iWARP connection.
 *
 * <p>Posting is thread-safe: work requests from any thread go to the connection's event loop in the
 * order each thread posted them. Receives may be posted before the connection is up; sends only
 * once it is (state {@link QpState#RTS}). A queue that is full refuses the post with an
 * {@link IllegalStateException}, as {@code ibv_post_send} returns {@code ENOMEM}.
 */
public final class QueuePair {

    private final Rnic rnic;
    private final int number;
    private final QpConfig config;
    private final AtomicInteger sendOutstanding = new AtomicInteger();
    private final AtomicInteger receiveOutstanding = new AtomicInteger();
    private final List<ReceiveBuffer> earlyReceives = new ArrayList<>();
    private final CompletableFuture<QueuePair> closed = new CompletableFuture<>();
    private volatile QpState state = QpState.IDLE;
    private volatile QpEngine engine;
    private volatile Consumer<TerminateMessages.Received> terminateListener;
    private volatile TerminateMessages.Received terminateReceived;
    private volatile org.jiwarp.wire.rdmap.TerminateError terminateSent;

    QueuePair(Rnic rnic, int number, QpConfig config) {
        this.rnic = rnic;
        this.number = number;
        this.config = config;
    }

    public int number() {
        return number;
    }

    public QpState state() {
        return state;
    }

    public ProtectionDomain pd() {
        return config.pd();
    }

    public CompletionQueue sendCq() {
        return config.sendCq();
    }

    public CompletionQueue receiveCq() {
        return config.receiveCq();
    }

    public QpConfig config() {
        return config;
    }

    /** What the connection negotiated, once connected; else {@code null}. */
    public MpaParameters parameters() {
        QpEngine e = engine;
        return e == null ? null : e.parameters();
    }

    /** The connection's channel, once connected. */
    public Channel channel() {
        QpEngine e = engine;
        return e == null ? null : e.channel();
    }

    /** The Terminate the peer sent, if any. */
    public TerminateMessages.Received terminateReceived() {
        return terminateReceived;
    }

    /** The error of the Terminate this end sent, if any. */
    public org.jiwarp.wire.rdmap.TerminateError terminateSent() {
        return terminateSent;
    }

    /** Called (on the event loop) when a Terminate arrives, as an asynchronous QP event. */
    public void onTerminate(Consumer<TerminateMessages.Received> listener) {
        this.terminateListener = listener;
    }

    /** Completes once the queue pair has reached {@link QpState#ERROR} and flushed its work. */
    public CompletableFuture<QueuePair> closeFuture() {
        return closed;
    }

    /**
     * Posts a send-queue work request. An unsignaled one retires silently: a Write or Send once its
     * bytes have reached TCP, a Read once its response is placed.
     */
    public void postSend(SendWorkRequest wr) {
        QpEngine.SendSlot slot = admit(wr);
        QpEngine e = engine;
        if (e == null) {
            flushUnconnected(slot);
            return;
        }
        if (e.inEventLoop()) {
            e.post(slot);
        } else {
            e.execute(() -> e.post(slot));
        }
    }

    /**
     * Posts {@code count} work requests in order as one chain ({@code ibv_post_send} with a linked
     * list): they go to TCP with one flush. If one is refused, the ones before it are posted and the
     * exception names the refused one's index.
     */
    public void postSend(SendWorkRequest[] chain, int count) {
        QpEngine.SendSlot[] slots = new QpEngine.SendSlot[count];
        int admitted = 0;
        RuntimeException refused = null;
        for (; admitted < count; admitted++) {
            try {
                slots[admitted] = admit(chain[admitted]);
            } catch (RuntimeException e) {
                refused = e;
                break;
            }
        }
        QpEngine e = engine;
        int n = admitted;
        if (e == null) {
            for (int i = 0; i < n; i++) {
                flushUnconnected(slots[i]);
            }
        } else if (e.inEventLoop()) {
            e.post(slots, n);
        } else {
            e.execute(() -> e.post(slots, n));
        }
        if (refused != null) {
            throw new IllegalStateException("work request " + admitted + " of the chain refused: "
                    + refused.getMessage(), refused);
        }
    }

    private QpEngine.SendSlot admit(SendWorkRequest wr) {
        if (state == QpState.IDLE) {
            throw new IllegalStateException("QP " + number + " is not connected (IDLE): post sends once it is RTS");
        }
        if (wr.sglUnsafe().length > config.maxSge()) {
            throw new IllegalArgumentException(wr.sglUnsafe().length + " SGEs exceed the QP's max of " + config.maxSge());
        }
        if (sendOutstanding.incrementAndGet() > config.sendDepth()) {
            sendOutstanding.decrementAndGet();
            throw new IllegalStateException("send queue of QP " + number + " is full (" + config.sendDepth() + ")");
        }
        return new QpEngine.SendSlot(wr);
    }

    /** In ERROR without ever having connected: the work completes in flush error at once. */
    private void flushUnconnected(QpEngine.SendSlot slot) {
        sendCompleted();
        config.sendCq().add(new WorkCompletion().set(slot.id, WcStatus.WORK_REQUEST_FLUSH_ERROR,
                QpEngine.wcOpcode(slot.opcode), 0, this, 0, false, null));
    }

    /** Posts a receive-queue work request. */
    public void postReceive(ReceiveWorkRequest wr) {
        if (wr.sgl().length > config.maxSge()) {
            throw new IllegalArgumentException(wr.sgl().length + " SGEs exceed the QP's max of " + config.maxSge());
        }
        Sge[] sgl = wr.sgl();
        ByteBuf[] segments = new ByteBuf[sgl.length];
        for (int i = 0; i < sgl.length; i++) {
            segments[i] = checkedSlice(sgl[i], org.jiwarp.ddp.Access.LOCAL_WRITE);
        }
        if (receiveOutstanding.incrementAndGet() > config.receiveDepth()) {
            receiveOutstanding.decrementAndGet();
            throw new IllegalStateException("receive queue of QP " + number + " is full (" + config.receiveDepth() + ")");
        }
        ReceiveBuffer buffer = new ReceiveBuffer(wr.id(), segments);
        synchronized (earlyReceives) {
            QpEngine e = engine;
            if (e == null) {
                earlyReceives.add(buffer);
                return;
            }
            // Synchronous, as ibv_post_recv: once this returns the buffer is there for the next Send.
            e.postReceive(buffer);
        }
    }

    /** Disconnects gracefully: no new work, then the connection closes and the QP goes to ERROR. */
    public CompletableFuture<QueuePair> disconnect() {
        QpEngine e = engine;
        if (e == null) {
            toError();
        } else {
            e.execute(e::disconnect);
        }
        return closed;
    }

    /** A slice of a local SGE's memory, checked against this QP's PD, the region's bounds and access. */
    ByteBuf checkedSlice(Sge sge, int access) {
        return checked(sge, access).buffer().slice((int) sge.offset(), sge.length());
    }

    /** The region of a local SGE, checked against this QP's PD, the region's bounds and access. */
    MemoryRegion checked(Sge sge, int access) {
        MemoryRegion region = sge.region();
        if (!region.valid()) {
            throw new IllegalArgumentException("SGE region " + region + " is invalidated or deregistered");
        }
        if (region.pd() != config.pd()) {
            throw new IllegalArgumentException("SGE region " + region + " is not in " + config.pd());
        }
        if (sge.offset() + sge.length() > region.length()) {
            throw new IllegalArgumentException("SGE [" + sge.offset() + ", +" + sge.length() + ") exceeds " + region);
        }
        if ((region.access() & access) != access) {
            throw new IllegalArgumentException(region + " lacks " + org.jiwarp.ddp.Access.describe(access));
        }
        return region;
    }

    void attach(QpEngine engine) {
        synchronized (earlyReceives) {
            this.engine = engine;
            for (ReceiveBuffer buffer : earlyReceives) {
                engine.postReceive(buffer);
            }
            earlyReceives.clear();
        }
    }

    /** The engine a connect or accept will use. */
    QpEngine newEngine() {
        return new QpEngine(this, rnic.stags());
    }

    void state(QpState state) {
        this.state = state;
    }

    void sendCompleted() {
        sendOutstanding.decrementAndGet();
    }

    void receiveCompleted() {
        receiveOutstanding.decrementAndGet();
    }

    void terminateReceived(TerminateMessages.Received received) {
        this.terminateReceived = received;
        Consumer<TerminateMessages.Received> listener = terminateListener;
        if (listener != null) {
            listener.accept(received);
        }
    }

    void terminateSent(org.jiwarp.wire.rdmap.TerminateError error) {
        this.terminateSent = error;
    }

    /** Flushes receives posted before any connection, and reaches ERROR. */
    void toError() {
        state = QpState.ERROR;
        List<ReceiveBuffer> flushed;
        synchronized (earlyReceives) {
            flushed = new ArrayList<>(earlyReceives);
            earlyReceives.clear();
        }
        for (ReceiveBuffer buffer : flushed) {
            receiveCompleted();
            config.receiveCq().add(new WorkCompletion().set(buffer.workRequestId(), WcStatus.WORK_REQUEST_FLUSH_ERROR,
                    WcOpcode.RECEIVE, 0, this, 0, false, null));
        }
        closed.complete(this);
    }

    @Override
    public String toString() {
        return "QP " + number + " (" + state + ")";
    }
}
