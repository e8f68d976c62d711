package org.jiwarp.mpa;

import io.netty.channel.Channel;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A valid MPA Request awaiting the application's decision, with what accepting it would
 * negotiate. The first call of {@link #accept(byte[])} or {@link #reject(byte[])} decides; later
 * calls are ignored and return {@code false}.
 */
public final class MpaConnectRequest {

    private final MpaResponderHandler handler;
    private final Channel channel;
    private final MpaParameters parameters;
    private final AtomicBoolean decided = new AtomicBoolean();

    MpaConnectRequest(MpaResponderHandler handler, Channel channel, MpaParameters parameters) {
        this.handler = handler;
        this.channel = channel;
        this.parameters = parameters;
    }

    /** The connection asking. */
    public Channel channel() {
        return channel;
    }

    /** What the connection will run with if accepted; its private data is the initiator's. */
    public MpaParameters parameters() {
        return parameters;
    }

    /** The initiator's ULP private data. */
    public byte[] privateData() {
        return parameters.peerPrivateData();
    }

    private volatile boolean holdFirstFpdu = true;

    /**
     * Whether this responder holds its FPDUs until the initiator's first has arrived, as RFC 5044
     * section 7.1.2 requires (the default). {@code false} lets it send first, as Linux siw does and
     * as a ULP whose responder speaks first needs (perftest's {@code ib_write_lat} server). Call it
     * before {@code accept}.
     */
    public MpaConnectRequest holdFirstFpdu(boolean hold) {
        this.holdFirstFpdu = hold;
        return this;
    }

    /** Accepts: sends the Reply with this private data and goes to full operation. */
    public boolean accept(byte[] privateData) {
        return decide(true, privateData, -1, -1);
    }

    /**
     * Accepts with this endpoint's IRD and ORD for the connection (RFC 6581 section 3), which may be
     * lower than the listener's settings; each is still cut to what the initiator offered.
     */
    public boolean accept(byte[] privateData, int ird, int ord) {
        return decide(true, privateData, ird, ord);
    }

    /** Rejects: sends the Reply with the R bit and this private data, then closes (RFC 5044 section 7.1). */
    public boolean reject(byte[] privateData) {
        return decide(false, privateData, -1, -1);
    }

    private boolean decide(boolean accept, byte[] privateData, int ird, int ord) {
        byte[] copy = privateData.clone();
        if (!decided.compareAndSet(false, true)) {
            return false;
        }
        if (channel.eventLoop().inEventLoop()) {
            handler.decide(accept, copy, ird, ord, holdFirstFpdu);
        } else {
            boolean hold = holdFirstFpdu;
            channel.eventLoop().execute(() -> handler.decide(accept, copy, ird, ord, hold));
        }
        return true;
    }
}
