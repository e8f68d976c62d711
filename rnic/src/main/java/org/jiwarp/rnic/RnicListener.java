package org.jiwarp.rnic;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/** A listening endpoint ({@code rdma_listen}); close it to stop accepting. */
public final class RnicListener implements AutoCloseable {

    private final Channel channel;

    RnicListener(Channel channel) {
        this.channel = channel;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }
}
