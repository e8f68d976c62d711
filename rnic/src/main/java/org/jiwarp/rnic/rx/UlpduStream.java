package org.jiwarp.rnic.rx;

import io.netty.buffer.ByteBuf;
import org.jiwarp.mpa.UlpduSink;
import org.jiwarp.rdmap.RdmapReceiver;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * A connection's receive side, one path from the first FPDU on (siw's {@code siw_qp_rx.c}): MPA
 * hands it every ULPDU, the header first, and the {@link RdmapReceiver} checks it and places the
 * payload, from each TCP read or, for a long payload, by the socket reading straight into the
 * validated target. A failed check sends one Terminate carrying the segment's header and true
 * length; what follows of that segment is dropped. Runs on the connection's event loop.
 */
public final class UlpduStream implements UlpduSink {

    private final SegmentListener queuePair;
    private final RdmapReceiver receiver;
    /** The segment in progress: its header (the deframer's buffer, valid until the segment ends) and length. */
    private ByteBuf header;
    private int segmentLength;
    /** The segment in progress failed a check, or came after receiving stopped: the rest of it goes nowhere. */
    private boolean dropped;

    public UlpduStream(SegmentListener queuePair, RdmapReceiver receiver) {
        this.queuePair = queuePair;
        this.receiver = receiver;
    }

    @Override
    public int headerLength(int ddpControl, int rdmapControl, int ulpduLength) {
        return RdmapReceiver.headerLength(ddpControl, rdmapControl, ulpduLength);
    }

    @Override
    public void begin(ByteBuf header, int ulpduLength) {
        this.header = header;
        this.segmentLength = ulpduLength;
        dropped = !queuePair.receiving();
        if (dropped) {
            return;
        }
        try {
            receiver.begin(header, ulpduLength);
        } catch (TerminateException e) {
            failed(e);
        }
    }

    @Override
    public void payload(ByteBuf source, int index, int length) {
        if (dropped) {
            return;
        }
        try {
            receiver.payload(source, index, length);
        } catch (TerminateException e) {
            failed(e);
        }
    }

    @Override
    public ByteBuf placementWindow(int length) {
        return dropped ? null : receiver.placementWindow(length);
    }

    @Override
    public void placed(int length) {
        receiver.placed(length);
    }

    @Override
    public void end() {
        if (dropped) {
            return;
        }
        try {
            receiver.end();
        } catch (TerminateException e) {
            failed(e);
        }
    }

    private void failed(TerminateException e) {
        dropped = true;
        queuePair.segmentFailed(e, header, segmentLength);
    }
}
