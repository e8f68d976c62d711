package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.rnic.RawPeer;
import org.jiwarp.rnic.cm.ConnectionManager;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.junit.jupiter.api.Test;

/**
 * A peer that stops reading, the cheapest attack on a server: nothing it can ask for makes the
 * connection hold more than its write bound, and it cannot hold a connection open, whether the
 * connection ends on an error (a Terminate that cannot be written) or on the user's disconnect
 * (work issued that cannot reach TCP). The raw peer's socket takes 4 KiB and is never read; the
 * server's close timeout is one second. Counted, not timed: a probe at the head of the server's
 * pipeline records the octets written and the most its channel ever held unsent; every wait has a
 * deadline far above the close timeout.
 */
class PeerThatStopsReadingTest {

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);
    private static final int WINDOW = 4 << 10;
    private static final int PEER_SINK_STAG = 0x00C0DE01;
    private static final long PEER_SINK_OFFSET = 0x7000_0000L;
    private static final int READ_REQUEST_FPDU = 2 + DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH + 4;
    /** A Read Response part (about 64 KiB of whole segments) and its segments' framing, beyond the high mark. */
    private static final long OVERSHOOT = (64 << 10) + 4096;

    @Test
    void readRequestsForAWholeRegionNeverQueueMoreThanTheWriteBoundAndAnErrorStillEndsTheConnection()
            throws Exception {
        try (RawPeerServer server = new RawPeerServer(options -> options.closeTimeout(CLOSE_TIMEOUT))) {
            RawPeerServer.Served served = server.expect(0);
            try (RawPeer peer = RawPeer.connect(server.address(), RawPeerServer.PEER_MPA, WINDOW)) {
                QueuePair qp = served.awaitEstablished();
                Probe probe = Probe.install(qp.channel());
                peer.autoRead(false);
                // IRD Read Requests for the whole 8 MiB region each: 32 MiB asked of a peer that takes 4 KiB.
                List<ByteBuf> requests = new ArrayList<>();
                for (int msn = 1; msn <= RawPeerServer.IRD; msn++) {
                    requests.add(Unpooled.wrappedBuffer(Ulpdus.readRequest(msn, PEER_SINK_STAG, PEER_SINK_OFFSET,
                            RawPeerServer.REGION_SIZE, server.region.stag(), server.region.address())));
                }
                peer.sendBurst(requests);
                assertTrue(probe.awaitRead(RawPeerServer.IRD * READ_REQUEST_FPDU), "the server read the requests");
                // An error now: a Write to an STag the server never issued. Its Terminate goes behind
                // what the responder issued, and cannot be written while the peer does not read.
                peer.send(Unpooled.wrappedBuffer(Ulpdus.write(0x00BAD000, 0, 16)));

                qp.closeFuture().get(30, TimeUnit.SECONDS);
                assertEquals(QpState.ERROR, qp.state());
                assertFalse(qp.channel().isOpen(), "the connection was aborted");
                long bound = ConnectionManager.WATER_MARK.high() + OVERSHOOT;
                System.out.printf("wrote %d of %d octets asked; most unsent %d (bound %d)%n", probe.written(),
                        (long) RawPeerServer.IRD * RawPeerServer.REGION_SIZE, probe.mostUnsent(), bound);
                assertTrue(probe.mostUnsent() <= bound, "the server's channel held " + probe.mostUnsent()
                        + " octets unsent for a peer that did not read, over the bound " + bound);
                assertTrue(probe.written() < RawPeerServer.REGION_SIZE, "the responder wrote " + probe.written()
                        + " octets of Read Responses for a peer that took " + WINDOW);
            }
        }
    }

    @Test
    void aDisconnectFromAPeerThatDoesNotReadEndsWithinTheCloseTimeout() throws Exception {
        int writes = 32;
        int size = 1 << 20;
        try (RawPeerServer server = new RawPeerServer(options -> options.closeTimeout(CLOSE_TIMEOUT))) {
            RawPeerServer.Served served = server.expect(0);
            try (RawPeer peer = RawPeer.connect(server.address(), RawPeerServer.PEER_MPA, WINDOW)) {
                QueuePair qp = served.awaitEstablished();
                Probe probe = Probe.install(qp.channel());
                peer.autoRead(false);
                // The responder sends nothing before the initiator's first FPDU (RFC 5044 section 7.1.2).
                peer.send(Unpooled.wrappedBuffer(Ulpdus.write(server.region.stag(), server.region.address(), 8)));
                assertTrue(probe.awaitRead(1), "the peer's first FPDU arrived");
                for (int i = 0; i < writes; i++) {
                    qp.postSend(SendWorkRequest.write(i, PEER_SINK_OFFSET, PEER_SINK_STAG,
                            new Sge(server.region, 0, size)));
                }
                // Disconnect once the socket is full and the channel holds issued octets it cannot
                // hand to TCP (it is not writable): only the close timeout can end the wait for them.
                Channel channel = qp.channel();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                boolean disconnected = false;
                while (!disconnected && System.nanoTime() < deadline) {
                    disconnected = channel.eventLoop().submit(() -> {
                        if (channel.isWritable()) {
                            return false;
                        }
                        qp.disconnect();
                        return true;
                    }).get(10, TimeUnit.SECONDS);
                    if (!disconnected) {
                        Thread.sleep(1);
                    }
                }
                assertTrue(disconnected, "the connection never filled up with the peer not reading");

                qp.closeFuture().get(30, TimeUnit.SECONDS);
                assertEquals(QpState.ERROR, qp.state());
                assertFalse(qp.channel().isOpen(), "the connection was aborted");
                int completed = 0;
                for (WorkCompletion wc; (wc = served.cq.take(10, TimeUnit.SECONDS)) != null; ) {
                    completed++;
                    if (completed == writes) {
                        break;
                    }
                }
                assertEquals(writes, completed, "every Write completes, in flush error if it never went");
                assertTrue(probe.written() < (long) writes * size, "all " + writes + " MiB went to a peer that "
                        + "took " + WINDOW + " octets");
            }
        }
    }

    /** Counts, on the server's event loop, the octets read and written and the most held unsent. */
    private static final class Probe extends ChannelDuplexHandler {
        private final Channel channel;
        private long read;
        private long written;
        private long mostUnsent;

        private Probe(Channel channel) {
            this.channel = channel;
        }

        static Probe install(Channel channel) throws Exception {
            Probe probe = new Probe(channel);
            channel.eventLoop().submit(() -> channel.pipeline().addFirst("probe", probe)).get(10, TimeUnit.SECONDS);
            return probe;
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

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            int octets = msg instanceof ByteBuf ? ((ByteBuf) msg).readableBytes() : 0;
            ctx.write(msg, promise);
            synchronized (this) {
                written += octets;
                if (channel.unsafe().outboundBuffer() != null) {
                    mostUnsent = Math.max(mostUnsent, channel.unsafe().outboundBuffer().totalPendingWriteBytes());
                }
            }
        }

        synchronized long written() {
            return written;
        }

        synchronized long mostUnsent() {
            return mostUnsent;
        }

        synchronized boolean awaitRead(long octets) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (read < octets) {
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
