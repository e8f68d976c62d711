package org.jiwarp.capture.pcap;

import static org.jiwarp.capture.pcap.TestFrames.address;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jiwarp.testing.Property;
import org.junit.jupiter.api.Test;

class TcpReassemblyTest {

    private static final InetAddress CLIENT = address("10.0.0.19");
    private static final InetAddress SERVER = address("10.0.0.18");
    private static final int CLIENT_PORT = 60892;
    private static final int SERVER_PORT = 4210;
    private static final int ACK = TcpSegment.ACK;
    private static final int PSH_ACK = TcpSegment.PSH | TcpSegment.ACK;

    /** Builds segments with increasing frame numbers. */
    private static final class Feed {
        final TcpConversations conversations = new TcpConversations();
        int frame;
        int clientPort = CLIENT_PORT;

        int client(long seq, int flags, byte[] payload) {
            return add(new TcpSegment(++frame, frame * 1000L, CLIENT, clientPort, SERVER, SERVER_PORT,
                    seq & 0xFFFF_FFFFL, 0, flags, payload));
        }

        int server(long seq, int flags, byte[] payload) {
            return add(new TcpSegment(++frame, frame * 1000L, SERVER, SERVER_PORT, CLIENT, clientPort,
                    seq & 0xFFFF_FFFFL, 0, flags, payload));
        }

        int client(long seq, String text) {
            return client(seq, PSH_ACK, ascii(text));
        }

        int add(TcpSegment segment) {
            conversations.add(segment);
            return segment.frameNumber();
        }

        TcpConversation only() {
            assertEquals(1, conversations.conversations().size());
            return conversations.conversations().get(0);
        }
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static String text(TcpDirection direction) {
        return new String(direction.toByteArray(), StandardCharsets.US_ASCII);
    }

    private static void assertChunk(StreamChunk chunk, int frame, long offset, String data) {
        assertEquals(frame, chunk.frameNumber(), chunk.toString());
        assertEquals(offset, chunk.streamOffset(), chunk.toString());
        assertEquals(data, new String(chunk.data(), StandardCharsets.US_ASCII), chunk.toString());
    }

    @Test
    void handshakeDataAndClose() {
        Feed f = new Feed();
        f.client(100, TcpSegment.SYN, new byte[0]);
        f.server(500, TcpSegment.SYN | ACK, new byte[0]);
        f.client(101, ACK, new byte[0]);
        f.client(101, "hello ");
        f.server(501, PSH_ACK, ascii("hi"));
        f.client(107, "world");
        f.client(112, TcpSegment.FIN | ACK, new byte[0]);
        f.server(503, TcpSegment.FIN | ACK, new byte[0]);
        f.client(113, ACK, new byte[0]);
        TcpConversation c = f.only();
        assertEquals(0, c.index());
        assertEquals(CLIENT, c.clientAddress());
        assertEquals(CLIENT_PORT, c.clientPort());
        assertEquals(SERVER, c.serverAddress());
        assertEquals(SERVER_PORT, c.serverPort());
        TcpDirection up = c.clientToServer();
        assertEquals(1, up.synFrame());
        assertEquals(7, up.finFrame());
        assertEquals(100, up.initialSequence());
        assertEquals(101, up.baseSequence());
        assertEquals(2, up.chunks().size());
        assertChunk(up.chunks().get(0), 4, 0, "hello ");
        assertChunk(up.chunks().get(1), 6, 6, "world");
        assertEquals(11, up.bytes());
        assertFalse(up.hasGap());
        TcpDirection down = c.serverToClient();
        assertEquals(2, down.synFrame());
        assertEquals(List.of(new StreamChunk(5, 0, ascii("hi"))), down.chunks());
        assertEquals(6, up.segments().size());
        assertEquals(3, down.segments().size());
    }

    @Test
    void outOfOrderSegmentsWaitForTheGapFiller() {
        Feed f = new Feed();
        f.client(1000, TcpSegment.SYN, new byte[0]);
        f.client(1001, "aaaa");
        f.client(1009, "cccc");
        f.client(1017, "eeee");
        f.client(1013, "dddd");
        int filler = f.client(1005, "bbbb");
        TcpDirection up = f.only().clientToServer();
        List<StreamChunk> chunks = up.chunks();
        assertEquals(5, chunks.size());
        assertChunk(chunks.get(0), 2, 0, "aaaa");
        assertChunk(chunks.get(1), filler, 4, "bbbb");
        assertChunk(chunks.get(2), filler, 8, "cccc");
        assertChunk(chunks.get(3), filler, 12, "dddd");
        assertChunk(chunks.get(4), filler, 16, "eeee");
        assertEquals("aaaabbbbccccddddeeee", text(up));
        assertFalse(up.hasGap());
    }

