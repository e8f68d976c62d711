package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.EnumSet;
import java.util.Set;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The initiator's side of MPA connection setup (RFC 5044 section 7.1, RFC 6581 section 3): sends
 * the Request when the connection becomes active, waits for the Reply (10 s by default), checks it,
 * and switches the pipeline to full operation with the negotiated parameters, firing an
 * {@link MpaEstablishedEvent}. A rejection surfaces as an {@link MpaRejectedException}, any other
 * failure as an {@link MpaException} carrying its LLP error; either way the connection is closed.
 */
public final class MpaInitiatorHandler extends MpaSetupHandler {

    private final byte[] privateData;
    private int requestFlags;
    private boolean sent;

    /**
     * @param privateData the ULP private data for the Request (the RFC 6581 words are added in
     *     front of it when the enhanced setup is on)
     */
    public MpaInitiatorHandler(MpaSettings settings, byte[] privateData) {
        super(settings);
        int total = privateData.length + (settings.enhanced() ? MpaEnhanced.LENGTH : 0);
        if (total > settings.privateDataLimit()) {
            throw new IllegalArgumentException("private data of " + privateData.length + " octets exceeds the limit of "
                    + settings.privateDataLimit() + (settings.enhanced() ? " (4 go to the IRD/ORD words)" : ""));
        }
        this.privateData = privateData.clone();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            sendRequest(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        sendRequest(ctx);
        super.channelActive(ctx);
    }

    private void sendRequest(ChannelHandlerContext ctx) {
        if (sent) {
            return;
        }
        sent = true;
        int flags = 0;
        if (settings.markerPolicy() == MarkerPolicy.REQUEST) {
            flags |= MpaFrames.MARKER_FLAG;
        }
        if (settings.crcPolicy() == CrcPolicy.REQUIRE) {
            flags |= MpaFrames.CRC_FLAG;
        }
        if (settings.enhanced()) {
            flags |= MpaFrames.ENHANCED_FLAG;
        }
        requestFlags = flags;
        Set<RtrType> offers = settings.peerToPeer() ? settings.rtrOffers() : EnumSet.noneOf(RtrType.class);
        ctx.writeAndFlush(MpaFrame.encode(ctx.alloc(), false, flags, settings.revision(), settings.ird(),
                settings.ord(), settings.peerToPeer(), offers, privateData));
        // RFC 5044 section 7.1.1: the initiator waits a bounded time for the Reply.
        startTimer(ctx, settings.replyTimeout(), "the MPA Reply");
    }

    @Override
    void decodeFrame(ChannelHandlerContext ctx, ByteBuf in) {
        MpaFrame reply = MpaFrame.parse(in, true, settings.privateDataLimit());
        if (reply == null) {
            return;
        }
        in.skipBytes(reply.frameLength());
        if (reply.reject()) {
            finish();
            boolean words = reply.enhanced() && (requestFlags & MpaFrames.ENHANCED_FLAG) != 0;
            ctx.fireExceptionCaught(new MpaRejectedException("the responder rejected the connection",
                    reply.privateData(), words ? reply.ird() : -1, words ? reply.ord() : -1));
            ctx.close();
            return;
        }
        MpaParameters parameters;
        try {
            parameters = negotiate(reply);
        } catch (MpaException e) {
            if (e.error() == TerminateError.LLP_INVALID_REQUEST_REPLY) {
                throw e;
            }
            // RFC 6581 section 9: a valid Reply this endpoint cannot go on with (insufficient IRD,
            // no RTR it can send) is answered with a TERM before the connection ends.
            failWithTerm(ctx, e, reply.crc() || (requestFlags & MpaFrames.CRC_FLAG) != 0, reply.marker());
            return;
        }
        established(ctx, parameters);
    }

    private MpaParameters negotiate(MpaFrame reply) {
        boolean enhanced = (requestFlags & MpaFrames.ENHANCED_FLAG) != 0;
        // RFC 6581 section 3: an enhanced Request must get an enhanced Rev 2 Reply (Linux siw insists too).
        if (enhanced && (reply.revision() != MpaFrames.REVISION_2 || !reply.enhanced())) {
            throw MpaFrame.invalid("enhanced MPA Request answered by a Reply with rev " + reply.revision()
                    + (reply.enhanced() ? "" : " and no Enhanced bit"));
        }
        if (!enhanced && (reply.enhanced() || reply.revision() > settings.revision())) {
            throw MpaFrame.invalid("MPA Reply rev " + reply.revision() + (reply.enhanced() ? " enhanced" : "")
                    + " answers a rev " + settings.revision() + " Request without the Enhanced bit");
        }
        if (reply.crc() && settings.crcPolicy() == CrcPolicy.REFUSE) {
            throw MpaFrame.invalid("the responder asks for CRCs, which this endpoint refuses");
        }
        if (reply.marker() && settings.markerPolicy() == MarkerPolicy.REFUSE) {
            throw MpaFrame.invalid("the responder asks for markers, which this endpoint refuses");
        }
        int ird = settings.ird();
        int ord = settings.ord();
        RtrType rtr = null;
        if (enhanced) {
            // RFC 6581 section 9.1: the responder's ORD must fit this endpoint's IRD; 0x3FFF in either
            // word asks for no automatic negotiation, and this endpoint's own value stays.
            if (reply.ord() != MpaEnhanced.VALUE_MASK && reply.ord() > ird) {
                throw new MpaException(TerminateError.LLP_INSUFFICIENT_IRD, "the responder's ORD " + reply.ord()
                        + " exceeds this endpoint's IRD " + ird);
            }
            if (reply.ird() != MpaEnhanced.VALUE_MASK) {
                ord = Math.min(ord, reply.ird());
            }
            if (settings.peerToPeer()) {
                if (!reply.peerToPeer() || reply.rtr().size() != 1
                        || !settings.rtrOffers().containsAll(reply.rtr())) {
                    throw new MpaException(TerminateError.LLP_NO_MATCHING_RTR, "the responder chose RTR "
                            + reply.rtr() + (reply.peerToPeer() ? "" : " without peer-to-peer mode") + " from offers "
                            + settings.rtrOffers());
                }
                rtr = reply.rtr().iterator().next();
            } else if (reply.peerToPeer()) {
                throw new MpaException(TerminateError.LLP_NO_MATCHING_RTR,
                        "the responder chose peer-to-peer mode, which was not offered");
            }
        }
        boolean markersToPeer = reply.marker();
        boolean markersFromPeer = (requestFlags & MpaFrames.MARKER_FLAG) != 0;
        // RFC 5044 section 7.1: CRCs both ways when either side set C.
        boolean crc = reply.crc() || (requestFlags & MpaFrames.CRC_FLAG) != 0;
        return new MpaParameters(true, reply.revision(), enhanced, crc, markersToPeer, markersFromPeer, ird, ord,
                enhanced ? reply.ird() : -1, enhanced ? reply.ord() : -1, rtr != null, rtr, settings.mulpdu(markersToPeer), settings.maxInboundUlpdu(), reply.privateData());
    }
}
