package org.jiwarp.rnic.qp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.CompletableFuture;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.mpa.FpduCodec;
import org.jiwarp.mpa.FpduReads;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.mpa.PayloadViews;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.rdmap.OutboundReads;
import org.jiwarp.rdmap.RdmapListener;
import org.jiwarp.rdmap.RdmapReceiver;
import org.jiwarp.rdmap.RdmapTransmitter;
import org.jiwarp.rdmap.ReadResponder;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.cm.LlpClose;
import org.jiwarp.rnic.cm.OctetsToTcp;
import org.jiwarp.rnic.cq.Completions;
import org.jiwarp.rnic.rx.SegmentListener;
import org.jiwarp.rnic.rx.UlpduStream;
import org.jiwarp.rnic.tx.SegmentWriter;
import org.jiwarp.rnic.tx.SendScheduler;
import org.jiwarp.rnic.tx.SendQueue;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * One queue pair's connection: the last handler of its pipeline, above MPA. The Netty glue between
 * the RDMAP layer ({@link RdmapReceiver}, {@link RdmapTransmitter}, {@link ReadResponder}), the
 * queue pair's {@link SendQueue} and its {@link QpStateMachine}: it feeds inbound ULPDUs to RDMAP,
 * turns a {@link TerminateException} into exactly one Terminate, reports what RDMAP completed, and
 * takes the queue pair down, flushing its work once on the way to ERROR.
 *
 * <p>Flushes are batched: what posted work or a read batch of inbound ULPDUs writes (segments, Read
 * Responses) goes to the socket with one flush at the end. Everything here runs on the connection's
 * event loop, except {@link #postReceive}, which is safe from any thread.
 */
public final class QpConnection extends ChannelInboundHandlerAdapter implements RdmapListener, SegmentListener {

    /** What the queue pair served is told. */
    private final QpListener queuePair;
    private final QpStateMachine state;
    private final Completions completions;
    private final QpConfig config;
    private final StagTable stags;
    /** The queue pair's number, the DDP stream's (RFC 5041 section 8.2). */
    private final int number;
    private final CompletableFuture<Void> closed;
    private final CompletableFuture<QpConnection> established = new CompletableFuture<>();
    private final UntaggedQueue receives;
    private ChannelHandlerContext ctx;
    /** Views of registered memory for the segments sent, recycled on the event loop. */
    private PayloadViews payloadViews;
    private MpaParameters parameters;
    private RdmapTransmitter transmitter;
    private RdmapReceiver receiver;
    private ReadResponder readResponder;
    private SendQueue sendQueue;
    private SegmentWriter output;
    /** Inside a read batch: what the inbound ULPDUs cause flushes once, at its end. */
    private boolean reading;
    private volatile RemoteTerminate terminateReceived;
    private volatile TerminateError terminateSent;
    /** When the send side runs: posts, the doorbell, resumption on writability. */
    private SendScheduler sending;
    /** The connection's count of octets handed to TCP, first in its pipeline ({@link #counter}). */
    private OctetsToTcp counter;
    /** The channel's reads, straight into place once the deframer says where ({@link #wire}). */
    private FpduReads reads;
    /** The connection's FPDU codec (MPA full operation). */
    private FpduCodec codec;

    /** {@link RnicOptions#strictRfc(boolean)}: the RDMAP side of strict mode. */
    private final boolean strictRfc;
    /** {@link RnicOptions#closeTimeout}: how long a close may wait for anything. */
    private final java.time.Duration closeTimeout;

    /**
     * @param queuePair  what the queue pair served is told (never called otherwise)
     * @param number     its number: the DDP stream's, which STags bound to one stream name
     * @param options    its RNIC's options (strict mode, the close timeout)
     * @param closed     completed once the queue pair has entered ERROR and flushed its work
     */
    public QpConnection(QpListener queuePair, int number, RnicOptions options, QpStateMachine state,
            Completions completions, QpConfig config, StagTable stags, CompletableFuture<Void> closed) {
        this.queuePair = queuePair;
        this.number = number;
        this.state = state;
        this.completions = completions;
        this.config = config;
        this.stags = stags;
        this.closed = closed;
        // Queue 0's receives: the queue pair's own, or, with a shared receive queue, one taken there per Send.
        this.receives = completions.sharedReceives() == null ? new UntaggedQueue(DdpHeaders.QN_SEND,
                config.receiveDepth()) : new UntaggedQueue(DdpHeaders.QN_SEND, completions.sharedReceives());
        this.strictRfc = options.strictRfc();
        this.closeTimeout = options.closeTimeout();
    }

    /**
     * The connection manager gives the connection, as it builds the pipeline, its octet counter and
     * the channel's reads (which follow the deframer once MPA is in full operation).
     */
    public void wire(OctetsToTcp counter, FpduReads reads) {
        this.counter = counter;
        this.reads = reads;
    }

    public CompletableFuture<QpConnection> established() {
        return established;
    }

    public MpaParameters parameters() {
        return parameters;
    }

    public Channel channel() {
        return ctx == null ? null : ctx.channel();
    }

    public RemoteTerminate terminateReceived() {
        return terminateReceived;
    }

    public TerminateError terminateSent() {
        return terminateSent;
    }

    public boolean inEventLoop() {
        return ctx.executor().inEventLoop();
    }

    public void execute(Runnable task) {
        if (ctx.executor().inEventLoop()) {
            task.run();
        } else {
            ctx.executor().execute(task);
        }
    }

    public void executeLater(Runnable task) {
        ctx.executor().execute(task);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof MpaEstablishedEvent) {
            MpaEstablishedEvent established = (MpaEstablishedEvent) evt;
            start(established.parameters(), established.codec());
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void start(MpaParameters parameters, FpduCodec codec) {
        // One set of views and overhead slabs per connection, shared with the framer.
        this.codec = codec;
        payloadViews = codec.framer().payloadViews();
        this.parameters = parameters;
        // RFC 6581: a Read RTR used MSN 1 of queue 1, so that queue's MSNs start at 2 in its direction.
        boolean readRtr = parameters.rtr() == RtrType.READ;
        int pd = config.pd().id();
        OutboundReads outboundReads = new OutboundReads(Math.max(parameters.ord(), 0));
        output = new SegmentWriter(ctx, counter, payloadViews);
        transmitter = new RdmapTransmitter(output, parameters.mulpdu(), config.inlineThreshold(),
                readRtr && parameters.initiator() ? 2 : 1);
        readResponder = new ReadResponder(stags, pd, number, transmitter, parameters.ird(),
                readRtr && !parameters.initiator() ? 2 : 1);
        // RFC 5041 section 8.2: the stream's number is its queue pair's, which bound windows name.
        receiver = new RdmapReceiver(stags, pd, number, !strictRfc, receives, outboundReads, readResponder,
                this);
        sendQueue = new SendQueue(ctx, codec, counter, transmitter, outboundReads, completions, config.pd(), state,
                config.rfc7306(), strictRfc ? error -> terminate(error, null, 0) : null);
        sending = new SendScheduler(ctx, sendQueue, readResponder, output, state, this::flushIfNeeded,
                error -> terminate(error, null, 0));
        // One receive path from the first FPDU on; long payloads read straight into place.
        codec.deframer().deliverTo(new UlpduStream(this, receiver));
        reads.readFor(codec.deframer());
        if (!state.apply(QpEvent.ESTABLISHED).accepted()) {
            // Modified to ERROR while the setup ran.
            established.completeExceptionally(new IllegalStateException("the queue pair left IDLE during setup ("
                    + state.state() + ")"));
            ctx.close();
            return;
        }
        queuePair.established(this);
        established.complete(this);
    }

    // ---------------------------------------------------------------------------------------------
    // Posting

    /** Where posted work goes (once established): see {@link SendScheduler}. */
    public SendScheduler sending() {
        return sending;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (sending != null) {
            sending.writabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Posts a receive from any thread (the queue takes posts concurrently with placement). */
    public void postReceive(ReceiveBuffer buffer) {
        QpState s = state.state();
        if (s == QpState.ERROR || s == QpState.TERMINATE || !receives.post(buffer)) {
            completions.receiveFlushed(buffer.workRequestId());
            return;
        }
        if (state.state() == QpState.ERROR) {
            // Raced with the way down: flush whatever the event loop's flush missed.
            execute(() -> completions.flushReceives(receives));
        }
    }

    /** Flushes what posted work or a read batch wrote; the IRD frees the entries whose responses went out. */
    private void flushIfNeeded() {
        if (reading || output == null) {
            return;
        }
        output.flushIfNeeded();
        sendQueue.flushed();
        readResponder.retireSent();
    }

    // ---------------------------------------------------------------------------------------------
    // Receiving

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // Every ULPDU goes to the receive path (UlpduStream) from the first FPDU on; nothing else comes up.
        io.netty.util.ReferenceCountUtil.release(msg);
    }

    /** A streamed segment's header arrived: inside a read batch now; {@code false} once receiving has stopped. */
    @Override
    public boolean receiving() {
        reading = true;
        return state.running();
    }

    /** A streamed segment of {@code length} octets, of which {@code header} holds the header, failed a check. */
    @Override
    public void segmentFailed(TerminateException e, ByteBuf header, int length) {
        terminate(e.error(), header, length);
        completions.releaseFailedReceive();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        reading = false;
        flushIfNeeded();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void receiveCompleted(ReceiveBuffer buffer, long length, int invalidatedStag, boolean solicited) {
        completions.receiveCompleted(buffer, length, invalidatedStag, solicited);
    }

    @Override
    public void receiveFailed(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error) {
        // Reported once the Terminate is out (channelRead): an application that disconnects on this
        // completion, as rping's server does, must not overtake the Terminate and close without it.
        completions.holdFailedReceive(buffer, length, solicited, error);
    }

    @Override
    public void immediateDataReceived(ReceiveBuffer buffer, long immediateData, boolean solicited) {
        completions.receiveImmediateCompleted(buffer, immediateData, solicited);
    }

    @Override
    public void atomicCompleted(Object context, long originalRemoteDataValue) {
        sendQueue.atomicCompleted(context, originalRemoteDataValue);
    }

    @Override
    public void readCompleted(Object context) {
        sendQueue.readCompleted(context);
    }

    @Override
    public void terminateReceived(TerminateMessages.Received received) {
        if (!state.apply(QpEvent.TERMINATE_RECEIVED).accepted()) {
            return;
        }
        RemoteTerminate report = RemoteTerminate.of(received);
        terminateReceived = report;
        queuePair.terminateReceived(report);
        sendQueue.remoteTerminate(report == null ? null : report.error());
        ctx.close();
    }

    @Override
    public void malformedTerminate() {
        ctx.close();
    }

    // ---------------------------------------------------------------------------------------------
    // Terminate and the way down

    /** A local error: one Terminate (RFC 5040 section 5.6), then the connection closes. */
    private void terminate(TerminateError error, ByteBuf offending, int offendingLength) {
        if (!state.apply(QpEvent.TERMINATE_SENT).accepted()) {
            return;
        }
        queuePair.terminating(error);
        sendQueue.segmentFailed(error, offending);
        ChannelFuture written = transmitter.terminate(error, offending, offendingLength);
        written.addListener((ChannelFutureListener) future -> {
            if (future.isSuccess()) {
                terminateSent = error;
            }
        });
        LlpClose.afterTerminate(ctx, written, closeTimeout);
        output.flush();
        sendQueue.flushed();
    }

    /** The user's graceful close: no new work; the connection closes once what was issued has gone out. */
    public void disconnect() {
        if (!state.apply(QpEvent.MODIFY_TO_CLOSING).accepted()) {
            return;
        }
        LlpClose.onceWritten(ctx, codec, counter, sendQueue::flushed, closeTimeout);
    }

    /** The user's abortive close, or a fatal error of the queue pair: straight to ERROR. */
    public void abort(QpEvent event) {
        if (state.apply(event).enteredError()) {
            enterError();
        }
        ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof VirtualMachineError) {
            // Out of memory, say: the process cannot go on as if this connection alone had failed.
            // Its thread's uncaught exception handler decides (the jiwarp command stops).
            Thread thread = Thread.currentThread();
            thread.getUncaughtExceptionHandler().uncaughtException(thread, cause);
        }
        if (cause instanceof MpaException && ((MpaException) cause).error() != null && parameters != null) {
            // An FPDU failed its CRC or marker check: report it at the LLP layer, carrying nothing. The
            // Terminate's own close follows it out (bounded); closing here would drop it if it waits
            // behind other output.
            terminate(((MpaException) cause).error(), null, 0);
            return;
        } else if (!established.isDone()) {
            established.completeExceptionally(cause);
        } else {
            queuePair.llpFailed(cause);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!established.isDone()) {
            established.completeExceptionally(new MpaException(TerminateError.LLP_CONNECTION_LOST,
                    "the connection closed before it was established"));
        }
        if (state.apply(QpEvent.CONNECTION_CLOSED).enteredError()) {
            enterError();
        }
        if (payloadViews != null) {
            payloadViews.clear();
        }
        ctx.fireChannelInactive();
    }

    /** Entered ERROR (once per queue pair): outstanding work completes in flush error, receives included. */
    private void enterError() {
        if (sendQueue != null) {
            sendQueue.flush();
        }
        if (readResponder != null) {
            readResponder.clear();
        }
        completions.flushReceives(receives);
        closed.complete(null);
    }
}
