package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * An initiator and a responder on two {@link EmbeddedChannel}s, with their outbound bytes carried
 * to each other by {@link #pump()}, and what reached each application recorded.
 */
final class MpaPair implements AutoCloseable {

    /** What reached the application end of one pipeline. */
    static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<MpaEstablishedEvent> established = new ArrayList<>();
        final List<Throwable> errors = new ArrayList<>();
        final List<byte[]> ulpdus = new ArrayList<>();
        final List<MpaConnectRequest> requests = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                established.add((MpaEstablishedEvent) evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            errors.add(cause);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                ulpdus.add(ByteBufUtil.getBytes(buf));
            } finally {
                buf.release();
            }
        }

        MpaParameters parameters() {
            return established.isEmpty() ? null : established.get(0).parameters();
        }

        MpaException mpaError() {
            for (Throwable error : errors) {
                if (error instanceof MpaException) {
                    return (MpaException) error;
                }
            }
            return null;
        }
    }

    final Recorder initiatorApp = new Recorder();
    final Recorder responderApp = new Recorder();
    final EmbeddedChannel initiator;
    final EmbeddedChannel responder;

    MpaPair(MpaSettings initiatorSettings, byte[] requestData, MpaSettings responderSettings, MpaAcceptor acceptor) {
        responder = new EmbeddedChannel(new MpaResponderHandler(responderSettings, request -> {
            responderApp.requests.add(request);
            acceptor.onRequest(request);
        }), responderApp);
        initiator = new EmbeddedChannel(new MpaInitiatorHandler(initiatorSettings, requestData), initiatorApp);
    }

    /** Carries bytes both ways until neither side has anything more to send. */
    MpaPair pump() {
        boolean moved = true;
        while (moved) {
            moved = carry(initiator, responder) | carry(responder, initiator);
            initiator.runPendingTasks();
            responder.runPendingTasks();
        }
        return this;
    }

    private static boolean carry(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        for (Object msg = from.readOutbound(); msg != null; msg = from.readOutbound()) {
            moved = true;
            if (to.isActive()) {
                to.writeInbound(msg);
            } else {
                ((ByteBuf) msg).release();
            }
        }
        return moved;
    }

    @Override
    public void close() {
        initiator.finishAndReleaseAll();
        responder.finishAndReleaseAll();
    }
}
