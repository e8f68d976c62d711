package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * What the initiator's and the responder's setup handlers share: the handshake timer, failing
 * (report, then close), and the switch to full operation, where the handler installs the FPDU
 * codec behind itself and removes itself, handing any bytes that followed the MPA frame to the
 * deframer (as {@code HAProxyMessageDecoder} and {@code SslHandler} hand over).
 *
 * <p>After setup the pipeline reads, from the socket inward:
 * <pre>
 *   FpduDeframer -> FpduFramer -> [FirstFpduGate (responder)] -> ULP      ({@link FpduCodec})
 * </pre>
 */
abstract class MpaSetupHandler extends ByteToMessageDecoder {

    final MpaSettings settings;
    private ScheduledFuture<?> timer;
    private boolean finished;

    MpaSetupHandler(MpaSettings settings) {
        this.settings = settings;
    }

    /** {@code true} once established, rejected or failed: nothing more to read here. */
    final boolean finished() {
        return finished;
    }

    final void startTimer(ChannelHandlerContext ctx, Duration timeout, String what) {
        stopTimer();
        timer = ctx.executor().schedule(() -> fail(ctx, new MpaException(TerminateError.LLP_CONNECTION_LOST,
                what + " did not arrive within " + timeout.toMillis() + " ms")), timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    final void stopTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** Reports the error upward and closes the connection; only the first failure counts. */
    final void fail(ChannelHandlerContext ctx, MpaException error) {
        if (finished) {
            return;
        }
        finished = true;
        stopTimer();
        ctx.fireExceptionCaught(error);
        ctx.close();
    }

    /**
     * Reports a setup failure to the peer as RFC 6581 section 9 asks: a TERM (an RDMAP Terminate of
     * the LLP layer carrying no header, MSN 1 of the Terminate queue) framed as the connection's first
     * FPDU, with CRC and markers as the frames exchanged said, then the connection ends. The error
     * goes upward once the TERM has been written. Only the first failure counts.
     */
    final void failWithTerm(ChannelHandlerContext ctx, MpaException error, boolean crc, boolean markersToPeer) {
        if (finished) {
            return;
        }
        finished = true;
        stopTimer();
        ByteBuf terminate = ctx.alloc().buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + TerminateHeader.CONTROL_LENGTH);
        DdpHeaders.writeUntagged(terminate, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, 1, 0);
        TerminateHeader.write(terminate, error.error(), -1, null, null);
        ByteBuf fpdu = ctx.alloc().buffer(64);
        new FpduWriter(crc, markersToPeer).write(terminate, fpdu);
        terminate.release();
        ctx.writeAndFlush(fpdu).addListener(written -> {
            ctx.fireExceptionCaught(error);
            ctx.close();
        });
    }

    /** Setup is over without full operation (a rejection): stop reading and close after the flush. */
    final void finish() {
        finished = true;
        stopTimer();
    }

    /** Installs the FPDU codec, announces the parameters and leaves the pipeline. */
    final void established(ChannelHandlerContext ctx, MpaParameters parameters) {
        established(ctx, parameters, true);
    }

    /** As {@link #established(ChannelHandlerContext, MpaParameters)}; a responder holds its first FPDU when {@code holdFirstFpdu}. */
    final void established(ChannelHandlerContext ctx, MpaParameters parameters, boolean holdFirstFpdu) {
        finished = true;
        stopTimer();
        FpduCodec codec = FpduCodec.install(ctx, parameters, holdFirstFpdu);
        ctx.fireUserEventTriggered(new MpaEstablishedEvent(parameters, codec));
        // Bytes that followed the MPA frame go on to the deframer as this handler leaves.
        ctx.pipeline().remove(this);
    }

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (finished) {
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            decodeFrame(ctx, in);
        } catch (MpaException e) {
            in.skipBytes(in.readableBytes());
            fail(ctx, e);
        }
    }

    /** Reads the expected frame from {@code in}, consuming exactly its bytes once it is whole. */
    abstract void decodeFrame(ChannelHandlerContext ctx, ByteBuf in);

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!finished) {
            finished = true;
            stopTimer();
            ctx.fireExceptionCaught(new MpaException(TerminateError.LLP_CONNECTION_LOST,
                    "the connection closed during MPA setup"));
        }
        super.channelInactive(ctx);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        stopTimer();
    }
}
