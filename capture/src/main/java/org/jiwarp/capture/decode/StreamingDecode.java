package org.jiwarp.capture.decode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PacketParser;
import org.jiwarp.capture.pcap.PcapRecord;
import org.jiwarp.capture.pcap.StreamChunk;
import org.jiwarp.capture.pcap.StreamReassembler;
import org.jiwarp.capture.pcap.TcpConversation;
import org.jiwarp.capture.pcap.TcpConversations;
import org.jiwarp.capture.pcap.TcpDirection;
import org.jiwarp.capture.pcap.TcpSegment;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * Decodes the iWARP traffic of a capture record by record, handing each PDU on in frame order as
 * soon as no earlier one can still come: {@link IwarpStreamDecoder}'s decoding for a capture of
 * any size, in memory bounded by a window.
 *
 * <pre>
 *   record -> TcpSegment -> conversation, direction -> StreamReassembler -> the direction's window
 *   window octets of all directions >= windowOctets:  decode every window (a "stretch")
 *       first stretch of a conversation:  MPA Request and Reply, or the search of a capture begun
 *                                         mid-connection (IwarpStreamDecoder.decodeConversation)
 *       later stretches:                  FPDUs, from where the stretch before stopped
 *       the FPDU a stretch's end cuts:    carried into the next stretch
 *   PDUs -> RPC-over-RDMA fields -> consumer, in frame order
 * </pre>
 *
 * <p>A capture whose directions all fit in one window (every capture when the window is
 * {@code Long.MAX_VALUE}) is decoded in one stretch at its end, exactly as
 * {@link IwarpStreamDecoder#decode(org.jiwarp.capture.pcap.PcapFile)} decodes it. Longer ones differ
 * only where a stretch's end meets something only the whole stream shows: a gap whose resynchronising
 * boundary lies in a later stretch is searched for again there, and markers found by their content
 * are found again in each stretch.
 *
 * <p><b>Memory.</b> Held at any time: the windows (at most {@code windowOctets} over all directions,
 * plus one FPDU per direction carried over), data held behind TCP holes (bounded per direction by
 * the window), the PDUs decoded but not yet handed on (those after the earliest octet still in a
 * window), the RPC-over-RDMA Send messages being gathered, the notes, and a few hundred octets per
 * TCP conversation (its 4-tuple, SYN, FIN and RST).
 *
 * <p>Not thread-safe.
 */
public final class StreamingDecode {

    /** The default window: 16 MiB over all directions. */
    public static final long DEFAULT_WINDOW = 16L << 20;

    private final Consumer<DecodedPdu> consumer;
    private final long windowOctets;
    private final TcpConversations conversations;
    private final Map<TcpConversation, Conversation> byTcp = new IdentityHashMap<>();
    private final List<Conversation> inOrder = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final RpcRdmaFields rpcRdma = new RpcRdmaFields();
    /** Decoded PDUs not yet handed on, earliest frame first (and in decoding order within a frame). */
    private final PriorityQueue<Pending> decoded = new PriorityQueue<>();
    private long decodedCount;
    private long buffered;
    private int nextFrame = 1;
    private int iwarp;

    private record Pending(DecodedPdu pdu, long order) implements Comparable<Pending> {
        @Override
        public int compareTo(Pending other) {
            int byFrame = Integer.compare(pdu.frameNumber(), other.pdu.frameNumber());
            return byFrame != 0 ? byFrame : Long.compare(order, other.order);
        }
    }

    /** One TCP conversation: its two directions and whether its start was decoded. */
    private final class Conversation {
        final TcpConversation tcp;
        final Map<TcpDirection, Direction> directions = new IdentityHashMap<>(2);
        boolean setUp;

        Conversation(TcpConversation tcp) {
            this.tcp = tcp;
        }

        Direction direction(TcpDirection direction) {
            return directions.computeIfAbsent(direction, d -> new Direction());
        }
    }

    /** One direction: its reassembled octets not yet decoded, and how to go on decoding them. */
    private final class Direction {
        final List<StreamChunk> window = new ArrayList<>();
        final StreamReassembler reassembler = new StreamReassembler(window, windowOctets);
        int chunksCounted;
        /** The decoder of the stretch before, for its settings; {@code null}: nothing more to decode. */
        FpduDecoder continuation;
        boolean byContent;
        boolean searching;

        /** Counts the octets of chunks the reassembler added since the last call. */
        long grew() {
            long octets = 0;
            for (; chunksCounted < window.size(); chunksCounted++) {
                octets += window.get(chunksCounted).data().length;
            }
            return octets;
        }

        int lowestFrame() {
            int lowest = reassembler.lowestHeldFrame();
            for (StreamChunk chunk : window) {
                lowest = Math.min(lowest, chunk.frameNumber());
            }
            return lowest;
        }

        void keep(List<StreamChunk> rest) {
            window.clear();
            window.addAll(rest);
            chunksCounted = window.size();
        }
    }

    /**
     * @param consumer     gets every PDU, in frame order (as {@link CaptureDecode#pdus()} lists them)
     * @param windowOctets the reassembled octets held, over all directions, before they are decoded
     */
    public StreamingDecode(Consumer<DecodedPdu> consumer, long windowOctets) {
        this.consumer = consumer;
        this.windowOctets = windowOctets;
        this.conversations = new TcpConversations(this::segment);
    }

    /** Adds the capture's next record, captured on an interface of {@code linkType} ({@code null}: skipped). */
    public void add(PcapRecord record, LinkType linkType) {
        nextFrame = record.frameNumber() + 1;
        if (linkType == null) {
            return; // a pcapng interface of a link type this package does not decode
        }
        TcpSegment segment = PacketParser.parse(record, linkType);
        if (segment != null) {
            conversations.add(segment);
        }
        if (buffered >= windowOctets) {
            stretch(true);
        }
    }

    /** The end of the capture: decodes what is left and hands on every PDU. */
    public void finish() {
        for (Conversation conversation : inOrder) {
            for (Direction direction : conversation.directions.values()) {
                direction.reassembler.finish();
            }
        }
        stretch(false);
        release(Integer.MAX_VALUE);
    }

    /** Notes on conversations that could not be decoded (not iWARP, gaps, truncation), in order. */
    public List<String> notes() {
        return notes;
    }

    /** Conversations in which an MPA Request (or a run of FPDUs) was found. */
    public int iwarpConversations() {
        return iwarp;
    }

    /** TCP conversations seen. */
    public int tcpConversations() {
        return conversations.conversations().size();
    }

    private void segment(TcpConversation tcp, TcpDirection tcpDirection, TcpSegment segment) {
        Conversation conversation = byTcp.get(tcp);
        if (conversation == null) {
            conversation = new Conversation(tcp);
            byTcp.put(tcp, conversation);
            inOrder.add(conversation);
        }
        Direction direction = conversation.direction(tcpDirection);
        direction.reassembler.add(segment);
        long grew = direction.grew();
        if (grew > 0) {
            if (conversation.setUp && direction.continuation == null) {
                direction.keep(List.of()); // a direction not decoded further: nothing to keep
            } else {
                buffered += grew;
            }
        }
    }

    /**
     * Decodes every direction's window. {@code partial}: the capture goes on, so a conversation
     * whose start is still arriving waits for the next stretch, and each FPDU a window's end cuts is
     * kept for the next.
     */
    private void stretch(boolean partial) {
        List<DecodedPdu> pdus = new ArrayList<>();
        for (Conversation conversation : inOrder) {
            if (!conversation.setUp) {
                if (partial && !startArrived(conversation)) {
                    continue;
                }
                setUp(conversation, pdus, partial);
            } else {
                for (Direction direction : conversation.directions.values()) {
                    decodeWindow(conversation, direction, pdus, partial);
                }
            }
        }
        buffered = 0;
        for (Conversation conversation : inOrder) {
            for (Direction direction : conversation.directions.values()) {
                buffered += octets(direction.window);
            }
        }
        for (DecodedPdu pdu : pdus) {
            decoded.add(new Pending(pdu, decodedCount++));
        }
        if (partial) {
            int earliest = nextFrame;
            for (Conversation conversation : inOrder) {
                for (Direction direction : conversation.directions.values()) {
                    earliest = Math.min(earliest, direction.lowestFrame());
                }
            }
            release(earliest);
        }
        if (!partial) {
            inOrder.clear();
        }
    }

    /**
     * Whether a conversation's start is in its windows, so that deciding how to decode it cannot
     * change with what comes later: the whole MPA Request and the whole Reply (or whatever the
     * responder sent instead); without a Request, {@value #START_OCTETS} octets, or a quarter of the
     * window, to search for FPDUs in.
     */
    private boolean startArrived(Conversation conversation) {
        TcpConversation tcp = conversation.tcp;
        List<StreamChunk> forward = conversation.direction(tcp.clientToServer()).window;
        List<StreamChunk> backward = conversation.direction(tcp.serverToClient()).window;
        long held = octets(forward) + octets(backward);
        if (held >= Math.max(windowOctets / 4, START_OCTETS)) {
            return true;
        }
        byte[] forwardStart = start(forward, MAX_FRAME);
        byte[] backwardStart = start(backward, MAX_FRAME);
        boolean forwardRequest = wholeFrame(forwardStart, true);
        if (!forwardRequest && !wholeFrame(backwardStart, true)) {
            return false; // no whole Request yet, or a capture begun mid-connection: wait for octets
        }
        byte[] responder = forwardRequest ? backwardStart : forwardStart;
        return wholeFrame(responder, false) || (responder.length >= MpaFrames.KEY_LENGTH
                && !MpaFrames.isReply(Unpooled.wrappedBuffer(responder), 0));
    }

    /** Octets searched for FPDUs in a conversation begun mid-connection before it is decoded. */
    static final int START_OCTETS = 64 * 1024;
    /** The longest MPA Request or Reply: header and 512 octets of private data (RFC 5044 section 7.1). */
    private static final int MAX_FRAME = MpaFrames.HEADER_LENGTH + MpaFrames.MAX_PRIVATE_DATA_LENGTH;

    /** {@code true} when {@code start} begins with a whole Request ({@code request}) or Reply, or one too long. */
    private static boolean wholeFrame(byte[] start, boolean request) {
        if (start.length < MpaFrames.HEADER_LENGTH) {
            return false;
        }
        ByteBuf frame = Unpooled.wrappedBuffer(start);
        if (request ? !MpaFrames.isRequest(frame, 0) : !MpaFrames.isReply(frame, 0)) {
            return false;
        }
        int pdLength = MpaFrames.privateDataLength(frame, 0);
        return pdLength > MpaFrames.MAX_PRIVATE_DATA_LENGTH || start.length >= MpaFrames.HEADER_LENGTH + pdLength;
    }

    /** Up to {@code length} octets from the start of {@code chunks}, as far as they run without a hole. */
    private static byte[] start(List<StreamChunk> chunks, int length) {
        ByteArrayOutputStream start = new ByteArrayOutputStream();
        long end = chunks.isEmpty() ? 0 : chunks.get(0).streamOffset();
        for (StreamChunk chunk : chunks) {
            if (chunk.streamOffset() != end || start.size() >= length) {
                break;
            }
            start.write(chunk.data(), 0, Math.min(chunk.data().length, length - start.size()));
            end = chunk.endOffset();
        }
        return start.toByteArray();
    }

    private void setUp(Conversation conversation, List<DecodedPdu> pdus, boolean partial) {
        TcpConversation tcp = conversation.tcp;
        String client = IwarpStreamDecoder.endpoint(tcp.clientAddress(), tcp.clientPort());
        String server = IwarpStreamDecoder.endpoint(tcp.serverAddress(), tcp.serverPort());
        Direction forward = conversation.direction(tcp.clientToServer());
        Direction backward = conversation.direction(tcp.serverToClient());
        CapturedStream forwardStream = new CapturedStream(forward.window, forward.reassembler.gap() && !partial,
                client, server);
        CapturedStream backwardStream = new CapturedStream(backward.window, backward.reassembler.gap() && !partial,
                server, client);
        forwardStream.receiverMss = tcp.serverToClient().mss();
        backwardStream.receiverMss = tcp.clientToServer().mss();
        IwarpStreamDecoder.Setup setup = IwarpStreamDecoder.decodeConversation(tcp.index(), client, server,
                forwardStream, backwardStream, pdus, notes, partial);
        conversation.setUp = true;
        if (setup.iwarp()) {
            iwarp++;
        }
        carryOver(forward, forwardStream, setup.forward(), setup.forwardByContent());
        carryOver(backward, backwardStream, setup.backward(), setup.backwardByContent());
    }

    private void decodeWindow(Conversation conversation, Direction direction, List<DecodedPdu> pdus, boolean partial) {
        if (direction.continuation == null || direction.window.isEmpty()) {
            return;
        }
        FpduDecoder before = direction.continuation;
        TcpConversation tcp = conversation.tcp;
        boolean fromClient = direction == conversation.direction(tcp.clientToServer());
        String client = IwarpStreamDecoder.endpoint(tcp.clientAddress(), tcp.clientPort());
        String server = IwarpStreamDecoder.endpoint(tcp.serverAddress(), tcp.serverPort());
        CapturedStream stream = new CapturedStream(direction.window, direction.reassembler.gap() && !partial,
                fromClient ? client : server, fromClient ? server : client);
        stream.receiverMss = (fromClient ? tcp.serverToClient() : tcp.clientToServer()).mss();
        FpduDecoder decoder = new FpduDecoder(stream, tcp.index(), before.crc(), before.markers(), before.origin(),
                pdus, notes);
        if (partial) {
            decoder.partial();
        }
        if (direction.byContent) {
            ContentMarkers.Located located = IwarpStreamDecoder.firstMarker(stream);
            if (located == null) {
                direction.keep(partial ? stream.chunksFrom(stream.runStart(stream.runs() - 1)) : List.of());
                return;
            }
            decoder.decodeFrom(located.offset(), located.markers());
        } else if (direction.searching) {
            FpduBoundarySearch.Boundary boundary = null;
            for (int run = 0; run < stream.runs() && boundary == null; run++) {
                int from = stream.runStart(run);
                boundary = FpduBoundarySearch.find(stream.bytes, from, stream.runEnd(run),
                        stream.streamOffset(run, from) - before.origin(), before.markers(), new boolean[] {before.crc()});
            }
            if (boundary == null) {
                direction.keep(partial ? stream.chunksFrom(stream.runStart(stream.runs() - 1)) : List.of());
                return;
            }
            notes.add("conversation " + tcp.index() + " " + stream.source + ": FPDUs found again at stream offset "
                    + stream.streamOffset(boundary.offset()) + " (frame " + stream.frameAt(boundary.offset()) + "), "
                    + boundary.how());
            decoder.decodeFrom(boundary.offset());
        } else {
            decoder.decodeFrom(0);
        }
        carryOver(direction, stream, decoder, direction.byContent);
    }

    /** Keeps what {@code decoder} left over of {@code stream} for the next stretch, and how to go on. */
    private static void carryOver(Direction direction, CapturedStream stream, FpduDecoder decoder, boolean byContent) {
        direction.continuation = decoder;
        direction.byContent = byContent;
        direction.searching = decoder != null && decoder.resumeBySearch();
        if (decoder == null || decoder.resumeAt() < 0) {
            direction.keep(List.of());
        } else {
            direction.keep(stream.chunksFrom(decoder.resumeAt()));
        }
    }

    /** Hands on, in frame order, every decoded PDU of a frame before {@code frame}. */
    private void release(int frame) {
        while (!decoded.isEmpty() && decoded.peek().pdu().frameNumber() < frame) {
            DecodedPdu pdu = decoded.poll().pdu();
            rpcRdma.add(pdu);
            consumer.accept(pdu);
        }
    }

    private static long octets(List<StreamChunk> chunks) {
        long octets = 0;
        for (StreamChunk chunk : chunks) {
            octets += chunk.data().length;
        }
        return octets;
    }
}
