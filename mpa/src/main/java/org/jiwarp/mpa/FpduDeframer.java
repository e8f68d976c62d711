package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Turns the inbound byte stream of MPA full operation into ULPDUs (RFC 5044 sections 4.1-4.4, 6):
 * finds each FPDU by its length field, checks its markers and CRC, and passes the ULPDU up as a
 * {@link ByteBuf} without copying it.
 *
 * <pre>
 *  stream position: 0 mod 512                                      0 mod 512
 *                   |                                              |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *  | marker | ULPDU |  ULPDU octets ...             | marker | ... ULPDU | PAD | CRC |
 *  | FPDUPTR| LENGTH|                               | FPDUPTR|           |     | LE  |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *                    \_________ emitted ULPDU: slices around the markers __/
 * </pre>
 *
 * <p>Each ULPDU goes up as a retained slice of the cumulation when no marker sits inside it, and as a
 * {@link CompositeByteBuf} of retained slices around the markers otherwise. Whoever receives a ULPDU
 * releases it. An FPDU is passed up only once it is complete and valid; the reader index never moves
 * on an incomplete FPDU, so any TCP segmentation gives the same ULPDUs ({@link FpduReader} is the
 * copying reference for the same rules).
 *
 * <p>Checks, in stream order, before anything of an FPDU goes up:
 * <ol>
 *   <li>ULPDU_LENGTH at most {@code maxUlpduLength}, else
 *       {@link TerminateError#LLP_MARKER_ULPDU_LENGTH_MISMATCH}: RFC 5044 section 8 has no code of its
 *       own for an over-long FPDU, and 0x03 is the error about an invalid ULPDU Length field (the
 *       alternative, waiting for the CRC, would mean buffering an FPDU we already know we refuse);</li>
 *   <li>with markers, every marker's FPDUPTR (the leading one 0, the others the distance back to
 *       ULPDU_LENGTH, its two low bits taken as zero), else
 *       {@link TerminateError#LLP_MARKER_ULPDU_LENGTH_MISMATCH}. Markers come first
 *       because they say where the FPDU is, and RFC 5044 section 6 has the receiver locate the FPDU
 *       before it checks the CRC; a bad marker with CRC on is therefore reported as a marker error
 *       (it breaks the CRC too, which covers the markers). The marker's
 *       RESERVED field is ignored on receive (RFC 5044 section 4.2), as are the pad octets
 *       (section 4.1; Linux siw sends garbage there);</li>
 *   <li>with CRC, the CRC-32C over the FPDU (markers included) against the little-endian CRC field,
 *       else {@link TerminateError#LLP_CRC_ERROR}. With CRC off the field is not read (siw sends
 *       zeros).</li>
 * </ol>
 *
 * <p>On the first error the deframer throws an {@link MpaException} carrying the error (Netty passes
 * it to {@code exceptionCaught} down the pipeline) and discards that FPDU and every octet after it.
 * It does not close the connection: RFC 5044 section 8 leaves that to DDP's ULP (jiwarp's RDMAP
 * sends its Terminate, then closes). FPDUs that arrived complete and valid before the bad one have
 * already gone up; nothing else ever does. A partial FPDU left when the channel goes inactive is
 * dropped silently: reporting a lost connection is the connection handler's job.
 *
 * <p>Per FPDU the deframer allocates nothing but the emitted slices (and a composite when markers
 * cut the ULPDU): one reusable {@link Crc32c}, no arrays, no lambdas. The stream position counts
 * from the first octet after the MPA Request or Reply, the marker origin of RFC 5044 section 4.3.
 * Not sharable: one instance per connection.
 */
public final class FpduDeframer extends ByteToMessageDecoder {

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final int maxUlpduLength;
    private final Crc32c crc = new Crc32c();
    private long streamPosition;
    /** Wire length of the FPDU at {@link #streamPosition} once its length field was read, else 0. */
    private int pendingWireLength;
    private boolean failed;

    /** A deframer that accepts ULPDUs up to 65535 octets. */
    public FpduDeframer(boolean crc, boolean markers) {
        this(crc, markers, Fpdu.MAX_ULPDU_LENGTH);
    }

    /**
     * @param crc check the CRC-32C (negotiated for both directions); otherwise the CRC field is ignored
     * @param markers expect markers (negotiated for this direction: we asked the peer for them)
     * @param maxUlpduLength the longest ULPDU accepted, 1..65535 (for example the MULPDU we advertise)
     */
    public FpduDeframer(boolean crc, boolean markers, int maxUlpduLength) {
        if (maxUlpduLength < 1 || maxUlpduLength > Fpdu.MAX_ULPDU_LENGTH) {
            throw new IllegalArgumentException("maxUlpduLength " + maxUlpduLength + " not in 1.." + Fpdu.MAX_ULPDU_LENGTH);
        }
        this.crcEnabled = crc;
        this.markersEnabled = markers;
        this.maxUlpduLength = maxUlpduLength;
        // A large FPDU that spans TCP reads is gathered as a composite of the reads, not copied into
        // one buffer: the payload's only copy is then its placement into registered memory. Small
        // ones are cheaper merged (one short copy beats slicing a composite per FPDU).
        setCumulator((alloc, cumulation, in) -> (pendingWireLength > COMPOSITE_ABOVE ? COMPOSITE_CUMULATOR
                : MERGE_CUMULATOR).cumulate(alloc, cumulation, in));
    }

    /** The pending FPDU length above which reads are gathered rather than merged. */
    private static final int COMPOSITE_ABOVE = 8192;

