package org.jiwarp.capture.pcap;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Reads the shared reference captures (see {@code pcap-samples/README.md} next to the project) when
 * {@code -Djiwarp.externalPcaps} (set by surefire from {@code JIWARP_EXTERNAL_PCAPS}) names their
 * folder; skips with a message otherwise.
 */
class ExternalPcapTest {

    private static final byte[] MPA_REQUEST = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MPA_REPLY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);

    /** Conversations per siw capture, as {@code tshark -q -z conv,tcp} counts them. */
    private static final Map<String, Integer> SIW_CONVERSATIONS = Map.of(
            "pair-ib_send_bw.pcap", 2,
            "pair-ib_write_bw.pcap", 2,
            "pair-rping.pcap", 1,
            "siw-rping-client-vs-host-server-crc.pcap", 1);

    private static Path folder() {
        return Prerequisites.externalPcaps();
    }

    @Test
    void everyCaptureReassemblesToMpaStreams() throws IOException {
        Path folder = folder();
        List<Path> files = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.filter(p -> p.getFileName().toString().endsWith(".pcap")).sorted().forEach(files::add);
        }
        Prerequisites.require(!files.isEmpty(), "no .pcap files under " + folder);
        List<Executable> checks = new ArrayList<>();
        for (Path path : files) {
            checks.add(() -> check(path));
        }
        assertAll("captures under " + folder, checks);
    }

    private static void check(Path path) throws IOException {
        PcapFile file = PcapFile.read(path);
        assertNull(file.warning(), path.toString());
        assertEquals(LinkType.ETHERNET, file.linkType(), path.toString());
        List<TcpConversation> conversations = TcpConversations.of(file).conversations();
        String name = path.getFileName().toString();
        String parent = path.getParent().getFileName().toString();
        int expected = parent.equals("siw") ? SIW_CONVERSATIONS.getOrDefault(name, conversations.size()) : 1;
        assertEquals(expected, conversations.size(), "conversations in " + name);
        for (TcpConversation c : conversations) {
            TcpDirection up = c.clientToServer();
            TcpDirection down = c.serverToClient();
            assertTrue(up.synFrame() > 0, c + ": SYN captured");
            assertFalse(up.hasGap(), c + " client to server has a hole");
            assertFalse(down.hasGap(), c + " server to client has a hole");
            assertStartsWith(MPA_REQUEST, up, c + " client to server");
            assertStartsWith(MPA_REPLY, down, c + " server to client");
            long total = 0;
            for (StreamChunk chunk : up.chunks()) {
                assertEquals(total, chunk.streamOffset());
                total = chunk.endOffset();
            }
            assertEquals(up.bytes(), total);
        }
    }

    private static void assertStartsWith(byte[] prefix, TcpDirection direction, String what) {
        assertTrue(direction.bytes() >= prefix.length, what + ": only " + direction.bytes() + " bytes");
        byte[] head = Arrays.copyOf(direction.toByteArray(), prefix.length);
        assertArrayEquals(prefix, head, what + " starts with "
                + new String(head, StandardCharsets.ISO_8859_1));
    }
}
