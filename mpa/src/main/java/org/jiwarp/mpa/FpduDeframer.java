package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.Markers;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Turns the inbound byte stream of MPA full operation into ULPDUs (RFC 5044 sections 4.1-4.4, 6) in
 * one pass over each TCP read, as Linux siw's receive path does: the length field and the ULP
 * header are taken as soon as their octets arrive, markers are checked and stripped in the same
 * pass, and the CRC-32C runs over the pieces as they pass.
 *
 * <pre>
 *  stream position: 0 mod 512                                      0 mod 512
 *                   |                                              |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *  | marker | ULPDU |  ULPDU octets ...             | marker | ... ULPDU | PAD | CRC |
 *  | FPDUPTR| LENGTH|                               | FPDUPTR|           |     | LE  |
 *  +--------+-------+-------------------------------+--------+-----------+-----+-----+
 *             read 1 ...........|  read 2 ..........................|  read 3 .......
 * </pre>
 *
 * <p>Where ULPDUs go:
 * <ul>
 *   <li>Once the layer above has given a {@link UlpduSink} ({@link #deliverTo}, before the first
 *       FPDU), to it, from the first FPDU on. <b>Without CRC</b> the header goes to the sink as soon
 *       as its octets are in, then the payload, straight from each read or, for a payload long
 *       enough, read by the socket straight into the memory the sink names ({@link
 *       UlpduSink#placementWindow}: direct placement, one copy, the kernel's); then the end once the
 *       trailer is in. <b>With CRC</b> each ULPDU is held (in one pooled buffer of its length, which
 *       the socket reads into straight when the ULPDU is long) until the FPDU's CRC is verified,
 *       and only then handed to the sink: nothing of an FPDU whose CRC fails reaches the layer
 *       above (RFC 5044 section 8), so a header damaged on the wire never decides where octets go.
 *       </li>
 *   <li>Without a sink (the test kit's raw peers), up the pipeline as one {@link ByteBuf} per ULPDU,
 *       released by whoever receives it, once the FPDU is complete and valid.</li>
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
 * <p>The connection's first ULPDU may be an RFC 6581 ready-to-receive frame, which the codec checks
 * and swallows ({@link RtrExchange}); its arrival opens the responder's {@link FirstFpduGate}.
 *
 * <p>On the first error the deframer throws an {@link MpaException} carrying the error (Netty passes
 * it to {@code exceptionCaught} down the pipeline) and discards every octet after it. It does not
 * close the connection: RFC 5044 section 8 leaves that to DDP's ULP (jiwarp's RDMAP sends its
 * Terminate, then closes). A partial FPDU left when the channel goes inactive is dropped silently:
 * reporting a lost connection is the connection handler's job. {@link FpduReader} is the copying
 * reference for the same rules.
 *
 * <p>Per FPDU nothing is allocated with a sink (a held ULPDU's buffer is pooled); without one, the
 * emitted buffer. The stream position counts from the first octet after the MPA Request or Reply,
 * the marker origin of RFC 5044 section 4.3. Not sharable: one instance per connection.
 */
public final class FpduDeframer extends ChannelInboundHandlerAdapter {

    /**
     * Payload octets below which no read goes straight into the target: a read (a system call) of
     * its own costs more than copying fewer octets out of a larger read.
     */
    static final int DIRECT_READ_MIN = 4096;
    /**
     * Octets a read that stops at the next payload takes beyond the next header: a short FPDU after a
     * long one (a message one segment and a little long ends in one) then comes in the same read,
     * and a long one gives only these few octets of its payload to a copy.
     */
    static final int READ_PAST_HEADER = 64;

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final int maxUlpduLength;
    private final Crc32c crc = new Crc32c();
    private long streamPosition;
    private boolean failed;
    /** Where ULPDUs go; {@code null}: up the pipeline. */
    private UlpduSink sink;
    /** The first ULPDU's RFC 6581 exchange, until that ULPDU is in; {@code null} without one. */
    private RtrExchange rtr;
    /** Where an RTR answer goes, and the responder's gate that the first FPDU opens. */
    private FpduFramer framer;
    private FirstFpduGate gate;
    private boolean firstFpduSeen;
    private ChannelHandlerContext ctx;

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
    /** The FPDU PTR of the marker in progress, gathered so far. */
    private int fpduPtr;
    /**
     * Whether the stream carries long ULPDUs lately, so that reads should stop where a payload
     * starts: set to {@link #LONG_MEMORY} by a long ULPDU, counted down by each short one (a 64 KiB
     * message in the largest FPDUs is a long ULPDU and a short one).
     */
    private int longUlpdus;
    private static final int LONG_MEMORY = 8;

    // The ULPDU in progress.
    /** The sink it goes to, or {@code null} (up the pipeline). */
    private UlpduSink current;
    /** Whether it is gathered whole and handed on only once the FPDU is checked (CRC, an RTR check, no sink). */
    private boolean holding;
    /** The ULPDU gathered whole (pooled; a slice read straight into it must end at the ULPDU's end). */
    private ByteBuf gathered;
    /** The connection's own buffer for holding short FPDUs ({@link #holdFor}), and the longest it holds. */
    private ByteBuf keptHold;
    private static final int KEPT_HOLD = 8192;
    /** Streaming: the header gathered for {@link UlpduSink#begin}, and the octets of it still wanted (-1: ask). */
    private final ByteBuf header = Unpooled.buffer(64);
    private int headerWanted;
    private boolean begun;

    /** The buffer the channel's last read went into straight, and whether it is a view of {@link #gathered}. */
    private ByteBuf directRead;
    private boolean directIntoGathered;

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
     * channel's event loop before the first FPDU (while the connection is set up).
     */
    public void deliverTo(UlpduSink sink) {
        this.sink = sink;
    }

    /** The codec's first-FPDU duties: the RTR check ({@code null}: none), the answer's way out, the gate to open. */
    void firstFpdu(RtrExchange rtr, FpduFramer framer, FirstFpduGate gate) {
        this.rtr = rtr;
        this.framer = framer;
        this.gate = gate;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf in = (ByteBuf) msg;
        try {
            if (in == directRead) {
                directRead = null;
                if (!failed) {
                    readStraight(in.readableBytes());
                }
                return;
            }
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
     * At an FPDU's start, without markers, when the whole FPDU is in this read: with a sink and CRC,
     * the FPDU is checked where it is and its ULPDU handed on from the read itself (nothing to hold);
     * without a sink, its ULPDU goes up as a retained slice (no copy). Returns the octets consumed, 0
     * when it does not apply (the general path then also reports an over-long ULPDU).
     */
    private int wholeFpduInPlace(ChannelHandlerContext ctx, ByteBuf in, int i, int end) {
        if (sink != null && !crcEnabled || rtr != null || markersEnabled || end - i < Fpdu.HEADER_LENGTH) {
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
        firstFpduSeen = true;
        openGate();
        if (sink == null) {
            ctx.fireChannelRead(in.retainedSlice(i + Fpdu.HEADER_LENGTH, length));
        } else {
            ulpduLength = length;
            ulpduEnded();
            deliver(sink, in, i + Fpdu.HEADER_LENGTH);
        }
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
        // RFC 5044 section 8: with CRC, nothing goes up before the FPDU is verified; an RTR frame is
        // checked whole; without a sink the ULPDU goes up whole.
        holding = current == null || crcEnabled || rtr != null;
        begun = false;
        headerWanted = -1;
        header.clear();
        if (holding) {
            gathered = current == null ? ctx.alloc().buffer(ulpduLength) : holdFor(ulpduLength);
        }
    }

    /** {@code n} octets of the ULPDU at {@code i}: gathered whole, or header and payload to the sink. */
    private void ulpduOctets(ByteBuf in, int i, int n) {
        if (holding) {
            gathered.writeBytes(in, i, n);
            return;
        }
        if (!begun) {
            int h = headerOctets(in, i, n);
            i += h;
            n -= h;
        }
        if (n > 0) {
            current.payload(in, i, n);
        }
    }

    /**
     * Takes the octets of a streamed ULPDU's header, asks the sink how long it is once the first two
     * are in, and begins the ULPDU once it is whole. Returns how many of the {@code n} octets it took.
     */
    private int headerOctets(ByteBuf in, int i, int n) {
        int taken = 0;
        while (taken < n && !begun) {
            if (headerWanted < 0) {
                int k = Math.min(n - taken, 2 - header.readableBytes());
                header.writeBytes(in, i + taken, k);
                taken += k;
                if (header.readableBytes() == 2) {
                    headerWanted = headerLength(current, header.getUnsignedByte(0), header.getUnsignedByte(1)) - 2;
                    beginIfWhole();
                }
            } else {
                int k = Math.min(n - taken, headerWanted);
                header.writeBytes(in, i + taken, k);
                taken += k;
                headerWanted -= k;
                beginIfWhole();
            }
        }
        return taken;
    }

    private void beginIfWhole() {
        if (headerWanted == 0) {
            begun = true;
            current.begin(header, ulpduLength);
        }
    }

    /** The sink's header length for this ULPDU, within [2, ULPDU length] (a ULPDU of 2 octets or more). */
    private int headerLength(UlpduSink to, int ddpControl, int rdmapControl) {
        return Math.max(2, Math.min(ulpduLength, to.headerLength(ddpControl, rdmapControl, ulpduLength)));
    }

    /** The CRC field is in: check it, then the ULPDU goes on. */
    private void fpduEnded(ChannelHandlerContext ctx) {
        inFpdu = false;
        if (crcEnabled) {
            check(crc.value(), field, fpduStart);
        }
        ulpduEnded();
        UlpduSink to = current;
        ByteBuf ulpdu = gathered;
        gathered = null;
        current = null;
        boolean first = !firstFpduSeen;
        firstFpduSeen = true;
        try {
            if (first && rtr != null && rtrSwallowed(ulpdu)) {
                return;
            }
            if (first) {
                // What the responder held goes out before anything this FPDU makes it send (a Read
                // Response, say), in the order it was issued; the RTR answer went out above, first.
                openGate();
            }
            if (to == null) {
                ctx.fireChannelRead(ulpdu);
                ulpdu = null;
            } else if (holding) {
                deliver(to, ulpdu, 0);
            } else {
                if (!begun) {
                    // A ULPDU of fewer than two octets: whatever there is goes as its header.
                    begun = true;
                    to.begin(header, ulpduLength);
                }
                to.end();
            }
        } finally {
            if (ulpdu != null) {
                ulpdu.release();
            }
            if (first) {
                openGate(); // after a swallowed RTR frame
            }
        }
    }

    /** A whole ULPDU of {@link #ulpduLength} octets at {@code at}, verified: its header, then the rest as payload, then its end. */
    private void deliver(UlpduSink to, ByteBuf source, int at) {
        int wanted = ulpduLength < 2 ? ulpduLength
                : headerLength(to, source.getUnsignedByte(at), source.getUnsignedByte(at + 1));
        header.clear().writeBytes(source, at, wanted);
        begun = true;
        to.begin(header, ulpduLength);
        if (wanted < ulpduLength) {
            to.payload(source, at + wanted, ulpduLength - wanted);
        }
        to.end();
    }

    /** A ULPDU ended: whether the stream carries long ones lately. */
    private void ulpduEnded() {
        if (ulpduLength >= DIRECT_READ_MIN) {
            longUlpdus = LONG_MEMORY;
        } else if (longUlpdus > 0) {
            longUlpdus--;
        }
    }

    /**
     * The buffer an FPDU is held in until its CRC is verified: a small one kept for the connection
     * (the common case, FPDUs of one TCP segment that a read cut), a pooled one of its own for a
     * longer ULPDU, so that an idle connection keeps little.
     */
    private ByteBuf holdFor(int length) {
        if (length > KEPT_HOLD) {
            return ctx.alloc().directBuffer(length);
        }
        if (keptHold == null) {
            keptHold = ctx.alloc().directBuffer(KEPT_HOLD);
        }
        return keptHold.retain().clear();
    }

    /**
     * The connection's first ULPDU, while an RFC 6581 exchange is expected: the RTR frame is checked,
     * answered and swallowed ({@code true}); a Terminate goes on ({@code false}).
     */
    private boolean rtrSwallowed(ByteBuf ulpdu) {
        RtrExchange exchange = rtr;
        rtr = null;
        ByteBuf answer;
        try {
            answer = exchange.firstUlpdu(ulpdu, ctx.alloc());
        } catch (MpaException e) {
            throw fail(e.error(), e.getMessage());
        }
        if (answer == null) {
            return false;
        }
        if (answer.isReadable()) {
            framer.writeNow(answer);
        } else {
            answer.release();
        }
        return true;
    }

    private void openGate() {
        if (gate != null) {
            FirstFpduGate open = gate;
            gate = null;
            open.open();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Reads straight into place (see FpduReads)

    /**
     * A buffer the channel's next read may fill straight, with no copy after it: a window over the
     * memory where the ULPDU's next payload octets go (without CRC, from the sink), or over the
     * held ULPDU's buffer (with CRC), as long as what is left of the ULPDU. Only for a ULPDU of at
     * least {@link #DIRECT_READ_MIN} octets (a shorter one is read with others, many to a read), and
     * all of it once it is (a payload that arrives in parts has its every part read straight); never
     * with markers, whose 508-octet runs would cost a read each. {@code null} otherwise.
     */
    ByteBuf directReadBuffer() {
        directRead = null;
        if (failed || !inFpdu || current == null || markersEnabled || content < Fpdu.HEADER_LENGTH
                || ulpduLength < DIRECT_READ_MIN) {
            return null;
        }
        int remaining = Fpdu.HEADER_LENGTH + ulpduLength - content;
        if (remaining <= 0) {
            return null;
        }
        ByteBuf buffer;
        if (holding) {
            buffer = gathered.retainedSlice(gathered.writerIndex(), remaining).clear();
        } else if (begun) {
            buffer = current.placementWindow(remaining);
        } else {
            buffer = null;
        }
        directRead = buffer;
        directIntoGathered = holding;
        return buffer;
    }

    /**
     * How many octets the next read should take when it is to stop right where the next payload
     * starts, so that a long one can then be read straight ({@link #directReadBuffer}): the rest of
     * this FPDU (a short ULPDU, or the trailer), the next length field and, without CRC, the longest
     * DDP header, and {@link #READ_PAST_HEADER} more. 0 when no such read is due (neither this ULPDU nor the stream's lately are long, or
     * markers are on): an ordinary read then takes as much as there is.
     */
    int readToPayload() {
        boolean longOnes = longUlpdus > 0 || inFpdu && content >= Fpdu.HEADER_LENGTH && ulpduLength >= DIRECT_READ_MIN;
        if (failed || sink == null || markersEnabled || !longOnes) {
            return 0;
        }
        int nextHeader = Fpdu.HEADER_LENGTH + (crcEnabled ? 0 : DdpHeaders.UNTAGGED_HEADER_LENGTH);
        if (!inFpdu) {
            return nextHeader;
        }
        if (content < Fpdu.HEADER_LENGTH) {
            return Fpdu.HEADER_LENGTH - content + (crcEnabled ? 0 : DdpHeaders.UNTAGGED_HEADER_LENGTH);
        }
        if (!holding && !begun && content < Fpdu.HEADER_LENGTH + ulpduLength) {
            // In a streamed header: up to its end (18 octets when its length is not known yet).
            return headerWanted > 0 ? headerWanted : DdpHeaders.UNTAGGED_HEADER_LENGTH - header.readableBytes();
        }
        return contentLength - content + nextHeader + READ_PAST_HEADER;
    }

    /** The last read handed out by {@link #directReadBuffer} brought nothing. */
    void directReadMissed() {
        directRead = null;
    }

    /** {@code n} octets of the ULPDU arrived straight where {@link #directReadBuffer} said. */
    private void readStraight(int n) {
        if (directIntoGathered) {
            update(gathered, gathered.writerIndex(), n);
            gathered.writerIndex(gathered.writerIndex() + n);
        } else {
            current.placed(n);
        }
        advance(n);
    }

    // ---------------------------------------------------------------------------------------------

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

    /**
     * Marks the stream failed, drops what was gathered, opens the responder's gate (a damaged FPDU is
     * still the initiator's first, and the Terminate answering it must not be held back) and
     * returns the exception to throw.
     */
    private MpaException fail(TerminateError error, String message) {
        failed = true;
        dropGathered();
        openGate();
        return new MpaException(error, message);
    }

    private void dropGathered() {
        if (gathered != null) {
            gathered.release();
            gathered = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dropGathered();
        dropKeptHold();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        dropGathered();
        dropKeptHold();
    }

    private void dropKeptHold() {
        if (keptHold != null) {
            keptHold.release();
            keptHold = null;
        }
    }
}
