package org.jiwarp.mpa;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;

/**
 * One connection's MPA full operation (RFC 5044 sections 4 to 6, RFC 6581 section 3): the FPDU
 * deframer and framer that MPA setup puts in its own place once negotiated, as {@code SslHandler}
 * hands over to the application, with the start-up duties of the first FPDUs run inside them
 * rather than as handlers of their own: the responder's first-FPDU gate (RFC 5044 section 7.1.2)
 * and the peer-to-peer RTR exchange (RFC 6581 section 3). The layer above gets it with the
 * {@link MpaEstablishedEvent} and talks to it directly, never through pipeline lookups.
 *
 * <pre>
 *   socket -- FpduDeframer --(sink or pipeline)--> ULP
 *   socket &lt;- FpduFramer &lt;- [FirstFpduGate, responder only] &lt;-- ULP
 * </pre>
 */
public final class FpduCodec {

    /** Pipeline names of what setup installs. */
    static final String DEFRAMER = "mpa-fpdu-deframer";
    static final String FRAMER = "mpa-fpdu-framer";
    static final String GATE = "mpa-first-fpdu-gate";

    private final MpaParameters parameters;
    private final FpduDeframer deframer;
    private final FpduFramer framer;
    private final FirstFpduGate gate;

    private FpduCodec(MpaParameters parameters, FpduDeframer deframer, FpduFramer framer, FirstFpduGate gate) {
        this.parameters = parameters;
        this.deframer = deframer;
        this.framer = framer;
        this.gate = gate;
    }

    /**
     * Puts the codec right after {@code setup} (the MPA setup handler, which leaves next), and sends
     * the initiator's RTR frame as its first FPDU in peer-to-peer mode.
     *
     * @param holdFirstFpdu a responder that holds its ULPDUs until the initiator's first FPDU
     */
    static FpduCodec install(ChannelHandlerContext setup, MpaParameters parameters, boolean holdFirstFpdu) {
        FpduDeframer deframer = new FpduDeframer(parameters.crc(), parameters.markersFromPeer(),
                parameters.maxInboundUlpdu());
        FpduFramer framer = new FpduFramer(parameters.crc(), parameters.markersToPeer());
        FirstFpduGate gate = !parameters.initiator() && holdFirstFpdu ? new FirstFpduGate() : null;
        ChannelPipeline pipeline = setup.pipeline();
        pipeline.addAfter(setup.name(), DEFRAMER, deframer);
        pipeline.addAfter(DEFRAMER, FRAMER, framer);
        if (gate != null) {
            pipeline.addAfter(FRAMER, GATE, gate);
        }
        deframer.firstFpdu(RtrExchange.expected(parameters), framer, gate);
        if (parameters.initiator() && parameters.rtr() != null) {
            framer.writeNow(RtrExchange.initiatorFrame(setup.alloc(), parameters.rtr()));
        }
        return new FpduCodec(parameters, deframer, framer, gate);
    }

    public MpaParameters parameters() {
        return parameters;
    }

    public FpduDeframer deframer() {
        return deframer;
    }

    public FpduFramer framer() {
        return framer;
    }

    /**
     * Whether the responder still holds its outbound ULPDUs back until the initiator's first FPDU
     * (RFC 5044 section 7.1.2): what was written is then not in the channel's outbound buffer yet.
     */
    public boolean isHolding() {
        return gate != null && gate.isHolding();
    }

    /** Runs {@code task} once nothing is held any more (at once when nothing is); never if the connection closes first. */
    public void whenOpen(Runnable task) {
        if (gate == null) {
            task.run();
        } else {
            gate.whenOpen(task);
        }
    }
}
