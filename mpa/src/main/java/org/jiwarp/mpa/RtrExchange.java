package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The ready-to-receive exchange of RFC 6581 section 3 in peer-to-peer mode, as the FPDU codec
 * runs it on a connection's first ULPDUs. The initiator sends the chosen zero-length frame as its
 * first FPDU ({@link #initiatorFrame}); the responder checks that its first inbound ULPDU is that
 * frame and swallows it, answering a zero-length Read with a zero-length Read Response, which the
 * initiator swallows in turn. A Terminate in its place (RFC 6581 section 9.2: a peer that cannot
 * send the RTR frame answers with TERM 2/0/7) goes on to the layer above as any Terminate does.
 *
 * <p>The RTR frames carry STag 1 and Tagged Offset 0, as Linux siw's do; zero-length frames place
 * nothing, so the STag is not validated.
 */
final class RtrExchange {

    /** The STag Linux siw puts in its RTR frames. */
    static final int RTR_STAG = 1;

    private final MpaParameters parameters;

    private RtrExchange(MpaParameters parameters) {
        this.parameters = parameters;
    }

    /**
     * The exchange this end runs on its first inbound ULPDU, or {@code null} when there is none (no
     * peer-to-peer mode, or an initiator whose RTR frame is not answered).
     */
    static RtrExchange expected(MpaParameters parameters) {
        if (parameters.rtr() == null || parameters.initiator() && parameters.rtr() != RtrType.READ) {
            return null;
        }
        return new RtrExchange(parameters);
    }

    /**
     * The connection's first inbound ULPDU (its readable bytes, not released here).
     *
     * @return {@code null} when it is a Terminate, which goes on to the layer above; else the RTR
     *     frame was swallowed, and the answer to send is returned (an empty buffer when there is
     *     none; the caller releases it or writes it)
     * @throws MpaException {@link TerminateError#LLP_NO_MATCHING_RTR} when it is not the negotiated frame
     */
    ByteBuf firstUlpdu(ByteBuf ulpdu, ByteBufAllocator alloc) {
        if (isTerminate(ulpdu)) {
            return null;
        }
        if (parameters.initiator()) {
            if (!isZeroLengthReadResponse(ulpdu)) {
                throw new MpaException(TerminateError.LLP_NO_MATCHING_RTR,
                        "expected the zero-length Read Response to the RTR Read");
            }
            return alloc.buffer(0, 0);
        }
        checkRtr(ulpdu);
        if (parameters.rtr() != RtrType.READ) {
            return alloc.buffer(0, 0);
        }
        ByteBuf response = alloc.buffer(DdpHeaders.TAGGED_HEADER_LENGTH);
        int at = ulpdu.readerIndex() + DdpHeaders.UNTAGGED_HEADER_LENGTH;
        DdpHeaders.writeTagged(response, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE),
                ReadRequestHeader.sinkStag(ulpdu, at), ReadRequestHeader.sinkTaggedOffset(ulpdu, at));
        return response;
    }

    private void checkRtr(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        int length = ulpdu.readableBytes();
        boolean ok;
        switch (parameters.rtr()) {
            case WRITE:
                ok = length == DdpHeaders.TAGGED_HEADER_LENGTH && DdpHeaders.tagged(ulpdu, at)
                        && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.RDMA_WRITE && DdpHeaders.last(ulpdu, at);
                break;
            case READ:
                ok = length == DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH
                        && !DdpHeaders.tagged(ulpdu, at)
                        && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.RDMA_READ_REQUEST
                        && DdpHeaders.qn(ulpdu, at) == DdpHeaders.QN_READ_REQUEST && DdpHeaders.msn(ulpdu, at) == 1
                        && ReadRequestHeader.readSize(ulpdu, at + DdpHeaders.UNTAGGED_HEADER_LENGTH) == 0;
                break;
            default:
                ok = length == DdpHeaders.UNTAGGED_HEADER_LENGTH && !DdpHeaders.tagged(ulpdu, at)
                        && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.SEND
                        && DdpHeaders.qn(ulpdu, at) == DdpHeaders.QN_SEND && DdpHeaders.msn(ulpdu, at) == 1;
                break;
        }
        if (!ok) {
            // RFC 6581 section 3: the first FPDU in peer-to-peer mode is the negotiated RTR frame.
            throw new MpaException(TerminateError.LLP_NO_MATCHING_RTR, "the initiator's first FPDU is not the "
                    + "negotiated zero-length " + parameters.rtr() + " RTR frame");
        }
    }

    private static boolean isTerminate(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        return ulpdu.readableBytes() >= DdpHeaders.UNTAGGED_HEADER_LENGTH && !DdpHeaders.tagged(ulpdu, at)
                && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.TERMINATE
                && DdpHeaders.qn(ulpdu, at) == DdpHeaders.QN_TERMINATE;
    }

    private static boolean isZeroLengthReadResponse(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        return ulpdu.readableBytes() == DdpHeaders.TAGGED_HEADER_LENGTH && DdpHeaders.tagged(ulpdu, at)
                && RdmapHeaders.opcode(ulpdu, at) == RdmapOpcode.RDMA_READ_RESPONSE;
    }

    /** The zero-length frame the initiator sends first for an RTR type. */
    static ByteBuf initiatorFrame(ByteBufAllocator alloc, RtrType type) {
        ByteBuf out = alloc.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        switch (type) {
            case WRITE:
                DdpHeaders.writeTagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), RTR_STAG, 0);
                break;
            case READ:
                DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                        DdpHeaders.QN_READ_REQUEST, 1, 0);
                ReadRequestHeader.write(out, RTR_STAG, 0, 0, RTR_STAG, 0);
                break;
            default:
                DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND,
                        1, 0);
                break;
        }
        return out;
    }
}
