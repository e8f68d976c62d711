package org.jiwarp.rdmap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;
import org.jiwarp.ddp.SingleSegmentQueue;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.ReadRequestHeader;

/**
 * The Data Source side of RDMA Read (RFC 5040 sections 4.4, 4.5 and 5.2) and the Responder of
 * RFC 7306 atomics: takes the peer's Read Requests and Atomic Requests from queue 1 (one MSN
 * sequence), at most IRD at once together (RFC 7306 section 5.4: atomics count against the IRD),
 * checks each, and answers them strictly in request order: Read Responses, and Atomic Responses on
 * queue 3 (executed by the {@link AtomicResponder}).
 *
 * <pre>
 *   Read Request (queue 1) --DDP checks (MSN, MO, length, IRD entry)--> source checks (RDMAP)
 *       --> IRD queue --> Read Response segments, while the connection takes them
 *       --> last segment reached TCP: entry free
 *   Atomic Request (queue 1) --same DDP checks--> target checks, executed --> IRD queue
 *       --> Atomic Response (queue 3), in request order --> reached TCP: entry free
 * </pre>
 *
 * <p>Not thread-safe: it belongs to the connection's thread.
 */
public final class ReadResponder {

    private final StagTable stags;
    private final int pd;
    private final int stream;
    private final RdmapTransmitter transmitter;
    private final AtomicResponder atomics;
    private final SingleSegmentQueue queue;
    /**
     * The IRD entries in use: each Read or Atomic Request accepted whose response has not all gone to
     * TCP, held as the output's position after that response (no future per response).
     */
    private final InboundReads inbound;
    /** Octets of a Read Response written at a time: whole segments, about {@link #PART}. */
    private final int partLength;
    private static final int PART = 64 * 1024;

    /**
     * @param ird            the Read Requests this end accepts at once
     * @param firstMsn       1, or 2 after an RFC 6581 Read RTR used MSN 1 of queue 1
     */
    public ReadResponder(StagTable stags, int pd, RdmapTransmitter transmitter, int ird, long firstMsn) {
        this(stags, pd, TaggedBuffer.ANY_STREAM, transmitter, ird, firstMsn);
    }

    /** @param stream this stream's number, which a Data Source STag bound to one stream must name */
    public ReadResponder(StagTable stags, int pd, int stream, RdmapTransmitter transmitter, int ird, long firstMsn) {
        this.stags = stags;
        this.pd = pd;
        this.stream = stream;
        this.transmitter = transmitter;
        this.atomics = new AtomicResponder(stags, pd, stream);
        this.queue = new SingleSegmentQueue(firstMsn, ReadRequestHeader.LENGTH);
        this.inbound = new InboundReads(Math.max(ird, 0));
        int segment = transmitter.taggedSegmentPayload();
        this.partLength = segment * Math.max(1, PART / segment);
    }

    /**
     * One Read Request segment whose payload (the 28-octet Read Request header) starts at
     * {@code payload}: checked, queued, and answered as far as the connection takes it now.
     *
     * @throws org.jiwarp.wire.rdmap.TerminateException DDP's queue 1 errors first (MSN, MO, length,
     *     no IRD entry), then RDMAP's source errors
     */
    public void receive(ByteBuf ulpdu, long msn, long mo, boolean last, int payload, int payloadLength) {
        // IRD first (a DDP queue 1 "no buffer"), then the source STag (RDMAP remote protection).
        queue.accept(msn, mo, last, payloadLength, hasRoom());
        long size = ReadRequestHeader.readSize(ulpdu, payload);
        int sinkStag = ReadRequestHeader.sinkStag(ulpdu, payload);
        long sinkOffset = ReadRequestHeader.sinkTaggedOffset(ulpdu, payload);
        if (size == 0) {
            // RFC 5040 section 5.2.1: the Data Source of a zero-length Read is not validated (section
            // 7.2 checks the source "For non-zero length RDMA Read Request Messages"); its answer is
            // a zero-length Read Response to the sink.
            inbound.acceptRead(sinkStag, sinkOffset, null, 0, 0);
        } else {
            int sourceStag = ReadRequestHeader.sourceStag(ulpdu, payload);
            long sourceOffset = ReadRequestHeader.sourceTaggedOffset(ulpdu, payload);
            TaggedBuffer source = TaggedAccess.checkSource(stags, sourceStag, sourceOffset, size, pd, stream);
            inbound.acceptRead(sinkStag, sinkOffset, source, source.memoryIndex(sourceOffset), (int) size);
        }
        issue();
    }

