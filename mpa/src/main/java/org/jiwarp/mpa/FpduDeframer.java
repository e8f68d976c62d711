package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Turns the inbound byte stream of MPA full operation into ULPDUs (RFC 5044 sections 4.1-4.4, 6) in
 * one pass over each TCP read, as Linux siw's receive path does: the length field and the ULP
 * header are taken as soon as their octets arrive, the payload goes on from each read as it is, the
 * CRC-32C runs over the pieces as they pass, and markers are checked and stripped in the same pass.
 * Nothing of an FPDU is carried from one read to the next but the few octets of a field cut by the
 * read's end (a length field, a marker, the CRC, a ULP header).
 *
 * <pre>
 *  stream position: 0 mod 512                                      0 mod 512
 *                   |                                              |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *  | marker | ULPDU |  ULPDU octets ...             | marker | ... ULPDU | PAD | CRC |
 *  | FPDUPTR| LENGTH|                               | FPDUPTR|           |     | LE  |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *             read 1 ...........|  read 2 ..........................|  read 3 .......
 *                    header ---> payload pieces, one per read and per marker gap ---> end
 * </pre>
 *
 * <p>Where ULPDUs go:
 * <ul>
 *   <li>Once the layer above has called {@link #streamTo}, to its {@link UlpduSink}: the header it
 *       asks for, then each payload piece straight from the read (no slice, no copy here), then the
 *       end once the CRC and markers are good; or, when the sink declines to stream a ULPDU, the
 *       whole ULPDU (gathered in one reused buffer) once it is checked. The switch happens between
 *       FPDUs.</li>
 *   <li>Before that (MPA setup's first FPDUs, the test kit's raw peers), up the pipeline as one
 *       {@link ByteBuf} per ULPDU, released by whoever receives it: a retained slice of the read
 *       when the whole FPDU is in it without markers, else a buffer the ULPDU is gathered into as its
 *       pieces pass. An FPDU goes up only once it is complete and valid.</li>
 * </ul>
 *
 * <p>Checks, in stream order:
 * <ol>
 *   <li>ULPDU_LENGTH at most {@code maxUlpduLength}, else
 *       {@link TerminateError#LLP_MARKER_ULPDU_LENGTH_MISMATCH}: RFC 5044 section 8 has no code of its
 *       own for an over-long FPDU, and 0x03 is the error about an invalid ULPDU Length field;</li>
 *   <li>with markers, each marker's FPDUPTR as it arrives (the leading one 0, the others the
 *       distance back to ULPDU_LENGTH, its two low bits taken as zero, RFC 5044 section 4.2), else
 *       {@link TerminateError#LLP_MARKER_ULPDU_LENGTH_MISMATCH}. The marker's RESERVED field is
 *       ignored (section 4.2), as are the pad octets (section 4.1; Linux siw sends garbage there);</li>
 *   <li>with CRC, the CRC-32C over the FPDU (markers and pad included) against the little-endian CRC
 *       field, else {@link TerminateError#LLP_CRC_ERROR}. With CRC off the field is not checked (siw
 *       sends zeros).</li>
 * </ol>
 *
 * <p><b>What a bad FPDU leaves behind.</b> A streamed payload is placed before its FPDU's CRC is
 * known, which departs from the letter of RFC 5044 section 6 (verify the FPDU before passing its
 * ULPDU to DDP) as Linux siw does; the requirement matrix records it (5044-6-01). What keeps it
 * safe: the headers are checked first, so DDP and RDMAP validate the target before one octet goes
 * there; RFC 5041 keeps Placement apart from Delivery (section 5.4: a message is delivered once all
 * its segments are placed), and delivery waits for the CRC ({@link UlpduSink#end}); a bad CRC ends
 * the stream (RFC 5044 section 8) with a Terminate, and the message never completes (no Read
 * completion). What was placed stays in the validated buffer as the undefined contents of a message
 * never delivered. Nothing is ever placed outside a target that passed its checks.
 *
 * <p>On the first error the deframer throws an {@link MpaException} carrying the error (Netty passes
 * it to {@code exceptionCaught} down the pipeline) and discards every octet after it. It does not
 * close the connection: RFC 5044 section 8 leaves that to DDP's ULP (jiwarp's RDMAP sends its
 * Terminate, then closes). A partial FPDU left when the channel goes inactive is dropped silently:
 * reporting a lost connection is the connection handler's job. {@link FpduReader} is the
 * copying reference for the same rules.
 *
 * <p>Per FPDU nothing is allocated in streaming mode; in pipeline mode the emitted buffer. The
 * stream position counts from the first octet after the MPA Request or Reply, the marker origin of
 * RFC 5044 section 4.3. Not sharable: one instance per connection.
 */
public final class FpduDeframer extends ChannelInboundHandlerAdapter {

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final int maxUlpduLength;
    private final Crc32c crc = new Crc32c();
    private long streamPosition;
    private boolean failed;
    /** Where ULPDUs go from the next FPDU on; {@code null}: up the pipeline. */
    private UlpduSink sink;

    // The FPDU in progress.
    private boolean inFpdu;
    /** Stream position of its first octet (its leading marker's, if it has one). */
    private long fpduStart;
    /** Stream position of its ULPDU_LENGTH field. */
    private long lengthFieldPosition;
    /** Its octets consumed that are not markers: ULPDU_LENGTH, ULPDU, pad, CRC. */
    private int content;
    /** ULPDU_LENGTH + ULPDU + pad + CRC, once ULPDU_LENGTH is known. */
    private int contentLength;
    private int ulpduLength;
    /** The length or CRC field gathered so far. */
    private int field;
    /** Octets of the marker in progress consumed, 0 between markers. */
    private int markerOctets;
    /** The FPDUPTR of the marker in progress, gathered so far. */
    private int fpduPtr;
    /** The sink this FPDU goes to, or {@code null} (up the pipeline). */
    private UlpduSink current;
    /** Sink: the payload goes to it in pieces. */
    private boolean streaming;
    /** Sink: header octets still to come before {@link UlpduSink#begin}. */
    private int headerWanted;
    /** Sink: the ULP header (reused). */
    private final ByteBuf header = Unpooled.buffer(32);
    /** The ULPDU gathered whole: a new buffer for the pipeline, {@link #wholeForSink} for the sink. */
    private ByteBuf gathered;
    private ByteBuf wholeForSink;

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
    }

    /** Octets consumed so far (markers included). */
    public long streamPosition() {
        return streamPosition;
    }

    /** {@code true} once an FPDU failed a check; the deframer then discards everything. */
    public boolean failed() {
        return failed;
    }

    /**
     * From the next FPDU on, ULPDUs go to {@code sink} instead of up the pipeline. Called on the
     * channel's event loop (typically while the previous ULPDU goes up).
     */
    public void streamTo(UlpduSink sink) {
        this.sink = sink;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf in = (ByteBuf) msg;
        try {
            int i = in.readerIndex();
            int end = in.writerIndex();
            while (i < end && !failed) {
                if (!inFpdu) {
                    int whole = wholeFpduInPlace(ctx, in, i, end);
                    if (whole > 0) {
                        i += whole;
                        continue;
                    }
                    startFpdu();
                }
                i += step(ctx, in, i, end);
            }
        } finally {
            in.release();
        }
    }

    private void startFpdu() {
        inFpdu = true;
        fpduStart = streamPosition;
        content = 0;
        contentLength = 0;
        field = 0;
        if (crcEnabled) {
            crc.reset();
        }
    }

    /**
     * Pipeline mode without markers, at an FPDU's start: when the whole FPDU is in this read, its
     * ULPDU goes up as a retained slice (no copy). Returns the octets consumed, 0 when it does not apply.
     */
    private int wholeFpduInPlace(ChannelHandlerContext ctx, ByteBuf in, int i, int end) {
        if (sink != null || markersEnabled || end - i < Fpdu.HEADER_LENGTH) {
            return 0;
        }
        int length = Fpdu.ulpduLength(in, i);
        int wireLength = Fpdu.length(length);
        if (length > maxUlpduLength || end - i < wireLength) {
            return 0; // the general path reports an over-long one
        }
        int crcIndex = i + wireLength - Fpdu.CRC_LENGTH;
        if (crcEnabled) {
            check(crc.reset().update(in, i, crcIndex - i).value(), Fpdu.crc(in, crcIndex), streamPosition);
        }
        streamPosition += wireLength;
        ctx.fireChannelRead(in.retainedSlice(i + Fpdu.HEADER_LENGTH, length));
        return wireLength;
    }

    /** Consumes the next run of octets of one kind (marker, length, ULPDU, pad or CRC); returns how many. */
    private int step(ChannelHandlerContext ctx, ByteBuf in, int i, int end) {
        long position = streamPosition;
        if (markersEnabled && (markerOctets > 0 || Markers.isMarkerPosition(position))) {
            return marker(in, i, end);
        }
        int available = end - i;
        if (markersEnabled) {
            available = Math.min(available, Markers.untilNextMarker(position));
        }
        int n;
        if (content < Fpdu.HEADER_LENGTH) {
            if (content == 0) {
                lengthFieldPosition = position;
            }
            n = Math.min(available, Fpdu.HEADER_LENGTH - content);
            for (int k = 0; k < n; k++) {
                field = field << 8 | in.getUnsignedByte(i + k);
            }
            update(in, i, n);
            advance(n);
            if (content == Fpdu.HEADER_LENGTH) {
                lengthKnown(ctx);
            }
            return n;
        }
        int ulpduEnd = Fpdu.HEADER_LENGTH + ulpduLength;
        if (content < ulpduEnd) {
            n = Math.min(available, ulpduEnd - content);
            update(in, i, n);
            ulpduOctets(in, i, n);
            advance(n);
            return n;
        }
        int crcStart = contentLength - Fpdu.CRC_LENGTH;
        if (content < crcStart) {
            n = Math.min(available, crcStart - content);
            update(in, i, n);
            advance(n);
            return n;
        }
        // RFC 5044 section 4.4: the CRC field is little-endian.
        n = Math.min(available, contentLength - content);
        for (int k = 0; k < n; k++) {
            field |= in.getUnsignedByte(i + k) << 8 * (content - crcStart + k);
        }
        advance(n);
        if (content == contentLength) {
            fpduEnded(ctx);
        }
        return n;
    }

    /** Octets of a marker: covered by the CRC, FPDUPTR checked once all four are in. */
    private int marker(ByteBuf in, int i, int end) {
        int n = Math.min(end - i, Markers.LENGTH - markerOctets);
        for (int k = 0; k < n; k++) {
            if (markerOctets + k >= Markers.FPDUPTR_OFFSET) {
                fpduPtr = fpduPtr << 8 | in.getUnsignedByte(i + k);
            }
        }
        update(in, i, n);
        markerOctets += n;
        streamPosition += n;
        if (markerOctets == Markers.LENGTH) {
            long at = streamPosition - Markers.LENGTH;
            // RFC 5044 section 4.3: FPDUPTR is the distance back from the marker to ULPDU_LENGTH, 0 for
            // the marker at the FPDU's first octet; section 4.2: its two low bits are taken as zero.
            long expected = at == fpduStart ? 0 : at - lengthFieldPosition;
            int got = fpduPtr & ~0x3;
            markerOctets = 0;
            fpduPtr = 0;
            if (got != expected) {
                throw fail(TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, "marker at stream position " + at
                        + " has FPDUPTR " + got + ", the FPDU that starts at " + fpduStart + " puts it " + expected
                        + " octets after ULPDU_LENGTH");
            }
        }
        return n;
    }

    private void lengthKnown(ChannelHandlerContext ctx) {
        ulpduLength = field;
        field = 0;
        if (ulpduLength > maxUlpduLength) {
            // RFC 5044 section 8: the ULPDU Length field is invalid (code 0x03; see the class javadoc).
            throw fail(TerminateError.LLP_MARKER_ULPDU_LENGTH_MISMATCH, "ULPDU_LENGTH " + ulpduLength
                    + " above the limit of " + maxUlpduLength + " at stream position " + lengthFieldPosition);
        }
        contentLength = Fpdu.length(ulpduLength);
        current = sink;
        streaming = false;
        headerWanted = 0;
        if (current == null) {
            gathered = ctx.alloc().buffer(ulpduLength);
        } else {
            // The header length is asked for with the ULPDU's first octet (see ulpduOctets).
            headerWanted = -1;
            gathered = null;
        }
    }

    /** {@code n} octets of the ULPDU at {@code i}: header, payload piece, or gathered whole. */
    private void ulpduOctets(ByteBuf in, int i, int n) {
        if (current == null) {
            gathered.writeBytes(in, i, n);
            return;
        }
        if (headerWanted < 0) {
            int wanted = current.headerLength(in.getUnsignedByte(i));
            if (wanted <= 0 || wanted > ulpduLength) {
                gatherWhole();
            } else {
                headerWanted = wanted;
                header.clear();
            }
        }
        if (headerWanted > 0) {
            int h = Math.min(n, headerWanted);
            header.writeBytes(in, i, h);
            headerWanted -= h;
            i += h;
            n -= h;
            if (headerWanted > 0) {
                return;
            }
            streaming = current.begin(header, ulpduLength);
            if (!streaming) {
                gatherWhole();
                gathered.writeBytes(header, header.readerIndex(), header.readableBytes());
            }
        }
        if (n == 0) {
            return;
        }
        if (streaming) {
            current.payload(in, i, n);
        } else {
            gathered.writeBytes(in, i, n);
        }
    }

    private void gatherWhole() {
        headerWanted = 0;
        if (wholeForSink == null) {
            wholeForSink = Unpooled.buffer(Math.max(64, ulpduLength));
        }
        gathered = wholeForSink.clear();
    }

    /** The CRC field is in: check it, then the ULPDU goes on. */
    private void fpduEnded(ChannelHandlerContext ctx) {
        inFpdu = false;
        if (crcEnabled) {
            check(crc.value(), field, fpduStart);
        }
        UlpduSink to = current;
        ByteBuf ulpdu = gathered;
        gathered = null;
        current = null;
        if (to == null) {
            ctx.fireChannelRead(ulpdu);
        } else if (streaming) {
            to.end();
        } else {
            if (ulpdu == null) {
                ulpdu = gatheredEmpty();
            }
            to.whole(ulpdu);
        }
    }

    /** An empty ULPDU for the sink (no ULPDU octet came to ask for the header length). */
    private ByteBuf gatheredEmpty() {
        ulpduLength = 0;
        gatherWhole();
        return gathered;
    }

    /** RFC 5044 section 4.4: CRC-32C over the FPDU up to the CRC field; section 6: a bad one never reaches the ULP. */
    private void check(int computed, int fieldValue, long position) {
        if (computed != fieldValue) {
            throw fail(TerminateError.LLP_CRC_ERROR, String.format(
                    "bad CRC32C in the FPDU at stream position %d: field 0x%08x, computed 0x%08x", position,
                    fieldValue, computed));
        }
    }

    private void update(ByteBuf in, int i, int n) {
        if (crcEnabled) {
            crc.update(in, i, n);
        }
    }

    private void advance(int n) {
        content += n;
        streamPosition += n;
    }

    /** Marks the stream failed, drops what was gathered, and returns the exception to throw. */
    private MpaException fail(TerminateError error, String message) {
        failed = true;
        dropGathered();
        return new MpaException(error, message);
    }

    private void dropGathered() {
        if (gathered != null && gathered != wholeForSink) {
            gathered.release();
        }
        gathered = null;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dropGathered();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        dropGathered();
    }
}
