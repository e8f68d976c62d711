package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.cm.ConnectionManager;
import org.junit.jupiter.api.Test;

/**
 * Two queue pairs on one event loop over real loopback TCP: one with a deep backlog of 64 KiB
 * Writes, the other posting small Sends one at a time. What is counted is octets, never time: a
 * recorder at the bottom of each client pipeline (below the FPDU framer, where octets go to TCP)
 * counts the bulk queue pair's octets handed on between a Send's post and the Send itself, and the
 * bulk connection's unsent octets after every write.
 */
class FairSharingTest {

    private static final int LARGE = 65536;
    private static final int BACKLOG = 512;
    private static final int SMALL_SENDS = 50;
    /** One 64 KiB FPDU's framing beyond its payload (MPA length, DDP/RDMAP header, pad, CRC), with room. */
    private static final int FRAMING = 256;

    @Test
    void aSmallSendIsNotQueuedBehindAnotherQueuePairsBacklog() throws Exception {
        MpaSettings mpa = MpaSettings.builder().largeFpdus(true).build();
        try (Rnic serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa));
                Rnic clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa))) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            ProtectionDomain clientPd = clientRnic.allocatePd();
            CompletionQueue serverCq = serverRnic.createCq(1 << 12);
            CompletionQueue bulkCq = clientRnic.createCq(1 << 12);
            CompletionQueue smallCq = clientRnic.createCq(1 << 12);
            QueuePair bulkServer = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq));
            QueuePair smallServer = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq));
            QueuePair bulk = clientRnic.createQp(new QpConfig(clientPd, bulkCq, bulkCq).sendDepth(BACKLOG));
            QueuePair small = clientRnic.createQp(new QpConfig(clientPd, smallCq, smallCq));
            MemoryRegion sink = serverPd.register(ByteBuffer.allocateDirect(LARGE), Access.ALL);
            MemoryRegion receiveRegion = serverPd.register(ByteBuffer.allocateDirect(64), Access.ALL);
            MemoryRegion source = clientPd.register(ByteBuffer.allocateDirect(LARGE), Access.ALL);
            for (int i = 0; i < SMALL_SENDS; i++) {
                smallServer.postReceive(new ReceiveWorkRequest(i, new Sge(receiveRegion, 0, 64)));
            }
            QueuePair[] accepting = {bulkServer, smallServer};
            int[] next = {0};
            RnicListener listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(accepting[next[0]++], new byte[0]));
            clientRnic.connect(bulk, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
            clientRnic.connect(small, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
            assertEquals(bulk.channel().eventLoop(), small.channel().eventLoop(), "one event loop serves both");

            Recorder recorder = new Recorder(bulk.channel());
            bulk.channel().pipeline().addFirst(recorder.bulkSide());
            small.channel().pipeline().addFirst(recorder.smallSide());

            // The event loop waits while the backlog and the first Send are posted, so that it finds
            // both at once: the Send's doorbell rings after the backlog's.
            CountDownLatch hold = new CountDownLatch(1);
            bulk.channel().eventLoop().execute(() -> {
                try {
                    hold.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            SendWorkRequest[] backlog = new SendWorkRequest[BACKLOG];
            for (int i = 0; i < BACKLOG; i++) {
                backlog[i] = SendWorkRequest.write(i, sink.address(), sink.rkey(), new Sge(source, 0, LARGE));
            }
            bulk.postSend(backlog, BACKLOG);
            long worst = 0;
            for (int i = 0; i < SMALL_SENDS; i++) {
                recorder.smallPosted();
                small.postSend(SendWorkRequest.send(i, new Sge(source, 0, 8)));
                if (i == 0) {
                    hold.countDown();
                }
                WorkCompletion wc = smallCq.take(10, TimeUnit.SECONDS);
                assertNotNull(wc, "Send " + i + " completes");
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                worst = Math.max(worst, recorder.bulkOctetsBeforeSmallSend());
            }
            for (int i = 0; i < BACKLOG; i++) {
                WorkCompletion wc = bulkCq.take(10, TimeUnit.SECONDS);
                assertNotNull(wc, "Write " + i + " of the backlog completes");
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            long bound = ConnectionManager.WATER_MARK.high() + LARGE + FRAMING;
            System.out.printf("bulk octets ahead of a small Send: at most %d; most unsent on the bulk connection %d "
                    + "(bound for both %d)%n", worst, recorder.mostUnsent(), bound);
            // A drained connection takes work again behind the other queue pairs' doorbells: one
            // refill (the high mark plus one message) at most is ahead of a Send. Refilling inside the
            // flush (Netty writes up to 16 times per turn) put 2 MiB ahead, the whole 32 MiB backlog
            // at once without the mark.
            assertTrue(worst <= bound, "the bulk queue pair handed " + worst + " octets to TCP between a small "
                    + "Send's post and the Send (bound " + bound + ")");
            assertTrue(recorder.mostUnsent() <= bound, "the bulk connection "
                    + "held " + recorder.mostUnsent() + " octets unsent, over the high water mark "
                    + ConnectionManager.WATER_MARK.high() + " plus one FPDU");
            listener.close();
        }
    }

    /** Counts on the shared event loop; read from the test thread (hence synchronized). */
    private static final class Recorder {
        private final Channel bulkChannel;
        private long bulkOctets;
        private long bulkOctetsAtPost;
        private long bulkOctetsBeforeSend = -1;
        private long mostUnsent;

        Recorder(Channel bulkChannel) {
            this.bulkChannel = bulkChannel;
        }

        synchronized void smallPosted() {
            bulkOctetsAtPost = bulkOctets;
            bulkOctetsBeforeSend = -1;
        }

        synchronized long bulkOctetsBeforeSmallSend() {
            assertTrue(bulkOctetsBeforeSend >= 0, "the Send went out");
            return bulkOctetsBeforeSend;
        }

        synchronized long mostUnsent() {
            return mostUnsent;
        }

        ChannelOutboundHandlerAdapter bulkSide() {
            return new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    int octets = msg instanceof ByteBuf ? ((ByteBuf) msg).readableBytes() : 0;
                    ctx.write(msg, promise);
                    synchronized (Recorder.this) {
                        bulkOctets += octets;
                        mostUnsent = Math.max(mostUnsent, bulkChannel.unsafe().outboundBuffer().totalPendingWriteBytes());
                    }
                }
            };
        }

        ChannelOutboundHandlerAdapter smallSide() {
            return new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    synchronized (Recorder.this) {
                        if (msg instanceof ByteBuf && ((ByteBuf) msg).isReadable() && bulkOctetsBeforeSend < 0) {
                            bulkOctetsBeforeSend = bulkOctets - bulkOctetsAtPost;
                        }
                    }
                    ctx.write(msg, promise);
                }
            };
        }
    }
}
