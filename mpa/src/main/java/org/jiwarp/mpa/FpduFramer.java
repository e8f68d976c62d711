package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.Markers;

/**
 * Frames each outbound {@link ByteBuf} as the ULPDU of one FPDU (RFC 5044 sections 4.1-4.4),
 * without copying the payload when CRC is off.
 *
 * <p>With CRC on, the payload is copied once into a buffer of the framer's own and the CRC is computed
 * over that copy: the octets the CRC covers are then the octets that go out, even when registered
 * memory changes between this write and the transport's flush (a Write placed, in the same read
 * batch, into the source of an earlier Read Request's response; an application writing into a buffer
 * in flight). Such a change leaves the data undefined, as RFC 5040 allows, but never the CRC wrong.
 *
 * <p>Each FPDU goes down the pipeline as a run of writes, the caller's promise on the last (the
 * transport gathers them into one {@code writev}; nothing is assembled): a small overhead buffer
 * holds the leading marker (when the FPDU starts at a marker position), ULPDU_LENGTH, every marker,
 * the pad and the CRC, and the pieces written alternate slices of that buffer with views of the
 * ULPDU ({@link PayloadViews}, recycled per connection), cut at the marker positions. Without
 * markers a ULPDU in two pieces ({@link UlpduParts}) goes as header, payload and trailer, and a
 * flat ULPDU with room around it is framed in place:
 *
 * <pre>
 *  stream position: 0 mod 512                                      0 mod 512
 *                   |                                              |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *  | marker | ULPDU |  ULPDU octets ...             | marker | ... ULPDU | PAD | CRC |
 *  | FPDUPTR| LENGTH|                               | FPDUPTR|           |     | LE  |
 *  |   =0   |       |                               |        |           |     |     |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *  \___ overhead ___/\__ slice of the ULPDU ________/\_ ovh _/\_ slice __/\_ overhead _/
 * </pre>
 *
 * <p>The output is byte for byte what {@link FpduWriter} writes for the same ULPDUs: same marker
 * placement (a marker at the first octet of an FPDU precedes its length field with FPDUPTR 0 and is
 * covered by its CRC; a marker may fall right before the CRC), the CRC-32C over everything in the FPDU
 * but the CRC field, written least-significant byte first, and a zero CRC field when CRC is off.
 *
 * <p>Reference counting: the handler takes ownership of each ULPDU written to it. It releases the
 * ULPDU once its pieces are written; the pieces (and with them the ULPDU's memory) are released by
 * the transport once written. Should a write fail halfway through an FPDU, the promise fails and
 * the connection is closed: the stream cannot go on. A ULPDU longer than 65535 octets, or one whose
 * FPDU would need a marker more than 65535 octets after its length field, fails the write's promise
 * with an {@link IllegalArgumentException} and is released; nothing goes out and the stream position
 * does not move. Messages other than {@code ByteBuf}s pass through unchanged.
 *
 * <p>The stream position counts from the first octet of the first FPDU this handler frames, the
 * marker origin of RFC 5044 section 4.3: add the handler to the pipeline when full operation starts.
 * Not sharable: one instance per connection direction.
 */
public final class FpduFramer extends ChannelOutboundHandlerAdapter {

    /** Markers an FPDU can hold: a leading one plus one per 508 octets of the longest FPDU, and spare. */
    private static final int MAX_MARKERS = 2 + (Markers.LENGTH + Fpdu.length(Fpdu.MAX_ULPDU_LENGTH))
            / (Markers.INTERVAL - Markers.LENGTH);
    /** Overhead octets of the largest FPDU: markers, length field, pad and CRC. */
    private static final int MAX_OVERHEAD = Markers.LENGTH * MAX_MARKERS + Fpdu.HEADER_LENGTH + 3 + Fpdu.CRC_LENGTH;

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final Crc32c crc = new Crc32c();
    /** The overhead octets of the FPDU being framed, assembled here and copied out in one call. */
    private final byte[] scratch = new byte[MAX_OVERHEAD];
    /** Views of the ULPDUs' memory for the pieces cut at markers, recycled on the event loop. */
    private PayloadViews views;
    private ChannelHandlerContext ctx;
    private long streamPosition;

    /**
     * @param crc compute the CRC-32C (negotiated for both directions); otherwise the field is sent as zero
     * @param markers insert markers (negotiated for this direction)
     */
    public FpduFramer(boolean crc, boolean markers) {
        this.crcEnabled = crc;
        this.markersEnabled = markers;
    }

