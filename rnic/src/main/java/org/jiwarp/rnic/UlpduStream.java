package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelPipeline;
import org.jiwarp.mpa.FpduDeframer;
import org.jiwarp.mpa.UlpduSink;
import org.jiwarp.rdmap.RdmapReceiver;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * A connection's receive side as MPA streams it (siw's {@code siw_qp_rx.c}): the header of each
 * tagged segment or Send is checked as soon as it has arrived, and its payload placed from each TCP
 * read straight into the validated target or posted receive; everything else goes whole to {@link
 * RdmapReceiver#receive}. A failed check sends one Terminate carrying the segment's header and true
 * length; what follows of that segment is dropped. Runs on the connection's event loop.
 */
final class UlpduStream implements UlpduSink {

    private final QpConnection connection;
    private final RdmapReceiver receiver;
    /** The segment in progress: its header (the deframer's buffer, valid until the segment ends) and length. */
    private ByteBuf header;
    private int segmentLength;
    /** The segment in progress failed a check: the rest of it goes nowhere. */
    private boolean dropped;

    /** Has the connection's deframer stream to {@code receiver} from the next FPDU on. */
    static void attach(ChannelPipeline pipeline, QpConnection connection, RdmapReceiver receiver) {
        FpduDeframer deframer = pipeline.get(FpduDeframer.class);
        if (deframer != null) {
            deframer.streamTo(new UlpduStream(connection, receiver));
        }
    }

    private UlpduStream(QpConnection connection, RdmapReceiver receiver) {
        this.connection = connection;
        this.receiver = receiver;
    }

    @Override
    public int headerLength(int firstOctet) {
        return RdmapReceiver.headerLength(firstOctet);
    }

    @Override
    public boolean begin(ByteBuf header, int ulpduLength) {
        this.header = header;
        this.segmentLength = ulpduLength;
        dropped = false;
        if (!connection.streamedSegment()) {
            return false; // taken whole and ignored, as a whole ULPDU is once the stream has stopped
        }
        try {
            return receiver.begin(header, ulpduLength);
        } catch (TerminateException e) {
            connection.streamedSegmentFailed(e, header, ulpduLength);
            return false;
        }
    }

    @Override
    public void payload(ByteBuf source, int index, int length) {
        if (dropped || !connection.streamedSegment()) {
            return;
        }
        try {
            receiver.payload(source, index, length);
        } catch (TerminateException e) {
            dropped = true;
            connection.streamedSegmentFailed(e, header, segmentLength);
        }
    }

    @Override
    public void end() {
        if (!dropped && connection.streamedSegment()) {
            try {
                receiver.end();
            } catch (TerminateException e) {
                connection.streamedSegmentFailed(e, header, segmentLength);
            }
        }
    }

    @Override
    public void whole(ByteBuf ulpdu) {
        connection.receiveWhole(ulpdu);
    }
}
