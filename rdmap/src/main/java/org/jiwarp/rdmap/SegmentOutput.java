package org.jiwarp.rdmap;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import org.jiwarp.mpa.PayloadViews;

/**
 * Where a stream's DDP segments go: the connection below RDMAP (in jiwarp, MPA's FPDU framer on a
 * Netty channel). The transmitter writes every segment but a message's last with {@link #write};
 * the last goes through {@link #writeLast} when somebody waits for it. Nothing is flushed here: the
 * connection flushes once per batch of posted work or of inbound ULPDUs.
 *
 * <p>A segment is a {@code ByteBuf} or an {@code UlpduParts}; it belongs to the output once passed.
 *
 * <p>Responses nobody waits for individually (Read Responses, Atomic Responses) are tracked by
 * position instead of by future: {@link #written()} counts up as segments are written, and
 * {@link #sent()} follows it as TCP takes them. A segment has gone to TCP once {@code sent()}
 * reaches the {@code written()} read right after writing it. Each segment must reach the count
 * during its {@code write}, not later at a flush.
 */
public interface SegmentOutput {

    ByteBufAllocator alloc();

    /**
     * Where segments get views of the payload's memory, recycled per connection; {@code null} for
     * a plain retained slice per segment.
     */
    default PayloadViews payloadViews() {
        return null;
    }

    /** Writes a segment nobody waits for. */
    void write(Object segment);

    /** Writes a message's last segment; the future completes once it has gone to TCP. */
    ChannelFuture writeLast(Object segment);

    /** The position after everything written so far: a running count of this output's octets. */
    long written();

    /** The position up to which everything written has gone to TCP; at most {@link #written()}. */
    long sent();

    /**
     * Whether the connection takes more now: its unsent octets are below their bound (Netty's write
     * buffer high water mark). Whatever a peer can make this end send (Read Responses) is issued only
     * while it does.
     */
    default boolean writable() {
        return true;
    }
}