    @Test
    void retransmissionsAreDropped() {
        Feed f = new Feed();
        f.client(1000, TcpSegment.SYN, new byte[0]);
        f.client(1001, "abcd");
        f.client(1001, "abcd");
        f.client(1005, "efgh");
        f.client(1001, "abcd");
        f.client(1000, TcpSegment.SYN, new byte[0]); // retransmitted SYN: same conversation
        TcpDirection up = f.only().clientToServer();
        assertEquals(2, up.chunks().size());
        assertEquals("abcdefgh", text(up));
        assertEquals(6, up.segments().size());
    }

    @Test
    void partialOverlapsDeliverEachByteOnceFirstCopyWins() {
        Feed f = new Feed();
        f.client(0, TcpSegment.SYN, new byte[0]);
        f.client(1, "0123456789");
        int overlap = f.client(6, "XXXXabcde"); // bytes 5..8 again (different, loses), then 9..13 new
        f.client(21, "klmno"); // offset 20..24, held
        int filler = f.client(15, "YYYYYfghijZZ"); // offsets 14..25; 20..24 already held
        TcpDirection up = f.only().clientToServer();
        assertEquals("0123456789" + "bcde" + "YYYYYf" + "klmno" + "Z", text(up));
        List<StreamChunk> chunks = up.chunks();
        assertChunk(chunks.get(0), 2, 0, "0123456789");
        assertChunk(chunks.get(1), overlap, 10, "bcde");
        assertChunk(chunks.get(2), filler, 14, "YYYYYf");
        assertChunk(chunks.get(3), filler, 20, "klmno");
        assertChunk(chunks.get(4), filler, 25, "Z");
        assertEquals(26, up.bytes());
    }

    @Test
    void overlappingHeldSegmentsKeepTheFirstCopy() {
        Feed f = new Feed();
        f.client(0, TcpSegment.SYN, new byte[0]);
        f.client(11, "ABCDE"); // offsets 10..14
        f.client(9, "xxxxxxxxxx"); // offsets 8..17: only 8..9 and 15..17 are new
        int filler = f.client(1, "01234567");
        TcpDirection up = f.only().clientToServer();
        assertEquals("01234567xxABCDExxx", text(up));
        for (StreamChunk chunk : up.chunks()) {
            assertEquals(filler, chunk.frameNumber());
        }
    }

    @Test
    void sequenceNumbersWrapAround() {
        Feed f = new Feed();
        long isn = 0xFFFF_FFF8L;
        f.client(isn, TcpSegment.SYN, new byte[0]);
        f.client(isn + 1, "0123"); // 0xFFFFFFF9..FC
        f.client(isn + 9, "89ab"); // wraps: 0x00000001..
        f.client(isn + 5, "4567"); // 0xFFFFFFFD..0x00000000
        f.client(isn + 13, "cdef");
        f.client(isn + 17, TcpSegment.FIN | ACK, new byte[0]);
        TcpDirection up = f.only().clientToServer();
        assertEquals("0123456789abcdef", text(up));
        assertEquals(0xFFFF_FFF9L, up.baseSequence());
        assertFalse(up.hasGap());
        assertChunk(up.chunks().get(2), 4, 8, "89ab");
    }

    @Test
    void missingSynTakesTheLowestEarlySequenceAsStart() {
        Feed f = new Feed();
        f.client(5005, "efgh"); // overtook the first segment on the wire
        f.client(5004, ACK, new byte[0]); // a keep-alive probe (SND.NXT-1) does not count
        f.client(5001, "abcd");
        f.client(5009, "ijkl");
        f.client(4001, "old!"); // long before the start: a retransmission from before the capture
        TcpDirection up = f.only().clientToServer();
        assertEquals(0, up.synFrame());
        assertEquals(-1, up.initialSequence());
        assertEquals(5001, up.baseSequence());
        assertEquals("abcdefghijkl", text(up));
        assertFalse(up.hasGap());
        assertChunk(up.chunks().get(0), 3, 0, "abcd");
        assertChunk(up.chunks().get(1), 3, 4, "efgh");
    }

    @Test
    void gapThatNeverFills() {
        Feed f = new Feed();
        f.client(0, TcpSegment.SYN, new byte[0]);
        f.client(1, "abcd");
        f.client(9, "ijkl");
        f.client(13, "mnop");
        TcpDirection up = f.only().clientToServer();
        assertTrue(up.hasGap());
        assertEquals(4, up.bytes());
        assertEquals("abcd", text(up));
        assertEquals(1, up.chunks().size());
    }

