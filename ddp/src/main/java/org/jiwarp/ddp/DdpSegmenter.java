package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.jiwarp.mpa.PayloadViews;
import org.jiwarp.mpa.UlpduParts;
import io.netty.buffer.CompositeByteBuf;
import java.util.function.Consumer;
import org.jiwarp.wire.ddp.DdpHeaders;

/**
 * Cuts an outbound message into DDP segments of at most MULPDU octets (RFC 5041 section 5.2),
 * without copying the payload.
 *
 * <pre>
 *   message:  |<-------- chunk 0 -------->|<-------- chunk 1 -------->|<- chunk 2 ->|
 *
 *   ULPDU 0:  | header: L=0, TO / MO + 0  | retained slice of chunk 0 |
 *   ULPDU 1:  | header: L=0, TO / MO + c  | retained slice of chunk 1 |
 *   ULPDU 2:  | header: L=1, TO / MO + 2c | retained slice of chunk 2 |
 *             \_ 14 (tagged) or 18 octets_/
 * </pre>
 *
 * <p>Each ULPDU is a {@link CompositeByteBuf} of a small header buffer and a retained slice of the
 * message (or, on the data path, {@link UlpduParts} of the header and a recycled {@link PayloadViews}
 * view), the shape the MPA framer slices again (Netty's {@code DefaultHttp2FrameWriter} cuts DATA
 * frames the same way). Every segment but the last carries a full MULPDU; a message of zero octets
 * becomes one segment holding only the header, with L set (section 5.2: a DDP message has at least
 * one segment).
 *
 * <p>Reference counting: the message is neither consumed (its indices stay) nor released; the
 * caller still owns it and may release it as soon as this returns, the segments holding their own
 * references to its memory. Each ULPDU passes to {@code out} as soon as it is built and belongs to
 * {@code out} from then on, also when {@code out} throws; segments not yet built are not.
 */
public final class DdpSegmenter {

    /** Octets free before an inline ULPDU: MPA's ULPDU_LENGTH field. */
    public static final int HEADROOM = org.jiwarp.wire.mpa.Fpdu.HEADER_LENGTH;
    /** Octets free after an inline ULPDU: MPA's pad and CRC. */
    public static final int TAILROOM = org.jiwarp.wire.mpa.Fpdu.MAX_TRAILER_LENGTH;

    private DdpSegmenter() {
    }

    /**
     * Segments a tagged message (RDMA Write, Read Response): the STag on every segment, the Tagged
     * Offset advancing by each segment's payload (RFC 5041 section 4.2), L on the last.
     *
     * @param rdmapControl the RDMAP control byte, carried in RsvdULP
     * @param taggedOffset the TO of the message's first byte
     * @param message its readable bytes are the payload
     * @param mulpdu the most octets per ULPDU, header included; more than 14
     */
    public static void segmentTagged(ByteBufAllocator alloc, int rdmapControl, int stag, long taggedOffset,
            ByteBuf message, int mulpdu, Consumer<ByteBuf> out) {
        segmentTagged(alloc, rdmapControl, stag, taggedOffset, message, message.readerIndex(), message.readableBytes(),
                mulpdu, 0, null, segment -> out.accept(asBuffer(alloc, segment)));
    }

    /**
     * As {@link #segmentTagged(ByteBufAllocator, int, int, long, ByteBuf, int, Consumer)}, for
     * {@code length} octets of {@code source} at {@code index}; a segment of at most {@code inline}
     * payload octets is copied into one flat buffer (see {@link #HEADROOM}), a longer one references
     * the source through a view from {@code views} (recycled, so nothing is allocated per segment), or
     * a retained slice when {@code views} is {@code null}.
     */
    public static void segmentTagged(ByteBufAllocator alloc, int rdmapControl, int stag, long taggedOffset,
            ByteBuf source, int index, int length, int mulpdu, int inline, PayloadViews views,
            Consumer<Object> out) {
        segmentTagged(alloc, rdmapControl, stag, taggedOffset, source, index, length, true, mulpdu, inline, views, out);
    }

    /**
     * As {@link #segmentTagged(ByteBufAllocator, int, int, long, ByteBuf, int, int, int, int,
     * PayloadViews, Consumer)} for a part of a tagged message sent in several calls (a long Read
     * Response issued as the connection takes it): L is set on the part's last segment only when
     * {@code endsMessage}.
     */
    public static void segmentTagged(ByteBufAllocator alloc, int rdmapControl, int stag, long taggedOffset,
            ByteBuf source, int index, int length, boolean endsMessage, int mulpdu, int inline, PayloadViews views,
            Consumer<Object> out) {
        int chunk = chunk(mulpdu, DdpHeaders.TAGGED_HEADER_LENGTH);
        int offset = 0;
        do {
            int n = Math.min(chunk, length - offset);
            boolean last = endsMessage && offset + n == length;
            ByteBuf header = header(alloc, DdpHeaders.TAGGED_HEADER_LENGTH, n, inline, views);
            DdpHeaders.writeTagged(header, last, rdmapControl, stag, taggedOffset + offset);
            out.accept(ulpdu(header, source, index + offset, n, inline, views));
            offset += n;
        } while (offset < length);
    }

