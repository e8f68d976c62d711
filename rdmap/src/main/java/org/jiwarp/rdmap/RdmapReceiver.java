package org.jiwarp.rdmap;

import io.netty.buffer.ByteBuf;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.DdpHeaderChecks;
import org.jiwarp.ddp.PlacementWindow;
import org.jiwarp.ddp.SingleSegmentQueue;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.AtomicResponseHeader;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * The receive side of one RDMAP stream (RFC 5040 sections 5 and 7; siw's {@code siw_qp_rx.c}):
 * takes each ULPDU MPA delivers, lets DDP check its header, checks the RDMAP header, and hands it to
 * one method per opcode, which lets DDP place it and reports what completed to the
 * {@link RdmapListener}.
 *
 * <pre>
 *   ULPDU --DDP header (version, length)--> RDMAP version, opcode, buffer model
 *         +-- tagged:   RDMA Write ........ {@link #onWrite}
 *         |             Read Response ..... {@link #onReadResponse}  (matched by {@link OutboundReads})
 *         +-- untagged: Send family ....... {@link #onSend}          (queue 0, {@link UntaggedQueue})
 *                       Immediate Data .... {@link #onImmediateData} (queue 0, RFC 7306)
 *                       Read Request ...... {@link ReadResponder}    (queue 1)
 *                       Atomic Request .... {@link ReadResponder}    (queue 1, RFC 7306)
 *                       Terminate ......... {@link #onTerminate}     (queue 2)
 *                       Atomic Response ... {@link #onAtomicResponse} (queue 3, RFC 7306)
 * </pre>
 *
 * <p>Any failed check throws a {@link TerminateException} before anything of that segment is
 * placed; the caller turns it into one Terminate. The payload is read in place (no slice per
 * ULPDU). Not thread-safe: it belongs to the connection's thread.
 */
public final class RdmapReceiver {

    private final StagTable stags;
    private final int pd;
    /** The DDP stream's number, which STags associated with one stream must name (RFC 5041 section 8.2). */
    private final int stream;
    /** Whether a Send with Invalidate may invalidate a region shared by every stream of the domain. */
    private final boolean sharedInvalidation;
    private final UntaggedQueue receives;
    private final OutboundReads outboundReads;
    private final ReadResponder readResponder;
    private final RdmapListener listener;
    /** RFC 7306 section 5.4: Atomic Responses on queue 3, one 12-octet segment each, in MSN order. */
    private final SingleSegmentQueue atomicResponses = new SingleSegmentQueue(1, AtomicResponseHeader.LENGTH);
    /**
     * The tagged segment being streamed: its target, where its next piece goes, and whether it
     * completes a Read, with that Read's context (kept apart from its record, which the requester
     * reuses for the next Read once this one has been matched).
     */
    private TaggedBuffer streamSink;
    private long streamOffset;
    private boolean streamCompletes;
    private Object streamCompletesContext;
    /** A segment that came whole at {@link #begin}, handled at {@link #end}. */
    private ByteBuf wholeSegment;
    /** The window the socket reads straight into, one read at a time. */
    private final PlacementWindow window = new PlacementWindow();
    /** The Send being streamed into a posted receive, or {@code null}: its opcode, L flag and Invalidate STag. */
    private RdmapOpcode streamSend;
    private boolean streamLast;
    private int streamInvalidate;

    public RdmapReceiver(StagTable stags, int pd, UntaggedQueue receives, OutboundReads outboundReads,
            ReadResponder readResponder, RdmapListener listener) {
        this(stags, pd, TaggedBuffer.ANY_STREAM, true, receives, outboundReads, readResponder, listener);
    }

    /**
     * @param stream             this stream's number (positive), or {@link TaggedBuffer#ANY_STREAM}
     * @param sharedInvalidation whether a peer may invalidate a region that serves every stream of
     *     the domain (RFC 5040 section 8.1.1 rule 7 says no; Linux siw says yes)
     */
    public RdmapReceiver(StagTable stags, int pd, int stream, boolean sharedInvalidation, UntaggedQueue receives,
            OutboundReads outboundReads, ReadResponder readResponder, RdmapListener listener) {
        this.stags = stags;
        this.pd = pd;
        this.stream = stream;
        this.sharedInvalidation = sharedInvalidation;
        this.receives = receives;
        this.outboundReads = outboundReads;
        this.readResponder = readResponder;
        this.listener = listener;
    }

    /**
     * Processes one ULPDU (its readable bytes); the caller keeps it and releases it.
     *
     * @throws TerminateException on the first failed DDP or RDMAP check
     */
    public void receive(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        int header = DdpHeaderChecks.checkHeader(ulpdu);
        boolean tagged = DdpHeaders.tagged(ulpdu, at);
        RdmapOpcode opcode = checkRdmapHeader(ulpdu, at, tagged);
        int payload = at + header;
        int length = ulpdu.readableBytes() - header;
        boolean last = DdpHeaders.last(ulpdu, at);
        if (tagged) {
            int stag = DdpHeaders.stag(ulpdu, at);
            long taggedOffset = DdpHeaders.taggedOffset(ulpdu, at);
            if (opcode == RdmapOpcode.RDMA_WRITE) {
                onWrite(ulpdu, stag, taggedOffset, payload, length);
            } else {
                onReadResponse(ulpdu, stag, taggedOffset, payload, length, last);
            }
            return;
        }
        long qn = DdpHeaders.qn(ulpdu, at);
        long msn = DdpHeaders.msn(ulpdu, at);
        long mo = DdpHeaders.mo(ulpdu, at);
        // RFC 5041 section 7.1 / RFC 5040 section 5.1: RDMAP uses queues 0, 1 and 2; RFC 7306 adds 3.
        DdpHeaderChecks.checkQn(qn, DdpHeaders.QN_ATOMIC_RESPONSE + 1);
        if (qn != opcode.queueNumber()) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, opcode.displayName() + " on queue "
                    + qn);
        }
        if (opcode.immediateData()) {
            onImmediateData(ulpdu, opcode, msn, mo, last, payload, length);
        } else if (qn == DdpHeaders.QN_SEND) {
            onSend(ulpdu, at, opcode, msn, mo, last, payload, length);
        } else if (opcode == RdmapOpcode.ATOMIC_REQUEST) {
            readResponder.receiveAtomic(ulpdu, msn, mo, last, payload, length);
        } else if (qn == DdpHeaders.QN_READ_REQUEST) {
            readResponder.receive(ulpdu, msn, mo, last, payload, length);
        } else if (qn == DdpHeaders.QN_ATOMIC_RESPONSE) {
            onAtomicResponse(ulpdu, msn, mo, last, payload, length);
        } else {
            onTerminate(ulpdu, msn, mo, last);
        }
    }

    /** RFC 5040 section 7.2: RDMAP version 1, and an opcode RDMAP knows on its buffer model. */
    private static RdmapOpcode checkRdmapHeader(ByteBuf ulpdu, int at, boolean tagged) {
        if (RdmapHeaders.version(ulpdu, at) != RdmapHeaders.RDMAP_VERSION) {
            throw new TerminateException(TerminateError.RDMAP_INVALID_VERSION, "RDMAP version "
                    + RdmapHeaders.version(ulpdu, at));
        }
        RdmapOpcode opcode = RdmapHeaders.opcode(ulpdu, at);
        // Reserved and unsupported opcodes, or one on the wrong buffer model.
        if (opcode == null || opcode.tagged() != tagged) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, "opcode "
                    + RdmapHeaders.opcodeCode(ulpdu, at) + (tagged ? " tagged" : " untagged"));
        }
        return opcode;
    }

    // ---------------------------------------------------------------------------------------------
    // Streaming: header first, payload in pieces, completion at the segment's end

    /**
     * The octets of a segment needed before it can be checked and its payload placed (an {@link
     * org.jiwarp.mpa.UlpduSink}'s question): the DDP header of a tagged segment (RDMA Write, Read
     * Response) or of a Send, whose payload then streams; the whole segment for every other message,
     * which is all headers (Read Request, Terminate, RFC 7306's) and handled at once.
     */
    public static int headerLength(int ddpControl, int rdmapControl, int segmentLength) {
        if ((ddpControl & 0x80) != 0) {
            return DdpHeaders.TAGGED_HEADER_LENGTH;
        }
        RdmapOpcode opcode = RdmapOpcode.valueOf(rdmapControl & 0x0F);
        return opcode != null && opcode.queueNumber() == DdpHeaders.QN_SEND && !opcode.immediateData()
                ? DdpHeaders.UNTAGGED_HEADER_LENGTH : segmentLength;
    }

    /**
     * A segment's first {@link #headerLength} octets have arrived ahead of the rest. A tagged segment
     * or a Send is checked here as {@link #receive} checks it, and its payload then goes straight
     * into the validated target or posted receive ({@link #payload}, {@link #placementWindow}); its
     * completion waits for {@link #end}. A segment that came whole is handled at {@link #end}.
     *
     * @param header the header octets (its readable bytes), kept until {@link #end}
     * @throws TerminateException on the first failed check; nothing is placed then
     */
    public void begin(ByteBuf header, int segmentLength) {
        streamSink = null;
        streamSend = null;
        streamCompletes = false;
        streamCompletesContext = null;
        if (header.readableBytes() >= segmentLength) {
            wholeSegment = header;
            return;
        }
        int at = header.readerIndex();
        if (!DdpHeaders.tagged(header, at)) {
            beginSend(header, at, segmentLength);
            return;
        }
        int headerLength = DdpHeaderChecks.checkHeader(header);
        RdmapOpcode opcode = checkRdmapHeader(header, at, true);
        int stag = DdpHeaders.stag(header, at);
        long taggedOffset = DdpHeaders.taggedOffset(header, at);
        int length = segmentLength - headerLength;
        if (opcode == RdmapOpcode.RDMA_WRITE) {
            streamSink = sink(stag, taggedOffset, length, Access.REMOTE_WRITE);
        } else {
            // RFC 5040 section 4.5: the Read Response continues the oldest outstanding Read.
            OutboundReads.Outstanding completes = outboundReads.response(stag, taggedOffset, length,
                    DdpHeaders.last(header, at));
            streamCompletes = completes != null;
            streamCompletesContext = completes == null ? null : completes.context();
            streamSink = sink(stag, taggedOffset, length, Access.LOCAL_WRITE);
        }
        streamOffset = taggedOffset;
    }

    /**
     * The next {@code length} octets of the segment begun, placed at once (RFC 5041 section 5: into
     * a buffer its header validated).
     *
     * @throws TerminateException when the target was invalidated since its check
     */
    public void payload(ByteBuf source, int index, int length) {
        if (streamSend != null) {
            try {
                receives.append(source, index, length);
            } catch (ReceiveBuffer.MemoryGoneException e) {
                throw sendMemoryGone(e);
            }
            return;
        }
        if (streamSink != null) { // null only for a zero-length segment, which has no payload
            TaggedPlacement.place(streamSink, streamOffset, source, index, length);
            streamOffset += length;
        }
    }

    /**
     * Direct placement: a window over the memory where the next {@code length} octets of the segment
     * begun go, for the socket to read into straight (RFC 5041 section 1; Linux siw's {@code
     * siw_rx_umem}), fenced like a copy ({@link PlacementWindow}); {@code null} when they cannot go
     * straight (the octets then come through {@link #payload}, which reports a target gone).
     */
    public ByteBuf placementWindow(int length) {
        if (window.isOpen()) {
            return null;
        }
        if (streamSend != null) {
            return receives.window(window, length);
        }
        TaggedBuffer target = streamSink;
        if (target == null || !PlacementWindow.canWindow(target.memory())) {
            return null;
        }
        return window.open(target.memory(), target.memoryIndex(streamOffset), length, target);
    }

    /** {@code length} octets of the segment begun arrived straight in the last {@link #placementWindow}. */
    public void placed(int length) {
        if (streamSend != null) {
            receives.placed(length);
        } else {
            streamOffset += length;
        }
    }

    /**
     * The segment begun is complete: a segment that came whole is handled now; a Read whose last
     * response it was completes; a Send whose last segment it was completes its receive.
     *
     * @throws TerminateException on a failed check of a segment handled now, or when a Send with
     *     Invalidate names an STag that cannot be invalidated
     */
    public void end() {
        ByteBuf whole = wholeSegment;
        if (whole != null) {
            wholeSegment = null;
            receive(whole);
            return;
        }
        RdmapOpcode send = streamSend;
        if (send != null) {
            streamSend = null;
            sendPlaced(receives.end(streamLast), send, streamInvalidate);
            return;
        }
        boolean completes = streamCompletes;
        Object context = streamCompletesContext;
        streamSink = null;
        streamCompletes = false;
        streamCompletesContext = null;
        if (completes) {
            listener.readCompleted(context);
        }
    }

    /** A Send's header ({@link #headerLength} streams only Sends): checked, then its payload streams into its receive. */
    private void beginSend(ByteBuf header, int at, int segmentLength) {
        int headerLength = DdpHeaderChecks.checkHeader(header);
        RdmapOpcode opcode = checkRdmapHeader(header, at, false);
        long qn = DdpHeaders.qn(header, at);
        DdpHeaderChecks.checkQn(qn, DdpHeaders.QN_ATOMIC_RESPONSE + 1);
        if (qn != opcode.queueNumber()) {
            throw new TerminateException(TerminateError.RDMAP_UNEXPECTED_OPCODE, opcode.displayName() + " on queue "
                    + qn);
        }
        receives.begin(DdpHeaders.msn(header, at), DdpHeaders.mo(header, at), segmentLength - headerLength);
        streamSend = opcode;
        streamLast = DdpHeaders.last(header, at);
        streamInvalidate = opcode.invalidates() ? RdmapHeaders.invalidateStag(header, at) : 0;
    }

    /** The receive's memory was deregistered under a Send: it completes in error, then the Terminate goes out. */
    private ReceiveBuffer.MemoryGoneException sendMemoryGone(ReceiveBuffer.MemoryGoneException e) {
        listener.receiveFailed(e.buffer(), e.buffer().bytesPlaced(), streamSend.solicitedEvent(), e.error());
        streamSend = null;
        return e;
    }

    /**
     * The checked target of a tagged segment on this stream (RFC 5041 section 8.2: an STag associated
     * with another stream fails), or {@code null} for a zero-length one, whose STag and TO are not
     * checked (RFC 5041 section 5.2).
     */
    private TaggedBuffer sink(int stag, long taggedOffset, int length, int access) {
        return length == 0 ? null : TaggedAccess.checkSink(stags, stag, taggedOffset, length, pd, stream, access);
    }

    /** RFC 5040 section 5.3 (RDMA Write): placed straight into the advertised buffer. */
    private void onWrite(ByteBuf ulpdu, int stag, long taggedOffset, int payload, int length) {
        TaggedBuffer sink = sink(stag, taggedOffset, length, Access.REMOTE_WRITE);
        if (sink != null) {
            TaggedPlacement.place(sink, taggedOffset, ulpdu, payload, length);
        }
    }

    /** RFC 5040 section 4.5: a Read Response continues the oldest outstanding Read, into its sink. */
    private void onReadResponse(ByteBuf ulpdu, int stag, long taggedOffset, int payload, int length, boolean last) {
        OutboundReads.Outstanding completed = outboundReads.response(stag, taggedOffset, length, last);
        TaggedBuffer sink = sink(stag, taggedOffset, length, Access.LOCAL_WRITE);
        if (sink != null) {
            TaggedPlacement.place(sink, taggedOffset, ulpdu, payload, length);
        }
        if (completed != null) {
            listener.readCompleted(completed.context());
        }
    }

    /** RFC 5040 sections 4.1 and 5.3: the Send family, into posted receives; L completes one. */
    private void onSend(ByteBuf ulpdu, int at, RdmapOpcode opcode, long msn, long mo, boolean last, int payload,
            int length) {
        UntaggedQueue.Placement placement;
        try {
            placement = receives.place(msn, mo, last, ulpdu, payload, length);
        } catch (ReceiveBuffer.MemoryGoneException e) {
            // The receive's memory was deregistered under it: it completes in error, then the Terminate goes out.
            listener.receiveFailed(e.buffer(), e.buffer().bytesPlaced(), opcode.solicitedEvent(), e.error());
            throw e;
        }
        sendPlaced(placement, opcode, opcode.invalidates() ? RdmapHeaders.invalidateStag(ulpdu, at) : 0);
    }

    /** A Send segment is placed: the last one completes its receive, invalidating first if it asks to. */
    private void sendPlaced(UntaggedQueue.Placement placement, RdmapOpcode opcode, int invalidateStag) {
        if (!placement.completed()) {
            return;
        }
        int invalidated = 0;
        if (opcode.invalidates()) {
            invalidated = invalidateStag;
            try {
                TaggedAccess.invalidate(stags, invalidated, pd, stream, sharedInvalidation);
            } catch (TerminateException e) {
                // The receive is used up: it completes in error, then the Terminate goes out.
                listener.receiveFailed(placement.buffer(), placement.messageLength(), opcode.solicitedEvent(),
                        e.error());
                throw e;
            }
        }
        listener.receiveCompleted(placement.buffer(), placement.messageLength(), invalidated,
                opcode.solicitedEvent());
    }

    /**
     * RFC 7306 sections 6.2 and 6.3: Immediate Data is one segment of exactly 8 octets on queue 0;
     * it uses up a posted receive (in MSN order with the Sends), into which its 8 octets go, and
     * they go up in the completion too.
     */
    private void onImmediateData(ByteBuf ulpdu, RdmapOpcode opcode, long msn, long mo, boolean last, int payload,
            int length) {
        if (!last || mo != 0 || length != RdmapOpcode.IMMEDIATE_DATA_LENGTH) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, opcode.displayName() + " of "
                    + length + " octets at MO " + mo + (last ? "" : " without L") + ", expected one segment of "
                    + RdmapOpcode.IMMEDIATE_DATA_LENGTH);
        }
        long data = ulpdu.getLong(payload);
        UntaggedQueue.Placement placement = receives.place(msn, mo, true, ulpdu, payload, length);
        listener.immediateDataReceived(placement.buffer(), data, opcode.solicitedEvent());
    }

    /** RFC 7306 section 5.2.2: an Atomic Response answers the oldest outstanding Atomic Request. */
    private void onAtomicResponse(ByteBuf ulpdu, long msn, long mo, boolean last, int payload, int length) {
        atomicResponses.accept(msn, mo, last, length, true);
        OutboundReads.Outstanding answered = outboundReads.atomicResponse(
                AtomicResponseHeader.originalRequestIdentifier(ulpdu, payload));
        listener.atomicCompleted(answered.context(), AtomicResponseHeader.originalRemoteDataValue(ulpdu, payload));
    }

    /** RFC 5040 section 4.8: a Terminate is one segment (L set, MO 0), the first on queue 2. */
    private void onTerminate(ByteBuf ulpdu, long msn, long mo, boolean last) {
        if (!last || mo != 0 || msn != 1) {
            listener.malformedTerminate();
            return;
        }
        listener.terminateReceived(TerminateMessages.read(ulpdu));
    }
}
