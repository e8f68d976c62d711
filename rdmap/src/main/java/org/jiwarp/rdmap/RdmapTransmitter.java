package org.jiwarp.rdmap;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import java.util.function.Consumer;
import org.jiwarp.ddp.DdpSegmenter;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.AtomicResponseHeader;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The send side of one RDMAP stream (RFC 5040 section 5; siw's {@code siw_qp_tx.c}): builds each
 * message's RDMAP header, hands it to DDP's segmenter (RFC 5041 section 5.2) and the segments to the
 * {@link SegmentOutput}, and keeps the MSNs of the untagged queues it sends on (RFC 5040 section
 * 5.1: queue 0 Sends, 1 Read Requests, 2 Terminates; RFC 7306 section 5.4: Immediate Data on queue 0,
 * Atomic Requests on queue 1, Atomic Responses on queue 3).
 *
 * <p>Payload is never copied here: segments of more than the inline threshold reference the
 * source's memory ({@link DdpSegmenter}). Not thread-safe: it belongs to the connection's thread.
 */
public final class RdmapTransmitter implements Consumer<Object> {

    private final SegmentOutput out;
    private final int mulpdu;
    private final int inlineThreshold;
    private long sendMsn = 1;
    private long readRequestMsn;
    private long terminateMsn = 1;
    private long atomicResponseMsn = 1;
    /** The segment built last, written once the next one (or the message's end) is known. */
    private Object held;

    /**
     * @param mulpdu              the most octets per ULPDU (RFC 5044 section 5.2)
     * @param inlineThreshold     segments of at most this many payload octets are copied into one buffer
     * @param firstReadRequestMsn 1, or 2 after an RFC 6581 Read RTR used MSN 1 of queue 1
     */
    public RdmapTransmitter(SegmentOutput out, int mulpdu, int inlineThreshold, long firstReadRequestMsn) {
        this.out = out;
        this.mulpdu = mulpdu;
        this.inlineThreshold = inlineThreshold;
        this.readRequestMsn = firstReadRequestMsn;
    }

    /**
     * An RDMA Write (RFC 5040 section 4.3) of {@code length} octets of {@code source} at {@code index}
     * to the peer's {@code stag} at {@code taggedOffset}.
     *
     * @param awaited whether the caller needs to know when the message has gone to TCP
     * @return that future when {@code awaited}, else {@code null}
     */
    public ChannelFuture write(int stag, long taggedOffset, ByteBuf source, int index, int length, boolean awaited) {
        DdpSegmenter.segmentTagged(out.alloc(), RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), stag, taggedOffset,
                source, index, length, mulpdu, inlineThreshold, out.payloadViews(), this);
        return endMessage(awaited);
    }

    /**
     * A Send, Send with Solicited Event, Send with Invalidate or Send with SE and Invalidate (RFC 5040
     * section 4.1) on queue 0.
     *
     * @param invalidateStag the STag the peer invalidates, or {@code 0} with {@code invalidate} false
     */
    public ChannelFuture send(boolean solicited, boolean invalidate, int invalidateStag, ByteBuf source, int index,
            int length, boolean awaited) {
        RdmapOpcode opcode = invalidate
                ? (solicited ? RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE : RdmapOpcode.SEND_WITH_INVALIDATE)
                : (solicited ? RdmapOpcode.SEND_WITH_SE : RdmapOpcode.SEND);
        DdpSegmenter.segmentUntagged(out.alloc(), RdmapHeaders.controlByte(opcode), invalidate ? invalidateStag : 0,
                DdpHeaders.QN_SEND, sendMsn++, source, index, length, mulpdu, inlineThreshold, out.payloadViews(),
                this);
        return endMessage(awaited);
    }

    /**
     * Immediate Data or Immediate Data with Solicited Event (RFC 7306 section 6.3) on queue 0: one
     * segment of 8 octets.
     */
    public ChannelFuture immediateData(boolean solicited, long data, boolean awaited) {
        ByteBuf message = DdpSegmenter.flat(out.alloc(), DdpHeaders.UNTAGGED_HEADER_LENGTH
                + RdmapOpcode.IMMEDIATE_DATA_LENGTH);
        DdpHeaders.writeUntagged(message, true, RdmapHeaders.controlByte(solicited
                ? RdmapOpcode.IMMEDIATE_DATA_WITH_SE : RdmapOpcode.IMMEDIATE_DATA), 0, DdpHeaders.QN_SEND, sendMsn++, 0);
        message.writeLong(data);
        if (awaited) {
            return out.writeLast(message);
        }
        out.write(message);
        return null;
    }

    /**
     * An Atomic Request (RFC 7306 section 5.2.1) on queue 1, sharing its MSNs with Read Requests: one
     * segment, nobody waits for it.
     */
    public void atomicRequest(int operationCode, int requestIdentifier, int remoteStag, long remoteTaggedOffset,
            long data, long dataMask, long compareData, long compareMask) {
        ByteBuf request = DdpSegmenter.flat(out.alloc(), DdpHeaders.UNTAGGED_HEADER_LENGTH
                + AtomicRequestHeader.LENGTH);
        DdpHeaders.writeUntagged(request, true, RdmapHeaders.controlByte(RdmapOpcode.ATOMIC_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, readRequestMsn++, 0);
        AtomicRequestHeader.write(request, operationCode, requestIdentifier, remoteStag, remoteTaggedOffset, data,
                dataMask, compareData, compareMask);
        out.write(request);
    }

    /**
     * An Atomic Response (RFC 7306 section 5.2.2) on queue 3.
     *
     * @return the output's position after it: it has gone to TCP once {@link #sent()} reaches that
     */
    public long atomicResponse(int originalRequestIdentifier, long originalRemoteDataValue) {
        ByteBuf response = DdpSegmenter.flat(out.alloc(), DdpHeaders.UNTAGGED_HEADER_LENGTH
                + AtomicResponseHeader.LENGTH);
        DdpHeaders.writeUntagged(response, true, RdmapHeaders.controlByte(RdmapOpcode.ATOMIC_RESPONSE), 0,
                DdpHeaders.QN_ATOMIC_RESPONSE, atomicResponseMsn++, 0);
        AtomicResponseHeader.write(response, originalRequestIdentifier, originalRemoteDataValue);
        out.write(response);
        return out.written();
    }

    /** An RDMA Read Request (RFC 5040 section 4.4) on queue 1: one segment, nobody waits for it. */
    public void readRequest(int sinkStag, long sinkTaggedOffset, int size, int sourceStag, long sourceTaggedOffset) {
        ByteBuf request = DdpSegmenter.flat(out.alloc(), DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        DdpHeaders.writeUntagged(request, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, readRequestMsn++, 0);
        ReadRequestHeader.write(request, sinkStag, sinkTaggedOffset, size, sourceStag, sourceTaggedOffset);
        out.write(request);
    }

    /**
     * Part of an RDMA Read Response (RFC 5040 section 4.5): {@code length} octets of {@code source} at
     * {@code index} to the requester's {@code sinkStag} at {@code sinkTaggedOffset}, the last segment
     * carrying L when {@code endsResponse}.
     *
     * @return the output's position after it: it has gone to TCP once {@link #sent()} reaches that
     */
    public long readResponse(int sinkStag, long sinkTaggedOffset, ByteBuf source, int index, int length,
            boolean endsResponse) {
        DdpSegmenter.segmentTagged(out.alloc(), RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE), sinkStag,
                sinkTaggedOffset, source, index, length, endsResponse, mulpdu, inlineThreshold, out.payloadViews(),
                this);
        endMessage(false);
        return out.written();
    }

    /** Payload octets of one segment of a tagged message: the most a Read Response part should overshoot by. */
    public int taggedSegmentPayload() {
        return mulpdu - DdpHeaders.TAGGED_HEADER_LENGTH;
    }

    /** Whether the connection takes more now ({@link SegmentOutput#writable()}). */
    public boolean writable() {
        return out.writable();
    }

    /** The output's position up to which everything written has gone to TCP ({@link SegmentOutput#sent()}). */
    public long sent() {
        return out.sent();
    }

    /**
     * A Terminate (RFC 5040 sections 4.8 and 5.6) on queue 2.
     *
     * @param offending the ULPDU that caused the error (not released), or {@code null}
     */
    public ChannelFuture terminate(TerminateError error, ByteBuf offending) {
        return terminate(error, offending, offending == null ? 0 : offending.readableBytes());
    }

    /** As {@link #terminate(TerminateError, ByteBuf)} for a streamed segment: {@code offending} holds its header. */
    public ChannelFuture terminate(TerminateError error, ByteBuf offending, int segmentLength) {
        return out.writeLast(TerminateMessages.build(out.alloc(), error, terminateMsn++, offending, segmentLength));
    }

    /** One segment from the segmenter: the one before it is not the message's last. */
    @Override
    public void accept(Object segment) {
        if (held != null) {
            out.write(held);
        }
        held = segment;
    }

    private ChannelFuture endMessage(boolean awaited) {
        Object last = held;
        held = null;
        if (awaited) {
            return out.writeLast(last);
        }
        out.write(last);
        return null;
    }
}
