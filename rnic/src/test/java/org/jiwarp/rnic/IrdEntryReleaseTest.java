package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rnic.RawPeer;
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
 * <p>No timing: each step waits for what the server's pipeline shows, seen by a probe at its head
 * (its flushes, the octets it has read), and the peer's socket stays unread (a 64 KiB receive
 * buffer) until the server has taken the request under test. The server issues Read Responses only
 * while its connection takes them, so most of the 8 MiB is not even written while the peer does not
 * read: more than the socket buffers can hold is in the responder's IRD entry, waiting.
 */
class IrdEntryReleaseTest {

    private static final int PEER_SINK_STAG = 0x00C0DE01;
    private static final long PEER_SINK_OFFSET = 0x7000_0000L;
    private static final long WAIT_MILLIS = 10_000;
    /** A Read Request's FPDU: ULPDU_LENGTH, 18 + 28 octets of ULPDU, CRC. */
    private static final int READ_REQUEST_FPDU = 2 + DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH + 4;

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
                assertTrue(probe.awaitRead(4 * READ_REQUEST_FPDU), "the server read the four requests");

                // The first entry is free: a fifth request is within the IRD.
                peer.send(readRequest(server, 5, 1));
                assertTrue(probe.awaitRead(5 * READ_REQUEST_FPDU), "the server took the fifth request");
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

    /**
     * Counts the server's flushes, and the octets it has read (counted once the pipeline has handled
     * them: a request is taken, or refused, within the read that completes its FPDU).
     */
    private static final class FlushProbe extends ChannelDuplexHandler {
        private int flushes;
        private long read;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            ctx.flush();
            synchronized (this) {
                flushes++;
                notifyAll();
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            int octets = msg instanceof ByteBuf ? ((ByteBuf) msg).readableBytes() : 0;
            ctx.fireChannelRead(msg);
            synchronized (this) {
                read += octets;
                notifyAll();
            }
        }

        synchronized boolean awaitFlushes(int count) throws InterruptedException {
            return await(() -> flushes >= count);
        }

        synchronized boolean awaitRead(long octets) throws InterruptedException {
            return await(() -> read >= octets);
        }

        private boolean await(java.util.function.BooleanSupplier done) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
            while (!done.getAsBoolean()) {
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