    /** Octets consumed so far (markers included): the stream position of the next FPDU. */
    public long streamPosition() {
        return streamPosition;
    }

    /** {@code true} once an FPDU failed a check; the deframer then discards everything. */
    public boolean failed() {
        return failed;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        int start = in.readerIndex();
        long position = streamPosition;
        int headerIndex = start;
        long header = position;
        if (markersEnabled && Markers.isMarkerPosition(position)) {
            // RFC 5044 section 4.3: a marker at the FPDU's first octet precedes ULPDU_LENGTH.
            headerIndex += Markers.LENGTH;
            header += Markers.LENGTH;
        }
        int wireLength = pendingWireLength;
        if (wireLength == 0) {
            if (in.writerIndex() - headerIndex < Fpdu.HEADER_LENGTH) {
                return;
            }
            int ulpduLength = Fpdu.ulpduLength(in, headerIndex);
            if (ulpduLength > maxUlpduLength) {
                // RFC 5044 section 8: the ULPDU Length field is invalid (code 0x03; see the class javadoc).
                throw fail(in, TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, "ULPDU_LENGTH " + ulpduLength
                        + " above the limit of " + maxUlpduLength + " at stream position " + header);
            }
            int unmarked = Fpdu.length(ulpduLength);
            wireLength = markersEnabled ? Markers.markedLength(position, unmarked) : unmarked;
            // Kept so that a long FPDU arriving in small pieces is measured once.
            pendingWireLength = wireLength;
        }
        if (in.readableBytes() < wireLength) {
            return;
        }
        int ulpduLength = Fpdu.ulpduLength(in, headerIndex);
        int crcIndex = start + wireLength - Fpdu.CRC_LENGTH;
        if (markersEnabled) {
            checkMarkers(in, start, position, header, crcIndex);
        }
        // RFC 5044 section 4.4: CRC-32C over the FPDU up to the CRC field, markers and pad included;
        // the field is little-endian. Section 6: an FPDU that fails it never reaches the ULP.
        if (crcEnabled) {
            int computed = crc.reset().update(in, start, crcIndex - start).value();
            int field = Fpdu.crc(in, crcIndex);
            if (computed != field) {
                throw fail(in, TerminateError.LLP_CRC_ERROR, String.format(
                        "bad CRC32C in the FPDU at stream position %d: field 0x%08x, computed 0x%08x",
                        position, field, computed));
            }
        }
        out.add(ulpdu(ctx, in, headerIndex + Fpdu.HEADER_LENGTH, header + Fpdu.HEADER_LENGTH, ulpduLength));
        in.readerIndex(start + wireLength);
        streamPosition = position + wireLength;
        pendingWireLength = 0;
    }

    /** Checks the FPDUPTR of every marker in {@code [start, crcIndex)} of the FPDU at {@code position}. */
    private void checkMarkers(ByteBuf in, int start, long position, long header, int crcIndex) {
        // A marker never falls inside the CRC field: one due there goes before it (section 4.3).
        long marker = position + Markers.untilNextMarker(position);
        for (int i = start + (int) (marker - position); i < crcIndex; i += Markers.INTERVAL) {
            // RFC 5044 section 4.3: FPDUPTR is the distance back from the marker to ULPDU_LENGTH,
            // 0 for the marker at the FPDU's first octet; a mismatch is error 0x03 (section 8).
            long expected = marker == position ? 0 : marker - header;
            // RFC 5044 section 4.2: the receiver treats the two low bits of FPDUPTR as zero.
            int fpduPtr = Markers.fpduPtr(in, i) & ~0x3;
            if (fpduPtr != expected) {
                throw fail(in, TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, "marker at stream position "
                        + marker + " has FPDUPTR " + fpduPtr + ", the FPDU that starts at " + position
                        + " puts it " + expected + " octets after ULPDU_LENGTH");
            }
            marker += Markers.INTERVAL;
        }
    }

    /**
     * The ULPDU of {@code length} octets whose first octet is at {@code index} (stream position
     * {@code position}): one retained slice, or a composite of retained slices around the markers.
     */
    private ByteBuf ulpdu(ChannelHandlerContext ctx, ByteBuf in, int index, long position, int length) {
        // The ULPDU starts 2 octets past a 4-aligned length field, so never at a marker position.
        int first = markersEnabled ? Math.min(length, Markers.untilNextMarker(position)) : length;
        if (first == length) {
            return in.retainedSlice(index, length);
        }
        int chunkLength = Markers.INTERVAL - Markers.LENGTH;
        int pieces = 1 + (length - first + chunkLength - 1) / chunkLength;
        CompositeByteBuf ulpdu = ctx.alloc().compositeBuffer(pieces);
        try {
            ulpdu.addComponent(true, in.retainedSlice(index, first));
            index += first + Markers.LENGTH;
            for (int remaining = length - first; remaining > 0; ) {
                int chunk = Math.min(remaining, chunkLength);
                ulpdu.addComponent(true, in.retainedSlice(index, chunk));
                index += chunk + Markers.LENGTH;
                remaining -= chunk;
            }
            return ulpdu;
        } catch (Throwable t) {
            ulpdu.release();
            throw t;
        }
    }

    /** Marks the stream failed, discards every octet left, and returns the exception to throw. */
    private MpaException fail(ByteBuf in, TerminateError error, String message) {
        failed = true;
        in.skipBytes(in.readableBytes());
        return new MpaException(error, message);
    }
}
