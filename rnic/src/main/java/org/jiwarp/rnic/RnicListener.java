package org.jiwarp.rnic;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import org.jiwarp.rnic.cm.SetupLimit;

/** A listening endpoint ({@code rdma_listen}); close it to stop accepting. */
public final class RnicListener implements AutoCloseable {

    private final Channel channel;
    private final SetupLimit limit;

    RnicListener(Channel channel, SetupLimit limit) {
        this.channel = channel;
        this.limit = limit;
    }

    /** Connections now in MPA setup. */
    public int setupsInProgress() {
        return limit.inProgress();
    }

    /** Connections closed at once because {@link RnicOptions#maxSetups(int)} were already in setup. */
    public long refusedSetups() {
        return limit.refused();
    }

    /**
     * Tells {@code listener} (on the connection's event loop) of each connection whose MPA setup
     * failed with an MPA error (RFC 5044 section 8): a bad Request, a timeout. Connections that
     * set up before this call are not reported.
     */
    public RnicListener onSetupFailure(SetupFailureListener listener) {
        limit.failures(listener);
        return this;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }
}
