package org.jiwarp.rnic.cm;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.capture.pcap.TcpSegment;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * Writes one connection's traffic to a pcap file, for Wireshark and {@code jiwarp decode}: the first
 * handler of the pipeline (before MPA), installed by {@link Rnic} only when
 * {@link RnicOptions#capture(Path)} names a directory. It sees the raw bytes both ways: what TCP
 * delivered, and what the FPDU framer and the MPA setup wrote.
 *
 * <pre>
 *   channelActive     SYN, SYN-ACK, ACK (synthesized)      file &lt;dir&gt;/&lt;local-port&gt;-&lt;remote-port&gt;.pcap
 *   write / read      PSH-ACK: MPA Request, MPA Reply, then one FPDU per segment, both directions
 *   channelInactive   FIN-ACK, FIN-ACK, ACK (the side that closed first goes first); file closed
 * </pre>
 *
 * <p><b>One FPDU per segment, both ways.</b> TCP reads split and merge FPDUs anyhow, and writes need
 * not match FPDUs either, so each direction goes through a {@link PcapSegmenter} that re-cuts the
 * byte stream: it reads the Request or Reply length from its header, then each FPDU's length from
 * its ULPDU_LENGTH field, pad, CRC and, where markers run, the markers inside it. Which directions
 * carry markers follows from the two frames' M flags (RFC 5044 section 7.1: M in the Request asks
 * the responder for markers, M in the Reply the initiator), which this handler reads itself: it
 * sits before the MPA handler, so the {@code MpaEstablishedEvent} that handler fires toward the
 * tail never reaches it. Wireshark places markers assuming one FPDU per segment, so this is what
 * makes marker captures decode. After a rejected setup, or for a stream that is not MPA, bytes are
 * written as they come. A unit longer than one IPv4 segment (a 64 KiB FPDU with markers) is split.
 *
 * <p><b>Addresses and numbers.</b> Addresses and ports are the socket's; the connecting side is the
 * TCP client. Frames are Ethernet with made-up MACs ({@link SyntheticTcpCapture}). Java sockets do
 * not expose TCP sequence numbers, so they are synthetic but consistent: each direction's initial
 * sequence number is a hash of the two ports (the two files of one connection, one per end, agree),
 * and every octet written counts. Timestamps are the wall clock as each record is written, kept at
 * least 1 µs apart. Outbound bytes are recorded when written to the socket, inbound bytes once a
 * whole unit has arrived; acknowledgment numbers follow what has been recorded.
 *
 * <p>The file is flushed after each read batch and each outbound flush, so that a process stopped
 * mid-run leaves a readable file, cut at most within the last batch.
 *
 * <p>Everything runs on the connection's event loop. Messages pass on untouched: this handler copies
 * the readable bytes and neither retains nor releases anything. An I/O error ends the capture (with
 * a warning in the log and a {@code .stopped} file beside the capture, which the CLI reports
 * when it joins the captures), never the connection.
 */
public final class PcapCapture extends ChannelDuplexHandler {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(PcapCapture.class);
    private static final long SEQUENCE_MASK = 0xFFFF_FFFFL;
    private static final byte[] NO_PAYLOAD = new byte[0];

    private final Path directory;
    private final boolean initiator;
    private PcapWriter writer;
    private SyntheticTcpCapture tcp;
    private Path file;
    private PcapSegmenter clientBytes;
    private PcapSegmenter serverBytes;
    private boolean localCloseFirst;
    private boolean done;

    /**
     * @param directory where the file goes
     * @param initiator {@code true} on the connecting side (the TCP client)
     */
    public PcapCapture(Path directory, boolean initiator) {
        this.directory = directory;
        this.initiator = initiator;
    }

    /** The file being written, once the connection is active; else {@code null}. */
    public Path file() {
        return file;
    }

    /** The capture file's name for a connection between these ports. */
    public static String fileName(int localPort, int remotePort) {
        return localPort + "-" + remotePort + ".pcap";
    }

