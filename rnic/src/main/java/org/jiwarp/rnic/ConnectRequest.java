package org.jiwarp.rnic;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import org.jiwarp.mpa.MpaConnectRequest;
import org.jiwarp.rnic.qp.QpConnection;

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
    public ConnectionParameters parameters() {
        return ConnectionParameters.of(request.parameters());
    }

    /**
     * Lets the accepting queue pair send before the initiator's first message arrives ({@code
     * false}), which RFC 5044 section 7.1.2 forbids and Linux siw does anyway; for application
     * protocols whose passive side speaks first (perftest's {@code ib_write_lat}). Call it before
     * {@link #accept}.
     */
    public ConnectRequest holdFirstMessage(boolean hold) {
        request.holdFirstFpdu(hold);
        return this;
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
        QpConnection connection = qp.newConnection();
        qp.rnic().connections().attach(request, connection, privateData, qp.config().ird(), qp.config().ord());
        return connection.established().thenApply(c -> qp);
    }

    /** Rejects, sending {@code privateData} in the Reply. */
    public void reject(byte[] privateData) {
        request.reject(privateData);
    }
}