    /** Octets framed so far on this direction (markers included): the position of the next FPDU. */
    public long streamPosition() {
        return streamPosition;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        views = new PayloadViews(ctx.executor());
    }

    /**
     * Frames {@code ulpdu} and writes it toward the socket at once, flushed, ahead of anything a
     * handler above this one holds back (the RFC 6581 RTR exchange's answer, which the responder's
     * first-FPDU gate must not hold).
     */
    void writeNow(ByteBuf ulpdu) {
        write(ctx, ulpdu, ctx.voidPromise());
        ctx.flush();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        views.clear();
    }

    /** The connection's views and overhead slabs, for the layers above to build segments from. */
    public PayloadViews payloadViews() {
        return views;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof UlpduParts) {
            UlpduParts parts = (UlpduParts) msg;
            if (!markersEnabled && parts.length() <= Fpdu.MAX_ULPDU_LENGTH) {
                writeParts(ctx, parts, promise);
                return;
            }
            try {
                frame(ctx, parts.header(), parts.payload(), promise);
            } finally {
                parts.release();
            }
            return;
        }
        if (!(msg instanceof ByteBuf)) {
            ctx.write(msg, promise);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        if (!markersEnabled && framesInPlace(ulpdu)) {
            ctx.write(frameInPlace(ulpdu), promise);
            return;
        }
        try {
            frame(ctx, ulpdu, null, promise);
        } finally {
            ulpdu.release();
        }
    }

    /**
     * RFC 5044 section 4.1 for a ULPDU in two pieces: ULPDU_LENGTH in the header's headroom, then
     * header, payload and a trailer of pad and CRC, written as three buffers (the promise on the last).
     */
    private void writeParts(ChannelHandlerContext ctx, UlpduParts parts, ChannelPromise promise) {
        ByteBuf header = parts.header().retain();
        ByteBuf payload = parts.payload().retain();
        parts.release();
        int length = header.readableBytes() + payload.readableBytes();
        int start = header.readerIndex() - Fpdu.HEADER_LENGTH;
        header.setShort(start, length);
        header.readerIndex(start);
        int pad = Fpdu.padLength(length);
        if (crcEnabled) {
            // The CRC over a copy of the payload, sent in the same buffer: see the class comment.
            int payloadLength = payload.readableBytes();
            ByteBuf body = ctx.alloc().directBuffer(payloadLength + pad + Fpdu.CRC_LENGTH);
            body.writeBytes(payload, payload.readerIndex(), payloadLength).writeZero(pad);
            payload.release();
            int value = crc.reset().update(header, start, header.readableBytes())
                    .update(body, 0, body.readableBytes()).value();
            body.writeIntLE(value);
            streamPosition += header.readableBytes() + body.readableBytes();
            ctx.write(header, ctx.voidPromise());
            ctx.write(body, promise);
            return;
        }
        ByteBuf trailer = views.overhead(ctx.alloc(), 0, pad + Fpdu.CRC_LENGTH).writeZero(pad).writeIntLE(0);
        streamPosition += header.readableBytes() + payload.readableBytes() + trailer.readableBytes();
        ctx.write(header, ctx.voidPromise());
        ctx.write(payload, ctx.voidPromise());
        ctx.write(trailer, promise);
    }

    /**
     * Whether {@code ulpdu} is a flat buffer of its own with room for ULPDU_LENGTH before it and pad
     * and CRC after it (as DDP's inline segments are): then the FPDU is built in that buffer.
     */
    private static boolean framesInPlace(ByteBuf ulpdu) {
        int length = ulpdu.readableBytes();
        return ulpdu.readerIndex() >= Fpdu.HEADER_LENGTH && length <= Fpdu.MAX_ULPDU_LENGTH
                && ulpdu.writableBytes() >= Fpdu.padLength(length) + Fpdu.CRC_LENGTH
                && ulpdu.refCnt() == 1 && ulpdu.nioBufferCount() == 1 && !(ulpdu instanceof CompositeByteBuf)
                && !(ulpdu instanceof PayloadViews.View);
    }