    /** The synthetic initial sequence number of the direction from one port to another. */
    public static long initialSequenceNumber(int fromPort, int toPort) {
        int h = (fromPort << 16 | (toPort & 0xFFFF)) * 0x9E37_79B1;
        h ^= h >>> 15;
        h *= 0x85EB_CA77;
        h ^= h >>> 13;
        return h & SEQUENCE_MASK;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        SocketAddress local = ctx.channel().localAddress();
        SocketAddress remote = ctx.channel().remoteAddress();
        if (!(local instanceof InetSocketAddress) || !(remote instanceof InetSocketAddress)) {
            LOG.warn("pcap capture: not a TCP connection ({} <-> {}); not capturing", local, remote);
            done = true;
            return;
        }
        InetSocketAddress localAddress = (InetSocketAddress) local;
        InetSocketAddress remoteAddress = (InetSocketAddress) remote;
        InetSocketAddress client = initiator ? localAddress : remoteAddress;
        InetSocketAddress server = initiator ? remoteAddress : localAddress;
        file = directory.resolve(fileName(localAddress.getPort(), remoteAddress.getPort()));
        try {
            Files.createDirectories(directory);
            OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
            try {
                writer = new PcapWriter(out, LinkType.ETHERNET, false);
            } catch (IOException e) {
                out.close();
                throw e;
            }
            tcp = new SyntheticTcpCapture(writer, client, server,
                    initialSequenceNumber(client.getPort(), server.getPort()),
                    initialSequenceNumber(server.getPort(), client.getPort()));
            int max = client.getAddress() instanceof Inet6Address
                    ? SyntheticTcpCapture.MAX_IPV6_PAYLOAD : SyntheticTcpCapture.MAX_IPV4_PAYLOAD;
            clientBytes = new PcapSegmenter(max);
            serverBytes = new PcapSegmenter(max);
            tcp.timestampNanos(now());
            tcp.handshake();
        } catch (IOException | RuntimeException e) {
            fail(e);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (tcp != null && msg instanceof ByteBuf) {
            record(!initiator, (ByteBuf) msg);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        // Only what reaches an open socket: a write after the close fails and never goes out.
        if (tcp != null && msg instanceof ByteBuf && ctx.channel().isActive()) {
            record(initiator, (ByteBuf) msg);
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        flushFile();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        flushFile();
        ctx.flush();
    }

    /**
     * Puts what is buffered into the file once per read batch and per outbound flush, so that a
     * process killed mid-run (Ctrl-C) leaves a file that ends at most one batch early.
     */
    private void flushFile() {
        if (writer != null) {
            try {
                writer.flush();
            } catch (IOException e) {
                fail(e);
            }
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        // A close that passes here comes from this end; the peer's FIN closes the channel directly.
        if (ctx.channel().isActive()) {
            localCloseFirst = true;
        }
        ctx.close(promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        finish();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        finish();
    }

    /** Records what passes; a failure ends the capture (see {@link #fail}), never the connection. */
    private void record(boolean fromClient, ByteBuf buf) {
        int length = buf.readableBytes();
        if (length == 0 || done) {
            return;
        }
        try {
            byte[] bytes = new byte[length];
            buf.getBytes(buf.readerIndex(), bytes);
            (fromClient ? clientBytes : serverBytes).append(bytes, 0, length);
            drain();
        } catch (IOException | RuntimeException e) {
            fail(e);
        }
    }

    /** Writes every complete unit of both directions, applying the framing once both frames are cut. */
    private void drain() throws IOException {
        boolean progress = true;
        while (progress) {
            progress = drain(clientBytes, true) | drain(serverBytes, false);
            progress |= negotiate();
        }
    }

    private boolean drain(PcapSegmenter segmenter, boolean fromClient) throws IOException {
        boolean any = false;
        for (byte[] unit = segmenter.poll(); unit != null; unit = segmenter.poll()) {
            send(fromClient, unit);
            any = true;
        }
        return any;
    }

    /**
     * RFC 5044 section 7.1: once both frames are cut, each direction learns whether it carries
     * markers. {@code true} when a direction changed state, so that what waited can go out.
     */
    private boolean negotiate() {
        if (clientBytes.raw() != serverBytes.raw()) {
            // One side is not speaking MPA: nothing of the other can be trusted to be FPDUs either.
            clientBytes.setRaw();
            serverBytes.setRaw();
            return true;
        }
        if (clientBytes.awaitingFrame() || serverBytes.awaitingFrame() || clientBytes.raw()) {
            return false;
        }
        int request = clientBytes.frameFlags();
        int reply = serverBytes.frameFlags();
        if ((reply & MpaFrames.REJECT_FLAG) != 0) {
            clientBytes.setRaw();
            serverBytes.setRaw();
            return true;
        }
        // M in the Reply: the responder wants markers from the initiator; M in the Request, the reverse.
        boolean changed = clientBytes.framing((reply & MpaFrames.MARKER_FLAG) != 0);
        return serverBytes.framing((request & MpaFrames.MARKER_FLAG) != 0) | changed;
    }

    private void send(boolean fromClient, byte[] payload) throws IOException {
        tick();
        if (fromClient) {
            tcp.clientSends(payload);
        } else {
            tcp.serverSends(payload);
        }
    }

    /** Ends the capture: what is left of a partial unit, the FIN exchange, then the file is closed. */
    private void finish() {
        if (done) {
            return;
        }
        done = true;
        if (tcp == null) {
            return;
        }
        try {
            for (byte[] rest = clientBytes.rest(); rest != null; rest = clientBytes.rest()) {
                send(true, rest);
            }
            for (byte[] rest = serverBytes.rest(); rest != null; rest = serverBytes.rest()) {
                send(false, rest);
            }
            tick();
            fin(localCloseFirst == initiator);
            writer.close();
        } catch (IOException | RuntimeException e) {
            fail(e);
        }
        tcp = null;
        writer = null;
    }

    /** FIN-ACK from each side, the first closer first, then the last ACK. */
    private void fin(boolean clientFirst) throws IOException {
        if (clientFirst) {
            tcp.close();
            return;
        }
        long client = tcp.clientNextSequence();
        long server = tcp.serverNextSequence();
        long serverAfterFin = (server + 1) & SEQUENCE_MASK;
        tcp.writeSegment(false, server, client, TcpSegment.FIN | TcpSegment.ACK, NO_PAYLOAD, 0, 0);
        tcp.writeSegment(true, client, serverAfterFin, TcpSegment.FIN | TcpSegment.ACK, NO_PAYLOAD, 0, 0);
        tcp.writeSegment(false, serverAfterFin, (client + 1) & SEQUENCE_MASK, TcpSegment.ACK, NO_PAYLOAD, 0, 0);
    }

    /** Moves the capture clock to now, or 1 µs past the last record if that is later. */
    private void tick() {
        tcp.timestampNanos(Math.max(now(), tcp.timestampNanos()));
    }

    private void fail(Exception e) {
        LOG.warn("pcap capture {} stopped: {}", file, e.toString());
        done = true;
        tcp = null;
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException ignored) {
                // Already failing; the first error is the one logged.
            }
            writer = null;
        }
        if (file != null) {
            leaveWordOfTheStop(e);
        }
    }

    /** The suffix of the file beside a capture that stopped early; it holds the reason. */
    public static final String STOPPED_SUFFIX = ".stopped";

    /**
     * Says beside the file that its capture stopped early, so that whoever joins the captures can
     * say so: {@code <file>.stopped} holding the reason. On a full disk the reason may not fit, but
     * an empty file does (it takes no data block).
     */
    private void leaveWordOfTheStop(Exception e) {
        Path word = file.resolveSibling(file.getFileName() + STOPPED_SUFFIX);
        String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        try {
            Files.writeString(word, reason);
        } catch (IOException notEvenThat) {
            try {
                Files.deleteIfExists(word);
                Files.createFile(word);
            } catch (IOException nothingMore) {
                // The warning above is all that is left.
            }
        }
    }

    private static long now() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
