package org.jiwarp.rnic;

/** A receive-queue work request, as {@code ibv_recv_wr}: where one inbound Send is scattered. */
public record ReceiveWorkRequest(long id, Sge... sgl) {

    public ReceiveWorkRequest {
        sgl = sgl.clone();
    }

    @Override
    public Sge[] sgl() {
        return sgl.clone();
    }
}
