package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultMessageSizeEstimator;
import io.netty.channel.MessageSizeEstimator;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.Recycler;
import io.netty.util.ReferenceCounted;

/**
 * A ULPDU in two pieces, as the layer above builds it without copying: its header (a small buffer
 * of its own, with {@link #HEADROOM} before it for ULPDU_LENGTH) and its payload (a retained slice of
 * registered memory). {@link FpduFramer} writes the FPDU as three buffers, header, payload and
 * trailer (pad and CRC), instead of assembling a composite: no component objects, no NIO views. With
 * CRC on it copies the payload and sends header and copy, pad and CRC: two buffers.
 * Whoever holds it releases it, and with it both pieces. The holder objects are recycled (one per
 * segment on the data path, so none is allocated in steady state): never keep one after releasing it.
 */
public final class UlpduParts extends AbstractReferenceCounted {

    /** Octets free before the header: RFC 5044 section 4.1's ULPDU_LENGTH. */
    public static final int HEADROOM = org.jiwarp.wire.mpa.Fpdu.HEADER_LENGTH;

    private static final Recycler<UlpduParts> RECYCLER = new Recycler<>() {
        @Override
        protected UlpduParts newObject(Handle<UlpduParts> handle) {
            return new UlpduParts(handle);
        }
    };

    /**
     * The size of what a connection of jiwarp's writes, for Netty's write buffer accounting
     * ({@code ChannelOption.MESSAGE_SIZE_ESTIMATOR}): a ULPDU in two pieces counts its octets, as a
     * buffer does, also while a handler above the framer holds it (the responder's first-FPDU gate),
     * so that the connection's writability bounds it as it bounds everything else.
     */
    public static final MessageSizeEstimator SIZE_ESTIMATOR = new MessageSizeEstimator() {
        private final MessageSizeEstimator.Handle handle = msg -> msg instanceof UlpduParts
                ? ((UlpduParts) msg).length() : DefaultMessageSizeEstimator.DEFAULT.newHandle().size(msg);

        @Override
        public MessageSizeEstimator.Handle newHandle() {
            return handle;
        }
    };

    private final Recycler.Handle<UlpduParts> handle;
    private ByteBuf header;
    private ByteBuf payload;

    private UlpduParts(Recycler.Handle<UlpduParts> handle) {
        this.handle = handle;
    }

    /**
     * Takes over both pieces.
     *
     * @param header  the header's readable bytes, with at least {@link #HEADROOM} octets before its
     *                reader index that the framer may overwrite
     * @param payload the payload's readable bytes; not empty
     */
    public static UlpduParts of(ByteBuf header, ByteBuf payload) {
        if (header.readerIndex() < HEADROOM) {
            throw new IllegalArgumentException("the header needs " + HEADROOM + " octets of headroom");
        }
        UlpduParts parts = RECYCLER.get();
        parts.setRefCnt(1);
        parts.header = header;
        parts.payload = payload;
        return parts;
    }

    public ByteBuf header() {
        return header;
    }

    public ByteBuf payload() {
        return payload;
    }

    public int length() {
        return header.readableBytes() + payload.readableBytes();
    }

    /** The same ULPDU as one buffer, for paths that need one (markers): takes over both pieces. */
    public ByteBuf toComposite(io.netty.buffer.ByteBufAllocator alloc) {
        io.netty.buffer.CompositeByteBuf composite = alloc.compositeBuffer(2);
        composite.addComponent(true, header.retain());
        composite.addComponent(true, payload.retain());
        release();
        return composite;
    }

    @Override
    protected void deallocate() {
        ByteBuf h = header;
        ByteBuf p = payload;
        header = null;
        payload = null;
        handle.recycle(this);
        h.release();
        p.release();
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        header.touch(hint);
        payload.touch(hint);
        return this;
    }
}