    @Test
    void finBeyondAHoleIsAGap() {
        Feed f = new Feed();
        f.client(0, TcpSegment.SYN, new byte[0]);
        f.client(1, "abcd");
        f.client(9, TcpSegment.FIN | ACK, new byte[0]);
        assertTrue(f.only().clientToServer().hasGap());
        Feed g = new Feed();
        g.client(0, TcpSegment.SYN, new byte[0]);
        g.client(1, TcpSegment.FIN | PSH_ACK, ascii("abcd")); // data and FIN in one segment
        assertFalse(g.only().clientToServer().hasGap());
        assertEquals("abcd", text(g.only().clientToServer()));
    }

    @Test
    void synWithDataAndRstDiagnosticText() {
        Feed f = new Feed();
        f.client(0, TcpSegment.SYN, ascii("fast")); // TCP Fast Open: data after the SYN's sequence number
        f.client(5, "open");
        f.client(9, TcpSegment.RST | ACK, ascii("reset reason"));
        TcpDirection up = f.only().clientToServer();
        assertEquals("fastopen", text(up));
        assertEquals(3, up.rstFrame());
        assertEquals(8, up.bytes());
    }

    @Test
    void newSynAfterCloseOrWithAnotherIsnStartsANewConversation() {
        Feed f = new Feed();
        f.client(100, TcpSegment.SYN, new byte[0]);
        f.server(900, TcpSegment.SYN | ACK, new byte[0]);
        f.client(101, "first");
        f.client(106, TcpSegment.FIN | ACK, new byte[0]);
        f.server(901, TcpSegment.FIN | ACK, new byte[0]);
        f.client(7000, TcpSegment.SYN, new byte[0]); // closed both ways: new conversation 1
        f.client(7001, "second");
        f.client(8000, TcpSegment.SYN, new byte[0]); // open, but another ISN: conversation 2
        f.client(8001, "third");
        f.client(8001, TcpSegment.RST, new byte[0]);
        f.client(8000, TcpSegment.SYN, new byte[0]); // same ISN, but reset: conversation 3
        f.server(8500, TcpSegment.SYN | ACK, new byte[0]); // a SYN-ACK never starts one
        List<TcpConversation> all = f.conversations.conversations();
        assertEquals(4, all.size());
        assertEquals("first", text(all.get(0).clientToServer()));
        assertEquals("second", text(all.get(1).clientToServer()));
        assertEquals("third", text(all.get(2).clientToServer()));
        assertEquals(3, all.get(3).index());
        assertEquals(11, all.get(3).clientToServer().synFrame());
        assertEquals(12, all.get(3).serverToClient().synFrame());
    }

    @Test
    void synAfterDataWithoutSynStartsANewConversation() {
        Feed f = new Feed();
        f.client(5001, "mid-stream");
        f.client(100, TcpSegment.SYN, new byte[0]);
        assertEquals(2, f.conversations.conversations().size());
    }

    @Test
    void conversationsAreNumberedByFirstAppearance() {
        Feed f = new Feed();
        f.clientPort = 2000;
        f.client(1, TcpSegment.SYN, new byte[0]);
        f.clientPort = 1000;
        f.client(1, TcpSegment.SYN, new byte[0]);
        f.server(50, TcpSegment.SYN | ACK, new byte[0]);
        f.clientPort = 2000;
        f.server(70, TcpSegment.SYN | ACK, new byte[0]);
        f.client(2, "two thousand");
        List<TcpConversation> all = f.conversations.conversations();
        assertEquals(2, all.size());
        assertEquals(2000, all.get(0).clientPort());
        assertEquals(1000, all.get(1).clientPort());
        assertEquals("two thousand", text(all.get(0).clientToServer()));
        assertEquals(4, all.get(0).serverToClient().synFrame());
    }

    @Test
    void clientIsTheSynSenderElseTheFirstSender() {
        Feed serverFirst = new Feed();
        serverFirst.server(10, PSH_ACK, ascii("banner"));
        serverFirst.client(20, "reply");
        TcpConversation c = serverFirst.only();
        assertEquals(SERVER, c.clientAddress());
        assertEquals(SERVER_PORT, c.clientPort());
        assertEquals("banner", text(c.clientToServer()));

        Feed synAckFirst = new Feed();
        synAckFirst.server(10, TcpSegment.SYN | ACK, new byte[0]);
        synAckFirst.client(21, "request");
        TcpConversation d = synAckFirst.only();
        assertEquals(CLIENT, d.clientAddress());
        assertEquals("request", text(d.clientToServer()));

        Feed strayThenSyn = new Feed();
        strayThenSyn.server(10, TcpSegment.ACK, new byte[0]);
        strayThenSyn.client(30, TcpSegment.SYN, new byte[0]);
        TcpConversation e = strayThenSyn.only();
        assertEquals(CLIENT, e.clientAddress());
        assertEquals(1, e.clientToServer().segments().size());
    }

