package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.util.EnumSet;
import java.util.Set;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * The responder's side of MPA connection setup (RFC 5044 section 7.1, RFC 6581 section 3): waits
 * for the Request (5 s by default), checks it, works out what accepting it would negotiate, and
 * hands it to the application's {@link MpaAcceptor}. On accept it sends the Reply and switches the
 * pipeline to full operation (firing an {@link MpaEstablishedEvent}); on reject it sends a Reply
 * with the R bit and closes.
 *
 * <p>Negotiation, as Linux siw answers: the Reply echoes the Request's revision (down to this
 * endpoint's), sets C when the Request did or the policy requires it, refuses markers by rejecting
 * when the policy says so, gives IRD = min(own IRD, initiator's ORD) and ORD = min(own ORD,
 * initiator's IRD), and in peer-to-peer mode picks the RTR frame WRITE, else READ, else SEND, among
 * those offered and accepted.
 */
public final class MpaResponderHandler extends MpaSetupHandler {

    /** An initiator may not send FPDUs before the Reply; this much early data is tolerated. */
    static final int MAX_EARLY_BYTES = 64 * 1024;

    private final MpaAcceptor acceptor;
    private ChannelHandlerContext ctx;
    private MpaFrame request;
    private MpaParameters proposed;
    private int replyFlags;
    private Set<RtrType> replyRtr = EnumSet.noneOf(RtrType.class);

    public MpaResponderHandler(MpaSettings settings, MpaAcceptor acceptor) {
        super(settings);
        this.acceptor = acceptor;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            // RFC 5044 section 7.1.2: the responder waits a bounded time for the Request.
            startTimer(ctx, settings.requestTimeout(), "the MPA Request");
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (request == null && !finished()) {
            startTimer(ctx, settings.requestTimeout(), "the MPA Request");
        }
        super.channelActive(ctx);
    }

    @Override
    void decodeFrame(ChannelHandlerContext ctx, ByteBuf in) {
        if (request != null) {
            // Waiting for the application; bytes after the Request stay for the deframer, within reason.
            if (in.readableBytes() > MAX_EARLY_BYTES) {
                throw MpaFrame.invalid("the initiator sent " + in.readableBytes()
                        + " octets after its Request without waiting for the Reply");
            }
            return;
        }
        MpaFrame frame = MpaFrame.parse(in, false, settings.privateDataLimit());
        if (frame == null) {
            return;
        }
        in.skipBytes(frame.frameLength());
        stopTimer();
        request = frame;
        String refusal = negotiate(frame);
        if (refusal != null) {
            rejectWith(ctx, replyFlags | MpaFrames.REJECT_FLAG, new byte[0]);
            ctx.fireExceptionCaught(new MpaException(refusalError, "rejected the MPA Request: " + refusal));
            return;
        }
        acceptor.onRequest(new MpaConnectRequest(this, ctx.channel(), proposed));
    }

    private TerminateError refusalError;

    /** Works out the Reply; returns why the Request must be refused, or {@code null}. */
    private String negotiate(MpaFrame frame) {
        int revision = Math.min(frame.revision(), settings.revision());
        boolean enhanced = frame.enhanced() && settings.enhanced() && revision == MpaFrames.REVISION_2;
        int flags = enhanced ? MpaFrames.ENHANCED_FLAG : 0;
        // RFC 5044 section 7.1: a responder MUST honour C from the initiator; echo it, as siw does.
        boolean crc = frame.crc() || settings.crcPolicy() == CrcPolicy.REQUIRE;
        if (crc) {
            flags |= MpaFrames.CRC_FLAG;
        }
        if (settings.markerPolicy() == MarkerPolicy.REQUEST) {
            flags |= MpaFrames.MARKER_FLAG;
        }
        replyFlags = flags;
        refusalError = TerminateError.LLP_INVALID_REQUEST_REPLY;
        if (frame.crc() && settings.crcPolicy() == CrcPolicy.REFUSE) {
            replyFlags &= ~MpaFrames.CRC_FLAG;
            return "the initiator asks for CRCs, which this endpoint refuses";
        }
        if (frame.marker() && settings.markerPolicy() == MarkerPolicy.REFUSE) {
            return "the initiator asks for markers, which this endpoint refuses";
        }
        int ird = settings.ird();
        int ord = settings.ord();
        RtrType rtr = null;
        if (enhanced) {
            ird = Math.min(ird, frame.ord());
            ord = Math.min(ord, frame.ird());
            if (frame.peerToPeer()) {
                rtr = chooseRtr(frame.rtr());
                if (rtr == null) {
                    refusalError = TerminateError.LLP_NO_MATCHING_RTR;
                    return "no RTR frame in common: offered " + frame.rtr() + ", accepted " + settings.rtrOffers();
                }
                replyRtr = EnumSet.of(rtr);
            }
        }
        byte[] peerData = frame.privateData();
        proposed = new MpaParameters(false, revision, enhanced, crc, frame.marker(),
                (flags & MpaFrames.MARKER_FLAG) != 0, ird, ord, rtr != null, rtr, settings.mulpdu(frame.marker()),
                settings.maxInboundUlpdu(), peerData);
        return null;
    }

    private RtrType chooseRtr(Set<RtrType> offered) {
        for (RtrType choice : new RtrType[] {RtrType.WRITE, RtrType.READ, RtrType.SEND}) {
            if (offered.contains(choice) && settings.rtrOffers().contains(choice)) {
                return choice;
            }
        }
        return null;
    }

    /**
     * Called on the event loop by {@link MpaConnectRequest}; {@code ird} and {@code ord}, when not
     * negative, are the accepting queue pair's own: they lower what an enhanced Reply offers, and
     * without the enhanced setup they are the connection's limits. {@code holdFirstFpdu}: see
     * {@link MpaConnectRequest#holdFirstFpdu}.
     */
    void decide(boolean accept, byte[] privateData, int ird, int ord, boolean holdFirstFpdu) {
        if (finished() || !ctx.channel().isActive()) {
            return;
        }
        if (accept && (ird >= 0 || ord >= 0)) {
            // Enhanced setup: cut to what the initiator offered. Without it nothing is exchanged, and
            // the accepting queue pair's own limits hold (the ULPs agree on them out of band).
            MpaParameters p = proposed;
            boolean negotiated = p.enhanced();
            proposed = new MpaParameters(p.initiator(), p.revision(), p.enhanced(), p.crc(), p.markersToPeer(),
                    p.markersFromPeer(), ird < 0 ? p.ird() : negotiated ? Math.min(ird, request.ord()) : ird,
                    ord < 0 ? p.ord() : negotiated ? Math.min(ord, request.ird()) : ord, p.peerToPeer(), p.rtr(),
                    p.mulpdu(), p.maxInboundUlpdu(), p.peerPrivateData());
        }
        int limit = settings.privateDataLimit() - (proposed.enhanced() ? MpaEnhanced.LENGTH : 0);
        if (privateData.length > limit) {
            fail(ctx, new MpaException(TerminateError.LLP_LOCAL_CATASTROPHIC, "reply private data of "
                    + privateData.length + " octets exceeds the limit of " + limit));
            return;
        }
        if (!accept) {
            rejectWith(ctx, replyFlags | MpaFrames.REJECT_FLAG, privateData);
            return;
        }
        ctx.writeAndFlush(MpaFrame.encode(ctx.alloc(), true, replyFlags, proposed.revision(), proposed.ird(),
                proposed.ord(), proposed.peerToPeer(), replyRtr, privateData));
        established(ctx, proposed, holdFirstFpdu);
    }

    private void rejectWith(ChannelHandlerContext ctx, int flags, byte[] privateData) {
        finish();
        int revision = Math.min(request.revision(), settings.revision());
        boolean enhanced = (flags & MpaFrames.ENHANCED_FLAG) != 0;
        ctx.writeAndFlush(MpaFrame.encode(ctx.alloc(), true, flags, revision, enhanced ? settings.ird() : 0,
                enhanced ? settings.ord() : 0, false, EnumSet.noneOf(RtrType.class), privateData))
                .addListener(ChannelFutureListener.CLOSE);
    }
}
