package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The ready-to-receive exchange of RFC 6581 section 3 in peer-to-peer mode. The initiator sends
 * the chosen zero-length frame as its first FPDU; the responder checks that its first FPDU is that
 * frame and swallows it (answering a zero-length Read with a zero-length Read Response, which the
 * initiator swallows in turn). Then the handler leaves the pipeline.
 *
 * <p>The RTR frames carry STag 1 and Tagged Offset 0, as Linux siw's do; zero-length frames place
 * nothing, so the STag is not validated.
 */
final class RtrHandler extends ChannelDuplexHandler {

    /** The STag Linux siw puts in its RTR frames. */
    static final int RTR_STAG = 1;

    private final MpaParameters parameters;

    RtrHandler(MpaParameters parameters) {
        this.parameters = parameters;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (parameters.initiator()) {
            ctx.writeAndFlush(rtrFrame(ctx, parameters.rtr()));
            if (parameters.rtr() != RtrType.READ) {
                ctx.pipeline().remove(this);
            }
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        if (isTerminate(ulpdu)) {
            // RFC 6581 section 9.2: a peer that cannot send the RTR frame answers with TERM 2/0/7
            // instead; it goes up to RDMAP as any Terminate does.
            ctx.pipeline().remove(this);
            ctx.fireChannelRead(ulpdu);
            return;
        }
        try {
            if (parameters.initiator()) {
                if (!isZeroLengthReadResponse(ulpdu)) {
                    throw new MpaException(TerminateError.LLP_NO_MATCHING_RTR,
                            "expected the zero-length Read Response to the RTR Read");
                }
            } else {
                checkRtr(ulpdu);
                if (parameters.rtr() == RtrType.READ) {
                    ByteBuf response = ctx.alloc().buffer(DdpHeaders.TAGGED_HEADER_LENGTH);
                    int at = ulpdu.readerIndex() + DdpHeaders.UNTAGGED_HEADER_LENGTH;
                    DdpHeaders.writeTagged(response, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE),
                            ReadRequestHeader.sinkStag(ulpdu, at), ReadRequestHeader.sinkTaggedOffset(ulpdu, at));
                    ctx.writeAndFlush(response);
                }
            }
        } catch (MpaException e) {
            ctx.fireExceptionCaught(e);
            ctx.close();
            return;
        } finally {
            ulpdu.release();
        }
        ctx.pipeline().remove(this);
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

    /** The zero-length frame for an RTR type. */
    static ByteBuf rtrFrame(ChannelHandlerContext ctx, RtrType type) {
        ByteBuf out = ctx.alloc().buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
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
