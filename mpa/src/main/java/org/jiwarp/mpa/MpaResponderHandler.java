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
 * initiator's IRD) (answering 0x3FFF with 0x3FFF and keeping its own value, RFC 6581 section 9.1),
 * and in peer-to-peer mode picks the RTR frame WRITE, else READ, else SEND, among those offered and
 * accepted, or the first it accepts when none was offered (RFC 6581 section 9.2: the initiator then
 * sends TERM 2/0/7).
 */
public final class MpaResponderHandler extends MpaSetupHandler {

    /** An initiator may not send FPDUs before the Reply; this much early data is tolerated. */
    static final int MAX_EARLY_BYTES = 64 * 1024;

    private final MpaAcceptor acceptor;
    private ChannelHandlerContext ctx;
    private MpaFrame request;
    private MpaParameters proposed;
    private int replyFlags;
    /** The IRD and ORD words of the Reply: the negotiated values, or 0x3FFF answering 0x3FFF. */
    private int replyIrd;
    private int replyOrd;
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
        if (settings.strictRfc() && frame.enhanced() && !settings.enhanced()) {
            // RFC 6581 section 10: a responder without the enhanced setup closes on an enhanced Request.
            throw MpaFrame.invalid("an enhanced MPA Request, and the enhanced setup is off here (strict mode closes)");
        }
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
            ird = negotiated(ird, frame.ord());
            ord = negotiated(ord, frame.ird());
            if (frame.peerToPeer()) {
                rtr = chooseRtr(frame.rtr());
                if (rtr == null) {
                    // RFC 6581 section 9.2: with none of the offered options in common the Reply still
                    // sets one this endpoint supports; the initiator then answers with TERM 2/0/7.
                    rtr = chooseRtr(EnumSet.allOf(RtrType.class));
                }
                if (rtr == null) {
                    refusalError = TerminateError.LLP_NO_MATCHING_RTR;
                    return "no RTR frame accepted by this endpoint";
                }
                replyRtr = EnumSet.of(rtr);
            }
        }
        replyIrd = replyWord(ird, frame.ord());
        replyOrd = replyWord(ord, frame.ird());
        byte[] peerData = frame.privateData();
        proposed = new MpaParameters(false, revision, enhanced, crc, frame.marker(),
                (flags & MpaFrames.MARKER_FLAG) != 0, ird, ord, enhanced ? frame.ird() : -1,
                enhanced ? frame.ord() : -1, rtr != null, rtr, settings.mulpdu(frame.marker()),
                settings.maxInboundUlpdu(), peerData);
        return null;
    }

    /**
     * This endpoint's value cut to what the initiator's opposite word allows; RFC 6581 section 9.1:
     * 0x3FFF there asks for no automatic negotiation, and this endpoint's own value stays.
     */
    private static int negotiated(int own, int initiatorOpposite) {
        return initiatorOpposite == MpaEnhanced.VALUE_MASK ? own : Math.min(own, initiatorOpposite);
    }

    /** The Reply's word: 0x3FFF answers 0x3FFF (RFC 6581 section 9.1), else the negotiated value. */
    private static int replyWord(int negotiated, int initiatorOpposite) {
        return initiatorOpposite == MpaEnhanced.VALUE_MASK ? MpaEnhanced.VALUE_MASK : negotiated;
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
            boolean enhanced = p.enhanced();
            int newIrd = ird < 0 ? p.ird() : enhanced ? negotiated(ird, request.ord()) : ird;
            int newOrd = ord < 0 ? p.ord() : enhanced ? negotiated(ord, request.ird()) : ord;
            proposed = new MpaParameters(p.initiator(), p.revision(), enhanced, p.crc(), p.markersToPeer(),
                    p.markersFromPeer(), newIrd, newOrd, p.peerIrd(), p.peerOrd(), p.peerToPeer(), p.rtr(),
                    p.mulpdu(), p.maxInboundUlpdu(), p.peerPrivateData());
            replyIrd = replyWord(newIrd, request.ord());
            replyOrd = replyWord(newOrd, request.ird());
        }
        int limit = settings.privateDataLimit() - (proposed.enhanced() ? MpaEnhanced.LENGTH : 0);
        if (privateData.length > limit) {
            // RFC 6581 section 9.3: a local error with no code of its own is reported with TERM 2/0/5
            // before the connection ends. The TERM is an FPDU, so a Reply (without the private data
            // that did not fit) goes first, or the initiator could not read it.
            MpaException error = new MpaException(TerminateError.LLP_LOCAL_CATASTROPHIC, "reply private data of "
                    + privateData.length + " octets exceeds the limit of " + limit);
            if (accept) {
                ctx.write(MpaFrame.encode(ctx.alloc(), true, replyFlags, proposed.revision(), replyIrd, replyOrd,
                        proposed.peerToPeer(), replyRtr, new byte[0]));
                failWithTerm(ctx, error, proposed.crc(), proposed.markersToPeer());
            } else {
                fail(ctx, error);
            }
            return;
        }
        if (!accept) {
            rejectWith(ctx, replyFlags | MpaFrames.REJECT_FLAG, privateData);
            return;
        }
        ctx.writeAndFlush(MpaFrame.encode(ctx.alloc(), true, replyFlags, proposed.revision(), replyIrd, replyOrd,
                proposed.peerToPeer(), replyRtr, privateData));
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