    /**
     * Segments an untagged message (Send and its variants, Read Request, Terminate): queue number
     * and MSN on every segment, the MO advancing from 0 (RFC 5041 section 4.3), L on the last.
     *
     * @param rdmapControl the RDMAP control byte, RsvdULP's first octet
     * @param rsvdUlpWord RsvdULP's last 32 bits: the Invalidate STag of a Send with Invalidate, else 0
     * @param qn the queue number (unsigned 32-bit)
     * @param msn the message's MSN (unsigned 32-bit)
     * @param message its readable bytes are the payload
     * @param mulpdu the most octets per ULPDU, header included; more than 18
     */
    public static void segmentUntagged(ByteBufAllocator alloc, int rdmapControl, int rsvdUlpWord, long qn, long msn,
            ByteBuf message, int mulpdu, Consumer<ByteBuf> out) {
        segmentUntagged(alloc, rdmapControl, rsvdUlpWord, qn, msn, message, message.readerIndex(),
                message.readableBytes(), mulpdu, 0, null, segment -> out.accept(asBuffer(alloc, segment)));
    }

    /**
     * As {@link #segmentUntagged(ByteBufAllocator, int, int, long, long, ByteBuf, int, Consumer)}, for
     * {@code length} octets of {@code source} at {@code index}, copying segments of at most
     * {@code inline} payload octets (see {@link #HEADROOM}) and taking longer ones' payload from
     * {@code views} when not {@code null}.
     */
    public static void segmentUntagged(ByteBufAllocator alloc, int rdmapControl, int rsvdUlpWord, long qn, long msn,
            ByteBuf source, int index, int length, int mulpdu, int inline, PayloadViews views,
            Consumer<Object> out) {
        int chunk = chunk(mulpdu, DdpHeaders.UNTAGGED_HEADER_LENGTH);
        int offset = 0;
        do {
            int n = Math.min(chunk, length - offset);
            boolean last = offset + n == length;
            ByteBuf header = header(alloc, DdpHeaders.UNTAGGED_HEADER_LENGTH, n, inline, views);
            DdpHeaders.writeUntagged(header, last, rdmapControl, rsvdUlpWord, qn, msn, offset);
            out.accept(ulpdu(header, source, index + offset, n, inline, views));
            offset += n;
        } while (offset < length);
    }

    /** How many segments a message of {@code length} octets takes (at least one). */
    public static int segmentCount(long length, int mulpdu, boolean tagged) {
        int chunk = chunk(mulpdu, tagged ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH);
        return length == 0 ? 1 : (int) ((length + chunk - 1) / chunk);
    }

    private static int chunk(int mulpdu, int headerLength) {
        if (mulpdu <= headerLength) {
            throw new IllegalArgumentException("MULPDU " + mulpdu + " leaves no room after a " + headerLength
                    + "-octet DDP header");
        }
        return mulpdu - headerLength;
    }

    /**
     * The header's buffer; for an inline segment, one flat buffer with room for the payload and with
     * {@link #HEADROOM} before the header and {@link #TAILROOM} after the payload, where the FPDU
     * framer writes ULPDU_LENGTH, pad and CRC in place (RFC 5044 section 4.1): one buffer per FPDU.
     */
    private static ByteBuf header(ByteBufAllocator alloc, int headerLength, int payload, int inline,
            PayloadViews views) {
        if (payload == 0 || payload > inline) {
            // Its own small buffer, with headroom for the framer: the payload goes as a slice.
            if (views != null) {
                return views.overhead(alloc, HEADROOM, headerLength);
            }
            ByteBuf header = alloc.directBuffer(HEADROOM + headerLength);
            return header.writerIndex(HEADROOM).readerIndex(HEADROOM);
        }
        return flat(alloc, headerLength + payload);
    }

    /**
     * An empty buffer for a ULPDU of {@code ulpduLength} octets written in one piece (a Read
     * Request, say), with {@link #HEADROOM} and {@link #TAILROOM} for the framer to work in place.
     */
    public static ByteBuf flat(ByteBufAllocator alloc, int ulpduLength) {
        ByteBuf flat = alloc.directBuffer(HEADROOM + ulpduLength + TAILROOM);
        return flat.writerIndex(HEADROOM).readerIndex(HEADROOM);
    }

    /**
     * The segment: the flat buffer itself (inline, or no payload), else the header and a retained
     * slice of the payload as {@link UlpduParts}.
     */
    private static Object ulpdu(ByteBuf header, ByteBuf message, int index, int length, int inline,
            PayloadViews views) {
        if (length == 0) {
            return header;
        }
        if (length <= inline) {
            // Copied by the source (memory address to memory address), with no NIO view in between.
            message.getBytes(index, header, header.writerIndex(), length);
            return header.writerIndex(header.writerIndex() + length);
        }
        ByteBuf payload;
        try {
            payload = views != null ? views.slice(message, index, length) : message.retainedSlice(index, length);
        } catch (RuntimeException | Error e) {
            header.release();
            throw e;
        }
        return UlpduParts.of(header, payload);
    }

    /** A segment as one composite buffer (the form of the overloads without {@code inline}). */
    private static ByteBuf asBuffer(ByteBufAllocator alloc, Object segment) {
        if (segment instanceof UlpduParts) {
            return ((UlpduParts) segment).toComposite(alloc);
        }
        CompositeByteBuf composite = alloc.compositeBuffer(2);
        return composite.addComponent(true, (ByteBuf) segment);
    }
}