    // ---- property ----------------------------------------------------------------------------------

    /** One transmission of stream bytes {@code [from, to)}; {@code order} sorts the capture. */
    private record Piece(int from, int to, double order) {
    }

    @Test
    void randomSegmentationReorderingAndDuplicatesReassembleExactly() {
        Property.forAll("tcp reassembly", 2000, random -> {
            byte[] stream = Property.bytes(random, random.nextInt(4000));
            long isn = random.nextBoolean() ? 0xFFFF_FFFFL - random.nextInt(3000) : random.nextLong(1L << 32);
            boolean withSyn = random.nextInt(4) != 0;
            boolean withFin = random.nextBoolean();

            // segments in stream order, each to be captured near its place (at most 4 places off)
            List<Piece> sent = new ArrayList<>();
            int at = 0;
            for (int length : Property.split(random, stream.length, 1 + random.nextInt(400))) {
                sent.add(new Piece(at, at + length, sent.size() + random.nextDouble() * 4));
                at += length;
            }
            // one segment lost, every copy of it; without SYN not among the first ones, which
            // decide where the stream starts
            int firstDroppable = withSyn ? 0 : 5;
            int holeFrom = stream.length;
            int holeTo = stream.length;
            if (sent.size() > firstDroppable && random.nextInt(5) == 0) {
                Piece lost = sent.remove(firstDroppable + random.nextInt(sent.size() - firstDroppable));
                holeFrom = lost.from;
                holeTo = lost.to;
            }
            // retransmissions, exact or repacketized over any range but the hole, captured later
            List<Piece> captured = new ArrayList<>(sent);
            int copies = random.nextInt(2 + sent.size() / 2);
            for (int c = 0; c < copies && stream.length > 0; c++) {
                int from = random.nextInt(stream.length);
                int to = from + 1 + random.nextInt(Math.min(500, stream.length - from));
                if (from < holeTo && to > holeFrom) {
                    if (from >= holeFrom) {
                        continue;
                    }
                    to = holeFrom;
                }
                double earliest = withSyn ? 0 : 9;
                captured.add(new Piece(from, to, earliest + random.nextDouble() * (sent.size() + 4)));
            }
            captured.sort((a, b) -> Double.compare(a.order, b.order));

            TcpConversations conversations = new TcpConversations();
            int frame = 0;
            if (withSyn) {
                conversations.add(segment(++frame, isn, TcpSegment.SYN, new byte[0]));
            }
            long base = (isn + 1) & 0xFFFF_FFFFL;
            for (Piece piece : captured) {
                byte[] payload = Arrays.copyOfRange(stream, piece.from, piece.to);
                conversations.add(segment(++frame, base + piece.from, PSH_ACK, payload));
            }
            if (withFin) {
                conversations.add(segment(++frame, base + stream.length, TcpSegment.FIN | ACK, new byte[0]));
            }

            if (frame == 0) {
                assertTrue(conversations.conversations().isEmpty());
                return;
            }
            TcpDirection up = conversations.conversations().get(0).clientToServer();
            assertEquals(1, conversations.conversations().size());
            assertEquals(base, up.baseSequence(), "stream start");
            assertEquals(holeFrom, up.bytes());
            assertArrayEquals(Arrays.copyOf(stream, holeFrom), up.toByteArray());
            boolean gapVisible = holeTo > holeFrom && (holeTo < stream.length || withFin);
            assertEquals(gapVisible, up.hasGap());
            long next = 0;
            int lastFrame = 0;
            for (StreamChunk chunk : up.chunks()) {
                assertEquals(next, chunk.streamOffset());
                assertTrue(chunk.data().length > 0);
                assertTrue(chunk.frameNumber() >= lastFrame, "chunks come out in capture order");
                next = chunk.endOffset();
                lastFrame = chunk.frameNumber();
            }
        });
    }

    private static TcpSegment segment(int frame, long seq, int flags, byte[] payload) {
        return new TcpSegment(frame, frame, CLIENT, CLIENT_PORT, SERVER, SERVER_PORT, seq & 0xFFFF_FFFFL, 0,
                flags, payload);
    }
}
