package org.jiwarp.rnic;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import org.jiwarp.mpa.MpaConnectRequest;
import org.jiwarp.mpa.MpaParameters;

/**
 * An incoming connection with its MPA Request: accept it onto a queue pair with reply private data
 * ({@code rdma_accept}), or reject it ({@code rdma_reject}).
 */
public final class ConnectRequest {

    private final MpaConnectRequest request;

    ConnectRequest(MpaConnectRequest request) {
        this.request = request;
    }

    /** The initiator's private data. */
    public byte[] privateData() {
        return request.privateData();
    }

    /** What accepting negotiates (CRC, markers, IRD/ORD, MULPDU). */
    public MpaParameters parameters() {
        return request.parameters();
    }

    public SocketAddress remoteAddress() {
        return request.channel().remoteAddress();
    }

    /**
     * Accepts onto {@code qp}, which must be IDLE; completes when the connection is established
     * and the queue pair is RTS.
     */
    public CompletableFuture<QueuePair> accept(QueuePair qp, byte[] privateData) {
        if (qp.state() != QpState.IDLE) {
            throw new IllegalStateException(qp + " is not IDLE");
        }
        QpEngine engine = qp.newEngine();
        request.channel().eventLoop().execute(() -> {
            request.channel().pipeline().addLast("qp-" + qp.number(), engine);
            request.accept(privateData, qp.config().ird(), qp.config().ord());
        });
        return engine.established();
    }

    /** Rejects, sending {@code privateData} in the Reply. */
    public void reject(byte[] privateData) {
        request.reject(privateData);
    }
}