    /** RFC 5044 section 4.1 in place: ULPDU_LENGTH before the ULPDU, zero pad and the CRC after it. */
    private ByteBuf frameInPlace(ByteBuf ulpdu) {
        int length = ulpdu.readableBytes();
        int start = ulpdu.readerIndex() - Fpdu.HEADER_LENGTH;
        ulpdu.setShort(start, length);
        ulpdu.readerIndex(start);
        ulpdu.writeZero(Fpdu.padLength(length));
        int value = crcEnabled ? crc.reset().update(ulpdu, start, ulpdu.writerIndex() - start).value() : 0;
        ulpdu.writeIntLE(value);
        streamPosition += ulpdu.readableBytes();
        return ulpdu;
    }

    /**
     * Writes the FPDU for the ULPDU made of {@code first}'s readable bytes and then {@code second}'s
     * (when not {@code null}); neither is released here. A ULPDU too long for its FPDU fails the
     * promise before anything is written, and the stream position does not move. With CRC on, the
     * FPDU is built from a copy of the ULPDU (see the class comment).
     */
    private void frame(ChannelHandlerContext ctx, ByteBuf first, ByteBuf second, ChannelPromise promise) {
        int firstLength = first.readableBytes();
        int ulpduLength = firstLength + (second == null ? 0 : second.readableBytes());
        // RFC 5044 section 4.1: ULPDU_LENGTH is a 16-bit field.
        if (ulpduLength > Fpdu.MAX_ULPDU_LENGTH) {
            promise.setFailure(new IllegalArgumentException("ULPDU of " + ulpduLength + " octets exceeds "
                    + Fpdu.MAX_ULPDU_LENGTH));
            return;
        }
        // RFC 5044 section 4.2: FPDUPTR is 16 bits, so every marker must be within 65535 octets of the
        // length field (the same limit as FpduWriter).
        if (markersEnabled && Markers.maxFpduPtr(streamPosition, Fpdu.length(ulpduLength)) > Markers.MAX_FPDUPTR) {
            promise.setFailure(new IllegalArgumentException("ULPDU of " + ulpduLength + " octets at stream position "
                    + streamPosition + " needs an FPDUPTR above " + Markers.MAX_FPDUPTR));
            return;
        }
        if (!crcEnabled) {
            writeFpdu(ctx, first, second, firstLength, ulpduLength, promise);
            return;
        }
        ByteBuf copy = ctx.alloc().directBuffer(ulpduLength, ulpduLength).writeBytes(first, first.readerIndex(),
                firstLength);
        if (second != null) {
            copy.writeBytes(second, second.readerIndex(), second.readableBytes());
        }
        try {
            writeFpdu(ctx, copy, null, ulpduLength, ulpduLength, promise);
        } finally {
            copy.release();
        }
    }

