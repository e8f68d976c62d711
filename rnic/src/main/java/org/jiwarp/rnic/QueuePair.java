package org.jiwarp.rnic;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.rnic.cm.LlpClose;
import org.jiwarp.rnic.cq.AsyncEvents;
import org.jiwarp.rnic.cq.Completions;
import org.jiwarp.rnic.mem.LocalAccess;
import org.jiwarp.rnic.qp.QpConnection;
import org.jiwarp.rnic.qp.QpListener;
import org.jiwarp.rnic.qp.QpEvent;
import org.jiwarp.rnic.qp.QpStateMachine;
import org.jiwarp.rnic.tx.SendSlot;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A queue pair ({@code ibv_qp}): a send queue and a receive queue bound to one iWARP connection, with
 * the state machine of {@link QpStateMachine}.
 *
 * <p>Posting is thread-safe: work requests from any thread go to the connection's event loop in the
 * order each thread posted them. Receives may be posted before the connection is up; sends only
 * once it is (state {@link QpState#RTS}). Work posted in ERROR completes at once in flush error,
 * receives included. A queue that is full refuses the post with an {@link IllegalStateException},
 * as {@code ibv_post_send} returns {@code ENOMEM}. A queue pair created with a shared receive queue
 * ({@link QpConfig#srq}) takes its receives there and has no receive queue of its own.
 */
public final class QueuePair {

    private final Rnic rnic;
    private final int number;
    private final QpConfig config;
    private final QpStateMachine state = new QpStateMachine();
    private final Completions completions;
    private final List<ReceiveBuffer> earlyReceives = new ArrayList<>();
    private final CompletableFuture<Void> down = new CompletableFuture<>();
    private volatile Throwable llpError;
    private final CompletableFuture<QueuePair> closed = new CompletableFuture<>();
    private final AsyncEvents events;
    private final Runnable onCqError = () -> fatal(QpEvent.CQ_ERROR);
    private final java.util.concurrent.atomic.AtomicBoolean destroyed = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile QpConnection connection;

    QueuePair(Rnic rnic, int number, QpConfig config, AsyncEvents events) {
        this.rnic = rnic;
        this.number = number;
        this.config = config;
        this.events = events;
        this.completions = new Completions(number, config, config.sendCq().sinkFor(this),
                config.receiveCq().sinkFor(this), config.srq() == null ? null : config.srq().receives());
        config.sendCq().attach(onCqError);
        if (config.receiveCq() != config.sendCq()) {
            try {
                config.receiveCq().attach(onCqError);
            } catch (RuntimeException e) {
                config.sendCq().detach(onCqError); // destroyed meanwhile: the refused queue pair holds nothing
                throw e;
            }
        }
        down.thenRun(() -> {
            flushEarlyReceives();
            if (config.srq() != null) {
                // The receive it was filling is flushed: it takes nothing more from the shared queue.
                events.fire(new AsyncEvent(AsyncEvent.Type.QP_LAST_WQE_REACHED, this, null, null, this
                        + " reached ERROR: it takes no more receives from " + config.srq()));
            }
            events.fire(new AsyncEvent(AsyncEvent.Type.DISCONNECTED, this, null, null, this
                    + " reached ERROR and flushed its work"));
            closed.complete(this);
        });
    }

    public int number() {
        return number;
    }

    /** The RNIC the queue pair belongs to. */
    public Rnic rnic() {
        return rnic;
    }

    /**
     * Binds a type 2 memory window to this queue pair ({@code IBV_WR_BIND_MW}, done at once): the
     * window shows {@code length} octets of {@code region} from {@code offset} with {@code access}
     * (remote flags the region grants too), under a fresh rkey that only this queue pair's stream
     * may use (RFC 5041 section 8.2). An earlier binding's rkey stops working.
     *
     * @return the new rkey, to advertise to the peer
     */
    public int bindWindow(MemoryWindow window, MemoryRegion region, long offset, long length, int access) {
        return window.bind(this, region, offset, length, access);
    }

    public QpState state() {
        return state.state();
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
    public ConnectionParameters parameters() {
        QpConnection c = connection;
        MpaParameters p = c == null ? null : c.parameters();
        return p == null ? null : ConnectionParameters.of(p);
    }

    /** This end's address, once connected; else {@code null}. */
    public InetSocketAddress localAddress() {
        Channel channel = channel();
        return channel == null ? null : (InetSocketAddress) channel.localAddress();
    }

    /** The peer's address, once connected; else {@code null}. */
    public InetSocketAddress remoteAddress() {
        Channel channel = channel();
        return channel == null ? null : (InetSocketAddress) channel.remoteAddress();
    }

    /** The connection's channel, for this package's tests. */
    Channel channel() {
        QpConnection c = connection;
        return c == null ? null : c.channel();
    }

    /**
     * Runs {@code task} soon on the thread that serves this queue pair's connection, where its
     * completion listeners run too (never inline, also when called from that thread).
     *
     * @throws IllegalStateException before the queue pair is connected
     */
    public void execute(Runnable task) {
        QpConnection c = connection;
        if (c == null) {
            throw new IllegalStateException(this + " is not connected");
        }
        c.executeLater(task);
    }

    /**
     * What ended the connection when it was neither a Terminate nor a close by either end: an error
     * of the TCP connection (a reset) or a local failure; {@code null} when nothing did.
     */
    public Throwable connectionError() {
        return llpError;
    }

    /** What this queue pair's connection tells it (see {@link QpListener}). */
    private final QpListener fromConnection = new QpListener() {
        @Override
        public void established(QpConnection connection) {
            attach(connection);
        }

        @Override
        public void terminateReceived(RemoteTerminate report) {
            events.fire(new AsyncEvent(AsyncEvent.Type.TERMINATE_RECEIVED, QueuePair.this, null,
                    report == null ? null : report.error(), "the peer of " + QueuePair.this + " sent a Terminate: "
                            + (report == null ? "too short to read" : report.describe())));
        }

        @Override
        public void terminating(TerminateError error) {
            events.fire(new AsyncEvent(AsyncEvent.Type.QP_FATAL, QueuePair.this, null, error, QueuePair.this
                    + " terminates its stream: " + error.describe()));
        }

        @Override
        public void llpFailed(Throwable cause) {
            // The LLP stream failed under an established connection, which now closes without a Terminate.
            llpError = cause;
            LlpClose.failed(QueuePair.this.toString(), cause);
        }
    };

    /** The Terminate the peer sent, if any. */
    public RemoteTerminate terminateReceived() {
        QpConnection c = connection;
        return c == null ? null : c.terminateReceived();
    }

    /** The error of the Terminate this end sent, if any. */
    public TerminateError terminateSent() {
        QpConnection c = connection;
        return c == null ? null : c.terminateSent();
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
        SendSlot slot = admit(wr);
        QpConnection c = connection;
        if (c == null || down.isDone()) {
            // Never connected, or in ERROR with everything before it flushed: flushed at once, here.
            flushUnconnected(slot);
        } else if (c.inEventLoop()) {
            c.sending().post(slot);
        } else {
            c.sending().ring(slot);
        }
    }

    /**
     * Posts {@code count} work requests in order as one chain ({@code ibv_post_send} with a linked
     * list): they go to TCP with one flush. If one is refused, the ones before it are posted and the
     * exception names the refused one's index.
     */
    public void postSend(SendWorkRequest[] chain, int count) {
        // The chain's slots go through the connection's doorbell and are issued together: one flush,
        // nothing allocated per chain.
        QpConnection c = connection;
        boolean unconnected = c == null || down.isDone();
        int admitted = 0;
        RuntimeException refused = null;
        for (; admitted < count; admitted++) {
            SendSlot slot;
            try {
                slot = admit(chain[admitted]);
            } catch (RuntimeException e) {
                refused = e;
                break;
            }
            if (unconnected) {
                flushUnconnected(slot);
            } else {
                c.sending().queue(slot);
            }
        }
        if (!unconnected && admitted > 0) {
            if (c.inEventLoop()) {
                c.sending().answerDoorbellNow();
            } else {
                c.sending().wake();
            }
        }
        if (refused != null) {
            throw new IllegalStateException("work request " + admitted + " of the chain refused: "
                    + refused.getMessage(), refused);
        }
    }

    private SendSlot admit(SendWorkRequest wr) {
        checkNotDestroyed();
        if (state.state() == QpState.IDLE) {
            throw new IllegalStateException("QP " + number + " is not connected (IDLE): post sends once it is RTS");
        }
        if (wr.sglUnsafe().length > config.maxSge()) {
            throw new IllegalArgumentException(wr.sglUnsafe().length + " SGEs exceed the QP's max of " + config.maxSge());
        }
        completions.admitSend();
        return completions.slot(wr, wr.sglUnsafe());
    }

    /**
     * Prepares {@code wr} to be posted again and again without allocating (see {@link PreparedSend}).
     * Its scatter/gather list is checked at each post, as with {@link #postSend}.
     */
    public PreparedSend prepare(SendWorkRequest wr) {
        if (wr.sglUnsafe().length > config.maxSge()) {
            throw new IllegalArgumentException(wr.sglUnsafe().length + " SGEs exceed the QP's max of " + config.maxSge());
        }
        return new PreparedSend(this::admitPrepared, wr);
    }

    /**
     * Admits a prepared request's slot: the connection to post it on, or {@code null} when it was
     * flushed at once (never connected).
     */
    QpConnection admitPrepared(SendSlot slot) {
        checkNotDestroyed();
        if (state.state() == QpState.IDLE) {
            throw new IllegalStateException("QP " + number + " is not connected (IDLE): post sends once it is RTS");
        }
        completions.admitSend();
        QpConnection c = connection;
        if (c == null) {
            slot.reset();
            flushUnconnected(slot);
            slot.prepared.run();
        }
        return c;
    }

    /** In ERROR, its earlier work flushed (or never connected): the work completes in flush error at once. */
    private void flushUnconnected(SendSlot slot) {
        completions.send(slot.id, WcStatus.WORK_REQUEST_FLUSH_ERROR, WcOpcode.of(slot.opcode), 0, null);
    }

    /**
     * Posts a receive-queue work request; in ERROR it completes at once in flush error.
     *
     * @throws IllegalStateException when the queue pair takes its receives from a shared receive
     *     queue (post them there), is destroyed, or its receive queue is full
     */
    public void postReceive(ReceiveWorkRequest wr) {
        checkNotDestroyed();
        if (config.srq() != null) {
            throw new IllegalStateException("QP " + number + " takes its receives from " + config.srq()
                    + ": post them there");
        }
        Sge[] sgl = wr.sglUnsafe();
        if (sgl.length > config.maxSge()) {
            throw new IllegalArgumentException(sgl.length + " SGEs exceed the QP's max of " + config.maxSge());
        }
        for (Sge sge : sgl) {
            LocalAccess.checked(sge, config.pd(), Access.LOCAL_WRITE);
        }
        completions.admitReceive();
        // Fenced: once a region is deregistered, nothing is placed in it through this receive.
        ReceiveBuffer buffer = completions.receiveBuffer(wr.id(), sgl.length);
        for (Sge sge : sgl) {
            MemoryRegion region = sge.region();
            buffer.add(region.buffer(), (int) sge.offset(), sge.length(), region.tagged());
        }
        synchronized (earlyReceives) {
            QpConnection c = connection;
            if (c != null) {
                // Synchronous, as ibv_post_recv: once this returns the buffer is there for the next Send.
                c.postReceive(buffer);
            } else if (state.state() == QpState.ERROR) {
                completions.receiveFlushed(buffer.workRequestId());
            } else {
                earlyReceives.add(buffer);
            }
        }
    }

    /**
     * Disconnects gracefully (modify to CLOSING): no new work; once everything issued has gone to TCP
     * this end half-closes, and the queue pair goes to ERROR when the peer has closed too (a second
     * at most). The close never resets the connection under octets the peer has not read.
     */
    public CompletableFuture<QueuePair> disconnect() {
        QpConnection c = connection;
        if (c == null) {
            modifyToError();
        } else {
            c.execute(c::disconnect);
        }
        return closed;
    }

    /**
     * Modifies the queue pair to ERROR (an abortive close, {@code ibv_modify_qp} to {@code IBV_QPS_ERR}):
     * the connection closes at once, without a Terminate, and every outstanding work request
     * completes in flush error.
     */
    public CompletableFuture<QueuePair> modifyToError() {
        fatal(QpEvent.MODIFY_TO_ERROR);
        return closed;
    }

    /**
     * Destroys the queue pair ({@code ibv_destroy_qp}): moves it to ERROR as {@link #modifyToError}
     * does, and refuses every post from then on. Idempotent.
     */
    public CompletableFuture<QueuePair> destroy() {
        if (destroyed.compareAndSet(false, true)) {
            config.sendCq().detach(onCqError);
            config.receiveCq().detach(onCqError);
            config.pd().queuePairRemoved();
            if (config.srq() != null) {
                config.srq().queuePairRemoved();
            }
        }
        return modifyToError();
    }

    private void checkNotDestroyed() {
        if (destroyed.get()) {
            throw new IllegalStateException("QP " + number + " is destroyed");
        }
    }

    /** Takes the queue pair to ERROR for {@code event} (a user's modify, or a fatal error such as a CQ overrun). */
    void fatal(QpEvent event) {
        QpConnection c = connection;
        if (c != null) {
            c.execute(() -> c.abort(event));
            return;
        }
        if (state.apply(event).enteredError()) {
            down.complete(null);
        }
    }

    /** The connection a connect or accept uses. */
    QpConnection newConnection() {
        return new QpConnection(fromConnection, number, rnic.options(), state, completions, config, rnic.stags(), down);
    }

    /** The connect failed before any connection existed. */
    void connectFailed() {
        if (state.apply(QpEvent.CONNECTION_CLOSED).enteredError()) {
            down.complete(null);
        }
    }

    private void attach(QpConnection connection) {
        synchronized (earlyReceives) {
            this.connection = connection;
            for (ReceiveBuffer buffer : earlyReceives) {
                connection.postReceive(buffer);
            }
            earlyReceives.clear();
        }
    }

    /** Flushes receives posted before any connection was up (the queue pair reached ERROR without one). */
    private void flushEarlyReceives() {
        List<ReceiveBuffer> flushed;
        synchronized (earlyReceives) {
            flushed = new ArrayList<>(earlyReceives);
            earlyReceives.clear();
        }
        for (ReceiveBuffer buffer : flushed) {
            completions.receiveFlushed(buffer.workRequestId());
        }
    }

    @Override
    public String toString() {
        return "QP " + number + " (" + state.state() + ")";
    }
}
