package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * Where a connection's socket reads go: Direct Data Placement's one copy (RFC 5041 section 1; Linux
 * siw's {@code siw_rx_umem} copies from the socket buffers straight into the target pages). Set it
 * on a channel before its first read, and point it at the connection's {@link FpduDeframer} once
 * MPA is in full operation ({@link #readFor}); until then, and whenever nothing better applies, it
 * reads as Netty's adaptive allocator does.
 *
 * <p>For each read it asks the deframer, in this order:
 * <ol>
 *   <li>whether the next octets are a run of payload long enough to read straight into the memory
 *       they belong in ({@link FpduDeframer#directReadBuffer}): a window over the registered region
 *       or posted receive the validated header named, or, with CRC, over the buffer that holds the
 *       FPDU until its CRC is verified. The kernel's copy is then the only one;</li>
 *   <li>whether the last ULPDU was long, so that this read should stop right where the next
 *       payload starts ({@link FpduDeframer#readToPayload}): the rest of the trailer, the length
 *       field and the header, in a buffer of exactly that size;</li>
 *   <li>else an ordinary read, sized as Netty's adaptive allocator guesses.</li>
 * </ol>
 * A long payload thus costs two reads (the octets up to it, then the payload itself) and no copy;
 * short ones are read many to a buffer and copied from it, which costs less than a read each.
 *
 * <p>One instance per channel; used on its event loop only.
 */
public final class FpduReads implements RecvByteBufAllocator {

    /** Reads per turn of the event loop: two per long FPDU, so about a megabyte of 64 KiB FPDUs. */
    static final int MAX_READS_PER_TURN = 32;

    /** Off switch for measurements ({@code -Djiwarp.directReads=false}): every read an ordinary one. */
    static final boolean ENABLED = !"false".equals(System.getProperty("jiwarp.directReads"));

    private final AdaptiveRecvByteBufAllocator adaptive = new AdaptiveRecvByteBufAllocator();
    private FpduDeframer deframer;
    /** Octets read, and of them octets read straight into place (registered memory or a held FPDU). */
    private long octetsRead;
    private long octetsReadStraight;

    public FpduReads() {
        adaptive.maxMessagesPerRead(MAX_READS_PER_TURN);
    }

    /** From the next read on, reads follow {@code deframer}'s FPDUs. On the channel's event loop. */
    public void readFor(FpduDeframer deframer) {
        this.deframer = deframer;
    }

    /** Octets the socket has read on this connection so far (on its event loop; a snapshot elsewhere). */
    public long octetsRead() {
        return octetsRead;
    }

    /**
     * Of {@link #octetsRead()}, the octets read straight into the memory they belong in, never
     * passing through a buffer of Netty's: the rest were copied out of ordinary read buffers.
     */
    public long octetsReadStraight() {
        return octetsReadStraight;
    }

    @Override
    public Handle newHandle() {
        return new ReadHandle((ExtendedHandle) adaptive.newHandle());
    }

    private final class ReadHandle implements ExtendedHandle {

        private final ExtendedHandle adaptiveHandle;
        /** Whether the buffer last handed out is a window straight into place. */
        private boolean straight;

        ReadHandle(ExtendedHandle adaptiveHandle) {
            this.adaptiveHandle = adaptiveHandle;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            FpduDeframer to = deframer;
            straight = false;
            if (to != null && ENABLED) {
                ByteBuf window = to.directReadBuffer();
                if (window != null) {
                    straight = true;
                    return window;
                }
                int exact = to.readToPayload();
                if (exact > 0) {
                    return alloc.ioBuffer(exact, exact);
                }
            }
            return adaptiveHandle.allocate(alloc);
        }

        @Override
        public void lastBytesRead(int bytes) {
            if (bytes > 0) {
                octetsRead += bytes;
                if (straight) {
                    octetsReadStraight += bytes;
                }
            } else if (deframer != null) {
                deframer.directReadMissed();
            }
            adaptiveHandle.lastBytesRead(bytes);
        }

        @Override
        public int guess() {
            return adaptiveHandle.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            adaptiveHandle.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            adaptiveHandle.incMessagesRead(numMessages);
        }

        @Override
        public int lastBytesRead() {
            return adaptiveHandle.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            adaptiveHandle.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return adaptiveHandle.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return adaptiveHandle.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return adaptiveHandle.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            adaptiveHandle.readComplete();
        }
    }
}