    /**
     * Writes the FPDU's pieces down the pipeline one by one, the promise on the last (the transport
     * gathers them into one {@code writev}): overhead (leading marker, ULPDU_LENGTH), ULPDU octets up
     * to the next marker position, that marker, and so on, then pad and CRC. ULPDU pieces are views
     * of the ULPDU's memory ({@link PayloadViews}); each overhead piece is a slice of one small buffer,
     * filled before the piece is written (a capture handler below records each write as it passes).
     */
    private void writeFpdu(ChannelHandlerContext ctx, ByteBuf first, ByteBuf second, int firstLength,
            int ulpduLength, ChannelPromise promise) {
        long start = streamPosition;
        int unmarked = Fpdu.length(ulpduLength);
        int markers = markersEnabled ? Markers.count(start, unmarked) : 0;
        int overheadLength = unmarked - ulpduLength + Markers.LENGTH * markers;
        ByteBuf overhead = views.overhead(ctx.alloc(), 0, overheadLength);
        // scratch[i] goes to overhead index base + i.
        int base = overhead.writerIndex();
        try {
            if (crcEnabled) {
                crc.reset();
            }
            long position = start;
            long header = start;
            int o = 0;
            if (markersEnabled && Markers.isMarkerPosition(position)) {
                // RFC 5044 section 4.3: a marker at the FPDU's first octet precedes ULPDU_LENGTH, FPDUPTR 0.
                o = putMarker(o, 0);
                position += Markers.LENGTH;
                header = position;
            }
            // RFC 5044 section 4.1: ULPDU_LENGTH counts the ULPDU only, big-endian.
            scratch[o++] = (byte) (ulpduLength >>> 8);
            scratch[o++] = (byte) ulpduLength;
            position += Fpdu.HEADER_LENGTH;
            int at = 0;
            while (at < ulpduLength) {
                if (markersEnabled && Markers.isMarkerPosition(position)) {
                    // RFC 5044 section 4.3: FPDUPTR counts back from the marker to ULPDU_LENGTH.
                    o = putMarker(o, (int) (position - header));
                    position += Markers.LENGTH;
                }
                // Just past a marker (or with markers off), so the next one is at least one octet away.
                int chunk = markersEnabled ? Math.min(ulpduLength - at, Markers.untilNextMarker(position))
                        : ulpduLength - at;
                writeOverhead(ctx, overhead, base, o);
                writeUlpdu(ctx, first, second, firstLength, at, chunk);
                at += chunk;
                position += chunk;
            }
            // RFC 5044 section 4.1: pad octets are zero and bring length field + ULPDU + pad to a multiple of 4.
            for (int pad = Fpdu.padLength(ulpduLength); pad > 0; pad--) {
                // FPDUs and markers are 4-aligned, so no marker falls inside a pad; checked as FpduWriter does.
                if (markersEnabled && Markers.isMarkerPosition(position)) {
                    o = putMarker(o, (int) (position - header));
                    position += Markers.LENGTH;
                }
                scratch[o++] = 0;
                position++;
            }
            if (markersEnabled && Markers.isMarkerPosition(position)) {
                // RFC 5044 section 4.3: a marker that falls at the CRC field goes before it, inside the FPDU.
                o = putMarker(o, (int) (position - header));
                position += Markers.LENGTH;
            }
            // RFC 5044 section 4.4: CRC-32C over the whole FPDU but the CRC field, markers included,
            // sent least-significant byte first (as Linux siw and Wireshark read it); zero when off.
            int flushed = overhead.writerIndex() - base;
            int value = crcEnabled ? crc.update(scratch, flushed, o - flushed).value() : 0;
            scratch[o++] = (byte) value;
            scratch[o++] = (byte) (value >>> 8);
            scratch[o++] = (byte) (value >>> 16);
            scratch[o++] = (byte) (value >>> 24);
            position += Fpdu.CRC_LENGTH;
            streamPosition = position;
            overhead.writeBytes(scratch, flushed, o - flushed);
            ctx.write(views.slice(overhead, base + flushed, o - flushed), promise);
        } catch (Throwable t) {
            // Part of the FPDU may have gone down the pipeline: the stream cannot continue.
            promise.tryFailure(t);
            ctx.close();
        } finally {
            overhead.release();
        }
    }

    /**
     * Writes {@code scratch[flushed, o)}, the overhead since the last ULPDU piece ({@code flushed}
     * being what {@code overhead} holds past {@code base}), into {@code overhead} and down the
     * pipeline as a view of it, adding it to the CRC.
     */
    private void writeOverhead(ChannelHandlerContext ctx, ByteBuf overhead, int base, int o) {
        int flushed = overhead.writerIndex() - base;
        if (o > flushed) {
            if (crcEnabled) {
                crc.update(scratch, flushed, o - flushed);
            }
            overhead.writeBytes(scratch, flushed, o - flushed);
            ctx.write(views.slice(overhead, base + flushed, o - flushed), ctx.voidPromise());
        }
    }

    /** Writes ULPDU octets {@code [at, at + length)} as views of {@code first} and {@code second}, into the CRC. */
    private void writeUlpdu(ChannelHandlerContext ctx, ByteBuf first, ByteBuf second, int firstLength, int at,
            int length) {
        if (at < firstLength) {
            int n = Math.min(length, firstLength - at);
            writeView(ctx, first, first.readerIndex() + at, n);
            at += n;
            length -= n;
        }
        if (length > 0) {
            writeView(ctx, second, second.readerIndex() + at - firstLength, length);
        }
    }

    private void writeView(ChannelHandlerContext ctx, ByteBuf buffer, int index, int length) {
        if (crcEnabled) {
            crc.update(buffer, index, length);
        }
        ctx.write(views.slice(buffer, index, length), ctx.voidPromise());
    }

    private int putMarker(int o, int fpduPtr) {
        // RFC 5044 section 4.2: RESERVED (16 bits, zero), then FPDUPTR (16 bits), big-endian.
        scratch[o] = 0;
        scratch[o + 1] = 0;
        scratch[o + 2] = (byte) (fpduPtr >>> 8);
        scratch[o + 3] = (byte) fpduPtr;
        return o + Markers.LENGTH;
    }
}
