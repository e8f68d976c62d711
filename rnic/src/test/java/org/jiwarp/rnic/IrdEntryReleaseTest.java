package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.testkit.RawPeer;
import org.jiwarp.testkit.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.junit.jupiter.api.Test;

/**
 * When the responder frees an IRD entry (RFC 5040 section 5.2): exactly once its Read Response's last
 * segment has gone to TCP, though later responses still wait in the channel. This is what Linux
 * siw's {@code ib_read_bw} relies on: it sends its next Read Request as soon as a response has
 * arrived, while the responder's socket is still backed up with the ones after it. Freed later (once
 * the channel has drained, say), that request finds the IRD full and is terminated. The early side
 * (an entry freed before its response has gone out) is {@code
 * RawPeerTerminateTest.readRequestsBeyondTheIrdAreDdpNoBuffer}.
 *
 * <p>No timing: each step waits for the server's own flushes, seen by a probe at the head of its
 * pipeline, and the peer's socket stays unread (a 64 KiB receive buffer) until the server has taken
 * the request under test.
 */
class IrdEntryReleaseTest {

    private static final int PEER_SINK_STAG = 0x00C0DE01;
    private static final long PEER_SINK_OFFSET = 0x7000_0000L;
    private static final long WAIT_MILLIS = 10_000;

    @Test
    void aReadRequestFindsTheEntryOfAResponseThatWentToTcpWhileLaterOnesWait() throws Exception {
        try (RawPeerServer server = new RawPeerServer()) {
            RawPeerServer.Served served = server.expect(0);
            try (RawPeer peer = RawPeer.connect(server.address(), RawPeerServer.PEER_MPA, 64 << 10)) {
                QueuePair qp = served.awaitEstablished();
                FlushProbe probe = new FlushProbe();
                Channel channel = qp.channel();
                channel.eventLoop().submit(() -> channel.pipeline().addFirst("flush-probe", probe))
                        .get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
                peer.autoRead(false);

                // IRD = 4 requests in one burst: a 1-octet Read, whose response goes to TCP at once,
                // then 8 MiB (more than the socket buffers hold) and two more behind it.
                peer.sendBurst(List.of(readRequest(server, 1, 1), readRequest(server, 2, RawPeerServer.REGION_SIZE),
                        readRequest(server, 3, 1), readRequest(server, 4, 1)));
                assertTrue(probe.awaitFlushes(1), "the server flushed its Read Responses");
                assertTrue(probe.unsentAfterFirstFlush > 0 && probe.pendingBeforeFirstFlush
                        > RawPeerServer.REGION_SIZE, "one flush wrote the first response and left most of the 8 MiB "
                        + "unsent (the four requests arrived in one read): " + probe.pendingBeforeFirstFlush
                        + " octets before it, " + probe.unsentAfterFirstFlush + " after");

                // The first entry is free: a fifth request is within the IRD.
                peer.send(readRequest(server, 5, 1));
                assertTrue(probe.awaitFlushes(2), "the server took the fifth request");
                // A refusal moves the queue pair to TERMINATE at once (its Terminate waits behind the 8 MiB).
                assertEquals(QpState.RTS, qp.state(), "the fifth Read Request was refused: the IRD entry of the "
                        + "response that had gone to TCP was still held");

                peer.autoRead(true);
                long expected = RawPeerServer.REGION_SIZE + 4;
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
                while (peer.readResponseOctets() < expected && peer.channel().isActive()
                        && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertEquals(expected, peer.readResponseOctets(), "all five Reads answered in full");
                assertEquals(QpState.RTS, qp.state());
                assertTrue(peer.received().stream().noneMatch(Ulpdus::isTerminate), "no Terminate");
            }
        }
    }

    private static ByteBuf readRequest(RawPeerServer server, long msn, long size) {
        ByteBuf ulpdu = RawPeer.buffer();
        DdpHeaders.writeUntagged(ulpdu, DdpHeaders.controlByte(false, true),
                RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0, DdpHeaders.QN_READ_REQUEST, msn, 0);
        ReadRequestHeader.write(ulpdu, PEER_SINK_STAG, PEER_SINK_OFFSET, size, server.region.stag(),
                server.region.address());
        return ulpdu;
    }

    /** Counts the server's flushes, and what its channel held before and after the first. */
    private static final class FlushProbe extends ChannelOutboundHandlerAdapter {
        private int flushes;
        volatile long pendingBeforeFirstFlush;
        volatile long unsentAfterFirstFlush;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            ChannelOutboundBuffer buffer = ctx.channel().unsafe().outboundBuffer();
            long before = buffer == null ? 0 : buffer.totalPendingWriteBytes();
            ctx.flush();
            synchronized (this) {
                if (flushes == 0) {
                    pendingBeforeFirstFlush = before;
                    unsentAfterFirstFlush = buffer == null ? 0 : buffer.totalPendingWriteBytes();
                }
                flushes++;
                notifyAll();
            }
        }

        synchronized boolean awaitFlushes(int count) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
            while (flushes < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }
    }
}
