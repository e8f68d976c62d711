package org.jiwarp.capture.pcap;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One direction of a TCP connection: the segments one endpoint sent, and the byte stream they
 * carry once put back in order.
 *
 * <pre>
 *   sequence space (mod 2^32)      ISN   ISN+1                               FIN
 *                                   |SYN |  data ...                          |F|
 *   stream offset                        0  1  2 ...                    bytes()
 *
 *   chunks(), in stream order:  [frame 4: 0..27] [frame 9: 27..67] [frame 12: 67..1111] ...
 * </pre>
 *
 * <p>Reassembly follows RFC 9293 section 3.4 sequence arithmetic: every sequence number is placed
 * relative to the next expected one by its signed 32-bit distance, so the stream runs on through
 * a wrap of the sequence space. SYN and FIN each occupy one sequence number and no stream byte.
 * Each stream byte is delivered exactly once, from the first segment that carried it: complete
 * duplicates (retransmissions) are dropped, partial overlaps trimmed. A segment that arrives
 * ahead of a hole is held back until the hole is filled; its bytes are then delivered in a chunk
 * carrying the frame number of the segment that filled the hole. The data of RST segments is
 * diagnostic text, not stream data (RFC 9293 section 3.5.3), and is left out.
 *
 * <p><b>Where the stream starts.</b> With the SYN captured, offset 0 is ISN+1. Without it (a
 * capture started mid-connection), offset 0 is found among the first {@value #START_SEGMENTS}
 * segments that carry data or FIN: it is the sequence number of the first of them, moved back
 * over every earlier-numbered segment among them whose data joins on without a hole. So segments
 * that overtook earlier ones on the wire do not make the earlier ones look like old data, while a
 * stray retransmission of data sent before the capture began (with a hole after it) does not
 * become the start; bytes before offset 0 are dropped. Pure ACKs (such as keep-alive probes,
 * which carry sequence number SND.NXT-1) do not count.
 *
 * <p>Reassembly runs when a result is first asked for after segments were added. Instances are
 * not thread-safe.
 */
public final class TcpDirection {

    /** How many data-bearing segments are looked at to find the start of a stream without SYN. */
    public static final int START_SEGMENTS = 16;

    private static final long SEQUENCE_MASK = 0xFFFF_FFFFL;

    private final InetAddress source;
    private final int sourcePort;
    private final InetAddress destination;
    private final int destinationPort;
    private final List<TcpSegment> segments = new ArrayList<>();

    // seen at add() time; TcpConversations decides on new conversations from these
    private long isn = -1;
    private int synFrame;
    private int mss;
    private int finFrame;
    private int rstFrame;
    private boolean payloadSeen;

    // results of the last reassembly, valid while !dirty
    private boolean dirty = true;
    private List<StreamChunk> chunks = List.of();
    private List<StreamChunk> beyondGaps = List.of();
    private long bytes;
    private boolean gap;
    private long baseSequence;

    TcpDirection(InetAddress source, int sourcePort, InetAddress destination, int destinationPort) {
        this.source = source;
        this.sourcePort = sourcePort;
        this.destination = destination;
        this.destinationPort = destinationPort;
    }

    void add(TcpSegment segment) {
        segments.add(segment);
        note(segment);
    }

    /**
     * Takes note of what {@code segment} says about the connection (SYN, MSS, FIN, RST, data) without
     * keeping it: a direction whose bytes a {@link StreamReassembler} puts in order as they come.
     */
    void note(TcpSegment segment) {
        if (segment.syn() && isn < 0) {
            isn = segment.sequence();
            synFrame = segment.frameNumber();
            mss = segment.mss();
        }
        if (segment.fin() && finFrame == 0) {
            finFrame = segment.frameNumber();
        }
        if (segment.rst() && rstFrame == 0) {
            rstFrame = segment.frameNumber();
        }
        if (segment.payload().length > 0 && !segment.rst()) {
            payloadSeen = true;
        }
        dirty = true;
    }

    /** The sending endpoint's address. */
    public InetAddress source() {
        return source;
    }

    /** The sending endpoint's port. */
    public int sourcePort() {
        return sourcePort;
    }

    /** The receiving endpoint's address. */
    public InetAddress destination() {
        return destination;
    }

    /** The receiving endpoint's port. */
    public int destinationPort() {
        return destinationPort;
    }

    /** Every segment sent this way, in capture order (retransmissions included). */
    public List<TcpSegment> segments() {
        return Collections.unmodifiableList(segments);
    }

    /** The frame of the first SYN sent this way, or 0 when none was captured. */
    public int synFrame() {
        return synFrame;
    }

    /** The frame of the first FIN sent this way, or 0 when none was captured. */
    public int finFrame() {
        return finFrame;
    }

    /** The frame of the first RST sent this way, or 0 when none was captured. */
    public int rstFrame() {
        return rstFrame;
    }

    /** The MSS option of this direction's SYN: the largest segment its sender will receive; 0 when unknown. */
    public int mss() {
        return mss;
    }

    /** The initial sequence number from the SYN, or -1 when no SYN was captured. */
    public long initialSequence() {
        return isn;
    }

    /** The sequence number of stream offset 0 (ISN+1 when the SYN was captured). */
    public long baseSequence() {
        reassemble();
        return baseSequence;
    }

    /** The in-order byte stream as chunks, in stream order, without overlaps or holes. */
    public List<StreamChunk> chunks() {
        reassemble();
        return chunks;
    }

    /**
     * Every captured byte of the stream, in stream order and without overlaps: {@link #chunks()}
     * followed by the data captured beyond the first hole. Where one chunk's end is not the next
     * chunk's start, the capture missed the octets between them (a lost segment, a capture drop).
     * A chunk beyond a hole carries the frame of the segment that delivered it.
     */
    public List<StreamChunk> capturedChunks() {
        reassemble();
        if (beyondGaps.isEmpty()) {
            return chunks;
        }
        List<StreamChunk> all = new ArrayList<>(chunks.size() + beyondGaps.size());
        all.addAll(chunks);
        all.addAll(beyondGaps);
        return Collections.unmodifiableList(all);
    }

    /** The number of in-order bytes: the stream offset just past the last chunk. */
    public long bytes() {
        reassemble();
        return bytes;
    }

    /**
     * {@code true} when some captured data lies beyond a hole that no captured segment fills (or
     * the FIN does): the chunks stop at the hole.
     */
    public boolean hasGap() {
        reassemble();
        return gap;
    }

    /**
     * The in-order stream as one array.
     *
     * @throws IllegalStateException when it is longer than an array can be
     */
    public byte[] toByteArray() {
        reassemble();
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("stream of " + bytes + " bytes does not fit in an array");
        }
        byte[] out = new byte[(int) bytes];
        for (StreamChunk chunk : chunks) {
            System.arraycopy(chunk.data(), 0, out, (int) chunk.streamOffset(), chunk.data().length);
        }
        return out;
    }

    boolean payloadSeen() {
        return payloadSeen;
    }

    boolean finSeen() {
        return finFrame != 0;
    }

    boolean rstSeen() {
        return rstFrame != 0;
    }

    @Override
    public String toString() {
        return source.getHostAddress() + ":" + sourcePort + " -> " + destination.getHostAddress() + ":"
                + destinationPort + " (" + segments.size() + " segments)";
    }

    // ---- reassembly --------------------------------------------------------------------------

    private void reassemble() {
        if (!dirty) {
            return;
        }
        long base = isn >= 0 ? (isn + 1) & SEQUENCE_MASK : startWithoutSyn(segments);
        List<StreamChunk> out = new ArrayList<>();
        StreamReassembler reassembler = new StreamReassembler(out, Long.MAX_VALUE, base);
        for (TcpSegment segment : segments) {
            reassembler.add(segment);
        }
        int inOrder = out.size();
        this.bytes = reassembler.inOrderOctets();
        reassembler.finish();
        this.beyondGaps = Collections.unmodifiableList(new ArrayList<>(out.subList(inOrder, out.size())));
        this.chunks = Collections.unmodifiableList(new ArrayList<>(out.subList(0, inOrder)));
        this.baseSequence = base;
        this.gap = reassembler.gap();
        this.dirty = false;
    }

    /**
     * Stream offset 0 for a direction whose SYN was not captured, from its first segments; see the
     * class javadoc.
     */
    static long startWithoutSyn(List<TcpSegment> segments) {
        long first = -1;
        int[] starts = new int[START_SEGMENTS]; // signed distances from first
        int[] ends = new int[START_SEGMENTS];
        int counted = 0;
        for (TcpSegment segment : segments) {
            if (segment.rst() || (segment.payload().length == 0 && !segment.fin())) {
                continue;
            }
            if (first < 0) {
                first = segment.sequence();
            }
            starts[counted] = (int) (segment.sequence() - first);
            ends[counted] = starts[counted] + segment.payload().length;
            if (++counted == START_SEGMENTS) {
                break;
            }
        }
        if (first < 0) {
            return segments.isEmpty() ? 0 : segments.get(0).sequence();
        }
        // walk back from the first segment while earlier data joins on without a hole
        int reach = 0;
        boolean moved = true;
        while (moved) {
            moved = false;
            for (int i = 0; i < counted; i++) {
                if (starts[i] < reach && ends[i] >= reach) {
                    reach = starts[i];
                    moved = true;
                }
            }
        }
        return (first + reach) & SEQUENCE_MASK;
    }
}