    /**
     * One Atomic Request segment whose 52-octet header starts at {@code payload} (RFC 7306 section
     * 4.3): checked like a Read Request at DDP (and against the IRD), executed at once, answered on
     * queue 3 in request order.
     *
     * @throws org.jiwarp.wire.rdmap.TerminateException DDP's queue 1 errors first, then the
     *     {@link AtomicResponder}'s
     */
    public void receiveAtomic(ByteBuf ulpdu, long msn, long mo, boolean last, int payload, int payloadLength) {
        // RFC 7306 section 5.4: an Atomic Request takes an IRD entry as a Read Request does.
        queue.accept(msn, mo, last, payloadLength, AtomicRequestHeader.LENGTH, hasRoom());
        long original = atomics.execute(ulpdu, payload);
        inbound.acceptAtomic(AtomicRequestHeader.requestIdentifier(ulpdu, payload), original);
        issue();
    }

    /**
     * Writes the accepted requests' responses, strictly in request order (RFC 5040 section 5.2), as
     * long as the connection takes them ({@link RdmapTransmitter#writable()}): a long Read Response
     * goes out in parts of about 64 KiB, so a peer that stops reading holds at most the connection's
     * write bound plus one part here, never a whole response it asked for. Called when a request is
     * accepted and whenever the connection takes more again.
     *
     * @throws org.jiwarp.wire.rdmap.TerminateException RDMAP's invalid STag when a Read's source was
     *     invalidated or deregistered before its response was all written
     */
    public void issue() {
        while (inbound.hasUnissued() && transmitter.writable()) {
            int slot = inbound.next();
            if (inbound.atomic(slot)) {
                inbound.issued(slot, transmitter.atomicResponse(inbound.sinkStag(slot), inbound.sinkOffset(slot)));
                continue;
            }
            TaggedBuffer source = inbound.source(slot);
            int done = inbound.issuedOctets(slot);
            int n = Math.min(inbound.length(slot) - done, partLength);
            boolean ends = done + n == inbound.length(slot);
            long position;
            if (source == null) {
                position = transmitter.readResponse(inbound.sinkStag(slot), inbound.sinkOffset(slot),
                        Unpooled.EMPTY_BUFFER, 0, 0, true);
            } else {
                // RFC 5040 section 7.2: the Data Source must still be valid for what is still to go.
                if (!source.valid()) {
                    throw new TerminateException(TerminateError.RDMAP_INVALID_STAG, String.format(
                            "Read source STag 0x%08x was invalidated with %d of %d octets of its response sent",
                            source.stag(), done, inbound.length(slot)));
                }
                position = transmitter.readResponse(inbound.sinkStag(slot), inbound.sinkOffset(slot) + done,
                        source.memory(), inbound.sourceIndex(slot) + done, n, ends);
                inbound.progress(slot, n);
            }
            if (ends) {
                inbound.issued(slot, position);
            }
        }
    }

    /** Whether accepted requests still wait for (the rest of) their responses. */
    public boolean waiting() {
        return inbound.hasUnissued();
    }

    /**
     * Frees the IRD entries whose responses have all gone to TCP. Called before each check of the
     * IRD and after each flush, so an entry is free exactly when it was with a future per response.
     */
    public void retireSent() {
        if (!inbound.isEmpty()) {
            inbound.retire(transmitter.sent());
        }
    }

    /** Read and Atomic Requests accepted whose responses have not all gone to TCP. */
    public int outstanding() {
        retireSent();
        return inbound.size();
    }

    private boolean hasRoom() {
        retireSent();
        return inbound.hasRoom();
    }

    /** Drops every unanswered request (the stream is going down). */
    public void clear() {
        inbound.clear();
    }
}
