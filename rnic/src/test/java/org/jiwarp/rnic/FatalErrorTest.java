package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;

/**
 * An error the process cannot go on from (out of memory) on a connection's event loop is not taken
 * for that connection's failure alone: it goes to the thread's uncaught exception handler, where
 * the {@code jiwarp} command stops the process, and the connection still closes.
 */
class FatalErrorTest {

    @Test
    void outOfMemoryOnAnEventLoopReachesTheThreadsUncaughtExceptionHandler() throws Exception {
        try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
            Channel channel = pair.server.channel();
            CompletableFuture<Throwable> heard = new CompletableFuture<>();
            channel.eventLoop().submit(() -> {
                Thread.currentThread().setUncaughtExceptionHandler((thread, error) -> heard.complete(error));
                channel.pipeline().addFirst("out-of-memory", new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        io.netty.util.ReferenceCountUtil.release(msg);
                        throw new OutOfMemoryError("the test's");
                    }
                });
            }).get(10, TimeUnit.SECONDS);
            try {
                pair.client.postSend(SendWorkRequest.send(1, new Sge(pair.clientRegion, 0, 8)));
                Throwable error = heard.get(10, TimeUnit.SECONDS);
                assertTrue(error instanceof OutOfMemoryError, String.valueOf(error));
                pair.server.closeFuture().get(10, TimeUnit.SECONDS);
                assertEquals(QpState.ERROR, pair.server.state());
            } finally {
                channel.eventLoop().submit(() -> Thread.currentThread().setUncaughtExceptionHandler(null))
                        .get(10, TimeUnit.SECONDS);
            }
        }
    }
}
