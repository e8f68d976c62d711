package org.jiwarp.cli.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * The TCP baseline's wire format, and its reader. Every frame has an 8-octet header, {@code type}
 * and {@code length}; DATA and RESPONSE frames carry {@code length} octets of payload, which the
 * reader copies into the connection's buffer as it arrives: one copy from the socket's buffer into
 * the application's memory, the same as jiwarp's placement of a Write.
 *
 * <pre>
 *   client to server   HELLO (the encoded BenchSpec), DATA, SYNC, READ (length = octets wanted)
 *   server to client   RESPONSE: to SYNC (empty), to READ (the octets), to DATA in latency runs (an echo)
 * </pre>
 */
abstract class BaselineFrames extends ChannelInboundHandlerAdapter {

    static final int HEADER_LENGTH = 8;
    static final int HELLO = 0;
    static final int DATA = 1;
    static final int SYNC = 2;
    static final int READ = 3;
    static final int RESPONSE = 4;

    private final ByteBuf header = Unpooled.buffer(HEADER_LENGTH, HEADER_LENGTH);
    ByteBuf memory;
    /** This handler's context, once it is in a pipeline. */
    ChannelHandlerContext ctx;
    private int type;
    private int length;
    private int remaining;

    BaselineFrames(ByteBuf memory) {
        this.memory = memory;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Closes the connection. */
    public void close() {
        ctx.close();
    }

    /** A whole frame has arrived; a payload is in {@link #memory} from offset 0. */
    abstract void frame(ChannelHandlerContext ctx, int type, int length);

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            while (in.isReadable()) {
                if (remaining > 0) {
                    int n = Math.min(remaining, in.readableBytes());
                    memory.setBytes(length - remaining, in, in.readerIndex(), n);
                    in.skipBytes(n);
                    remaining -= n;
                    if (remaining == 0) {
                        frame(ctx, type, length);
                    }
                    continue;
                }
                if (header.readableBytes() == 0 && in.readableBytes() >= HEADER_LENGTH) {
                    begin(ctx, in.readInt(), in.readInt());
                } else {
                    header.writeBytes(in, Math.min(HEADER_LENGTH - header.readableBytes(), in.readableBytes()));
                    if (header.readableBytes() == HEADER_LENGTH) {
                        begin(ctx, header.readInt(), header.readInt());
                        header.clear();
                    }
                }
            }
        } finally {
            in.release();
        }
    }

    private void begin(ChannelHandlerContext ctx, int type, int length) {
        this.type = type;
        this.length = length;
        boolean payload = type == DATA || type == RESPONSE || type == HELLO;
        if (payload && (length < 0 || length > memory.capacity())) {
            throw new IllegalStateException("baseline frame of " + length + " octets for a buffer of "
                    + memory.capacity());
        }
        if (payload && length > 0) {
            remaining = length;
        } else {
            frame(ctx, type, length);
        }
    }

    /** Writes a frame header (the payload, if any, follows as its own buffer). */
    static ByteBuf header(ChannelHandlerContext ctx, int type, int length) {
        return ctx.alloc().directBuffer(HEADER_LENGTH).writeInt(type).writeInt(length);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed(cause);
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        failed(new IllegalStateException("the baseline connection closed"));
        ctx.fireChannelInactive();
    }

    abstract void failed(Throwable cause);
}
