package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection of an {@link RpcTcpServer}: reads record-marked fragments (RFC 5531 section 11),
 * joins a record's fragments, hands each call to a worker and writes its reply as one fragment.
 * It reads a record only while the connection has fewer than the server's calls in progress, and
 * keeps the channel's reading on only while that holds and the channel is writable, so what it
 * holds stays bounded whatever the client sends or fails to read.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-------------------------------------------------------------+
 * |L|                 fragment length (31 bits)                   |
 * +-+-------------------------------------------------------------+
 * |                 fragment octets ...                           |
 * L: the last fragment of its record
 * </pre>
 *
 * <p>Fields without a lock are the event loop's; the gauges are read from any thread.
 */
final class RpcTcpConnection extends ChannelInboundHandlerAdapter {

    /** The record mark's last-fragment bit (RFC 5531 section 11). */
    static final int LAST_FRAGMENT = 0x8000_0000;
    static final int MARK_LENGTH = 4;

    private final RpcTcpServer server;
    private final Channel channel;
    private final int maxRecord;
    private final int maxCalls;

    private ByteBuf cumulation;
    private CompositeByteBuf record;
    private int recordLength;
    private int callsInProgress;
    private volatile int peakCalls;
    private volatile int receivedOctets;
    private volatile int callsGauge;
    /** Octets of calls handed to a worker and of their replies, until the reply is written. */
    private final AtomicLong callOctets = new AtomicLong();
    private boolean failed;
    private ChannelHandlerContext context;

    RpcTcpConnection(RpcTcpServer server, Channel channel) {
        this.server = server;
        this.channel = channel;
        this.maxRecord = server.options().maxRecord();
        this.maxCalls = server.options().maxCallsInProgress();
    }

    Channel channel() {
        return channel;
    }

    long octetsHeld() {
        return receivedOctets + callOctets.get();
    }

    int callsInProgress() {
        return callsGauge;
    }

    int peakCallsInProgress() {
        return peakCalls;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        context = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (failed) {
            in.release();
            return;
        }
        cumulation = cumulation == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation,
                in);
        readRecords(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        updateReading();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        failed = true;
        releaseReceived();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a reset or a socket error: only this connection goes
    }

    /** Takes whole fragments from the octets received while the connection may have another call. */
    private void readRecords(ChannelHandlerContext ctx) {
        while (!failed && callsInProgress < maxCalls && cumulation != null
                && cumulation.readableBytes() >= MARK_LENGTH) {
            int mark = cumulation.getInt(cumulation.readerIndex());
            int length = mark & ~LAST_FRAGMENT;
            if ((long) recordLength + length > maxRecord) {
                fail(ctx); // a record longer than the server takes: nothing after it can be trusted
                return;
            }
            if (cumulation.readableBytes() < MARK_LENGTH + length) {
                break; // the fragment's end has not come: the mark stays unread
            }
            cumulation.skipBytes(MARK_LENGTH);
            if (length > 0) {
                if (record == null) {
                    record = ctx.alloc().compositeBuffer(Integer.MAX_VALUE);
                }
                record.addComponent(true, cumulation.readRetainedSlice(length));
                recordLength += length;
            }
            if ((mark & LAST_FRAGMENT) != 0) {
                ByteBuf whole = record == null ? Unpooled.EMPTY_BUFFER : record;
                record = null;
                recordLength = 0;
                call(ctx, whole);
            }
        }
        if (cumulation != null && !cumulation.isReadable()) {
            cumulation.release();
            cumulation = null;
        } else if (cumulation != null && cumulation.refCnt() == 1) {
            // Calls in progress hold slices of it: its octets may move only when none does.
            cumulation.discardSomeReadBytes();
        }
        receivedOctets = (cumulation == null ? 0 : cumulation.readableBytes()) + recordLength;
        updateReading();
    }

