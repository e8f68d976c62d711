package org.jiwarp.rnic;

/** Told of every incoming connection ({@code RDMA_CM_EVENT_CONNECT_REQUEST}); it must accept or reject. */
@FunctionalInterface
public interface ConnectionListener {

    void onConnectRequest(ConnectRequest request);
}
