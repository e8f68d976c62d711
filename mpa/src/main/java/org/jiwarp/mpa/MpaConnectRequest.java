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

    /** Accepts: sends the Reply with this private data and goes to full operation. */
    public boolean accept(byte[] privateData) {
        return decide(true, privateData);
    }

    /** Rejects: sends the Reply with the R bit and this private data, then closes (RFC 5044 section 7.1). */
    public boolean reject(byte[] privateData) {
        return decide(false, privateData);
    }

    private boolean decide(boolean accept, byte[] privateData) {
        byte[] copy = privateData.clone();
        if (!decided.compareAndSet(false, true)) {
            return false;
        }
        if (channel.eventLoop().inEventLoop()) {
            handler.decide(accept, copy);
        } else {
            channel.eventLoop().execute(() -> handler.decide(accept, copy));
        }
        return true;
    }
}