    /** A whole record: a call goes to a worker; anything else closes the connection. */
    private void call(ChannelHandlerContext ctx, ByteBuf whole) {
        RpcCall rpcCall;
        try {
            rpcCall = Rpc.getCall(whole);
        } catch (XdrException e) {
            fail(ctx); // not an RPC call header: the stream cannot be trusted further
            return;
        } finally {
            whole.release();
        }
        int argumentOctets = rpcCall.arguments().readableBytes();
        callStarted(argumentOctets);
        try {
            server.workers().execute(() -> serve(rpcCall));
        } catch (RejectedExecutionException e) {
            rpcCall.arguments().release(); // the server is closing
            callEnded(argumentOctets);
        }
    }

    /** On a worker: the server's own denial or the handler's answer, written as one fragment. */
    private void serve(RpcCall rpcCall) {
        int argumentOctets = rpcCall.arguments().readableBytes();
        ByteBuf reply;
        try {
            ByteBuf denied = Rpc.denial(rpcCall);
            reply = denied != null ? fragment(denied, null)
                    : encode(Rpc.answer(server.handler(), rpcCall), rpcCall.xid());
        } finally {
            rpcCall.arguments().release();
        }
        long replyOctets = reply.readableBytes();
        callOctets.addAndGet(replyOctets - argumentOctets);
        channel.writeAndFlush(reply).addListener(f -> callEnded((int) replyOctets));
    }

    /** The reply header and results, then the DDP-eligible item and its padding (not copied). */
    private static ByteBuf encode(RpcReply reply, int xid) {
        ByteBuf head = Unpooled.buffer(MARK_LENGTH + 32 + (reply.results() == null ? 0
                : reply.results().readableBytes()));
        head.writeInt(0); // the record mark, set in fragment()
        reply.encode(head, xid);
        if (reply.results() != null) {
            reply.results().release();
        }
        head.readerIndex(MARK_LENGTH);
        return fragment(head, reply.ddpData());
    }

    /**
     * One last fragment: {@code head}'s readable octets (with room for the mark before them, or
     * none) and the DDP-eligible item with its XDR pad (RFC 4506 section 4.10).
     */
    private static ByteBuf fragment(ByteBuf head, ByteBuf ddp) {
        int length = head.readableBytes();
        int pad = ddp == null ? 0 : Xdr.pad(ddp.readableBytes());
        length += ddp == null ? 0 : ddp.readableBytes() + pad;
        ByteBuf mark;
        if (head.readerIndex() >= MARK_LENGTH) {
            head.readerIndex(head.readerIndex() - MARK_LENGTH);
            head.setInt(head.readerIndex(), LAST_FRAGMENT | length);
            mark = head;
        } else {
            mark = Unpooled.wrappedBuffer(Unpooled.buffer(MARK_LENGTH).writeInt(LAST_FRAGMENT | length), head);
        }
        if (ddp == null) {
            return mark;
        }
        return pad == 0 ? Unpooled.wrappedBuffer(mark, ddp) : Unpooled.wrappedBuffer(mark, ddp,
                Unpooled.wrappedBuffer(new byte[pad]));
    }

    // On the event loop.
    private void callStarted(int argumentOctets) {
        callsInProgress++;
        callsGauge = callsInProgress;
        if (callsInProgress > peakCalls) {
            peakCalls = callsInProgress;
        }
        callOctets.addAndGet(argumentOctets);
    }

    /** The reply went to the socket, or the connection went: the next call may come in. */
    private void callEnded(int octets) {
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(() -> callEnded(octets));
            return;
        }
        callOctets.addAndGet(-octets);
        callsInProgress--;
        callsGauge = callsInProgress;
        if (!failed && context != null) {
            readRecords(context);
        }
    }

    /** Reads on while the connection may take another call and its replies can be written. */
    private void updateReading() {
        channel.config().setAutoRead(!failed && callsInProgress < maxCalls && channel.isWritable());
    }

    private void fail(ChannelHandlerContext ctx) {
        failed = true;
        server.closedForError();
        releaseReceived();
        ctx.close();
    }

    private void releaseReceived() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        if (record != null) {
            record.release();
            record = null;
        }
        recordLength = 0;
        receivedOctets = 0;
        channel.config().setAutoRead(false);
    }
}
