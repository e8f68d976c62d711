package org.jiwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.ReceiveBuffer;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.UntaggedQueue;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * {@link RdmapReceiver} streaming a Read Response (RFC 5040 section 4.5) whose segment's payload and
 * CRC come in later TCP reads than its header: between the two, the event loop may issue new Reads,
 * and {@link OutboundReads} fills the record the response matched for one of them.
 */
class RdmapReceiverStreamTest {

    private static final int PD = 1;
    private static final int SIZE = 64;

    @Test
    void aStreamedReadResponseCompletesItsOwnReadThoughItsRecordIsReusedBeforeItsEnd() {
        StagTable stags = new StagTable(16);
        ByteBuf memory = Unpooled.buffer(4096, 4096).writerIndex(4096);
        TaggedBuffer sink = stags.register(PD, memory, 0x1000, 4096, Access.ALL);
        OutboundReads reads = new OutboundReads(8);
        for (int i = 0; i < 8; i++) {
            reads.sent("Read " + i, sink.stag(), 0x1000 + i * SIZE, SIZE);
        }
        List<Object> completed = new ArrayList<>();
        RdmapReceiver receiver = new RdmapReceiver(stags, PD, new UntaggedQueue(DdpHeaders.QN_SEND, 4), reads, null,
                new ReadsOnly(completed));

        ByteBuf header = Unpooled.buffer(DdpHeaders.TAGGED_HEADER_LENGTH);
        DdpHeaders.writeTagged(header, DdpHeaders.controlByte(true, true),
                RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_RESPONSE), sink.stag(), 0x1000);
        receiver.begin(header, DdpHeaders.TAGGED_HEADER_LENGTH + SIZE);
        receiver.payload(Unpooled.wrappedBuffer(new byte[SIZE]), 0, SIZE);
        // The next Read goes out before the segment's CRC has come: it takes the record just answered.
        reads.sent("Read 8", sink.stag(), 0x1000 + 8 * SIZE, SIZE);
        receiver.end();

        assertEquals(List.of("Read 0"), completed, "the Read the response answered completes, not the next one");
        assertEquals(8, reads.outstanding());
        header.release();
        memory.release();
    }

    /** Records completed Reads; nothing else may happen here. */
    private static final class ReadsOnly implements RdmapListener {
        private final List<Object> completed;

        ReadsOnly(List<Object> completed) {
            this.completed = completed;
        }

        @Override
        public void readCompleted(Object context) {
            completed.add(context);
        }

        @Override
        public void receiveCompleted(ReceiveBuffer buffer, long length, int invalidatedStag, boolean solicited) {
            throw new AssertionError("receive completed");
        }

        @Override
        public void receiveFailed(ReceiveBuffer buffer, long length, boolean solicited, TerminateError error) {
            throw new AssertionError("receive failed");
        }

        @Override
        public void immediateDataReceived(ReceiveBuffer buffer, long immediateData, boolean solicited) {
            throw new AssertionError("immediate data");
        }

        @Override
        public void atomicCompleted(Object context, long originalRemoteDataValue) {
            throw new AssertionError("atomic completed");
        }

        @Override
        public void terminateReceived(TerminateMessages.Received received) {
            throw new AssertionError("Terminate");
        }

        @Override
        public void malformedTerminate() {
            throw new AssertionError("malformed Terminate");
        }
    }
}
