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

    /** The list itself, for the queue pair's own reading (immutable once the request is built): no copy per post. */
    Sge[] sglUnsafe() {
        return sgl;
    }
}
