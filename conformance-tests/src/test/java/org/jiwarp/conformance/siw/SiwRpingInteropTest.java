package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code jiwarp ping} and rdma-core's rping over Linux siw, in both roles, with verified data: every
 * configuration of MPA revision x CRC (x peer-to-peer mode for jiwarp's client) with 64-octet pings,
 * and 4 KiB and 64 KiB pings in two of them ({@link #runs}), 100 pings with {@code -V} each (25 of
 * 64 KiB). The guest NIC's capture of every run (real siw framing and TCP segmentation, cut
 * to the one connection) and, for pings that fit one FPDU, jiwarp's {@code --pcap} decode in jiwarp
 * and tshark with no mismatch.
 *
 * <p>jiwarp's client reaches siw through an {@link AcceptRaceRelay} that pauses before its first FPDU
 * (in peer-to-peer mode: after the RTR): siw's passive accept loses an FPDU that arrives right
 * behind the Reply or the RTR, and a lost RTR follower wedges siw's connection manager for good.
 *
 * <p>Cells that cannot work against siw 6.1 are asserted as what really happens (see the project's
 * iWARP notes, "siw behaviour"):
 * <ul>
 *   <li>MPA revision 1, jiwarp the client: no IRD/ORD exchange, so siw sets IRD = ORD = 0; rping's
 *       server cannot even post its RDMA Read ("post send error"), never puts a Read Request on the
 *       wire, and disconnects: jiwarp's client fails with its receive flushed after 0 pings.</li>
 *   <li>MPA revision 1, jiwarp the server: siw's client sent revision 2 + Enhanced and rejects the
 *       revision 1 Reply (rping: {@code RDMA_CM_EVENT_REJECTED}); jiwarp sees the client go after
 *       0 pings.</li>
 *   <li>Markers: siw's responder rejects a Request with M (R=1 in the Reply); siw's initiator
 *       rejects a Reply with M.</li>
 * </ul>
 *
 * <p>One guest serves the whole class. A summary of every cell goes to
 * {@code target/siw-interop-matrix.txt} (the matrix in {@code siw-peer/README.md} comes from it).
 */
@Tag("siw")
class SiwRpingInteropTest {

    /**
     * Pings per cell: 100, and 25 of the largest size, each of which takes about a fifth of a second
     * through QEMU's user network under TCG (100 made those four cells 80 s of CI).
     */
    private static int pingsOf(int size) {
        return size < 65535 ? 100 : 25;
    }

    private static final int[] SIZES = {64, 4096, 65535};
    private static final Duration RUN_LIMIT = Duration.ofSeconds(120);
    /** How long {@link AcceptRaceRelay} holds jiwarp's first FPDU after siw's Reply. */
    private static final Duration ACCEPT_PAUSE = Duration.ofMillis(300);
    private static final String READ_REQUEST = "Read Request [last DDP segment]";
    private static final Pattern PINGS_LINE = Pattern.compile("pings: (\\d+)");

    private static SiwPeer peer;
    private static GuestCapture guestCapture;
    private static final List<String> MATRIX = new ArrayList<>();

    /** Where the captures go: {@code -Djiwarp.siw.captures=DIR} keeps them, else a temporary directory. */
    private static Path captures;

    @TempDir
    static Path temp;

    @BeforeAll
    static void boot() throws IOException {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage.ensureBuilt();
        peer = SiwPeer.boot();
        guestCapture = new GuestCapture(peer.pcap());
        String keep = System.getProperty("jiwarp.siw.captures");
        captures = keep == null || keep.isBlank() ? temp : Files.createDirectories(Path.of(keep));
        System.out.println("siw peer up in " + peer.bootTime().toMillis() + " ms under " + peer.accel());
    }

    /** A cell's body, run once more on a fresh guest if the guest stops answering ({@link GuestHang}). */
    private static void withFreshGuestOnHang(String cell, GuestHang.Cell body) throws Exception {
        GuestHang.retryOnFreshGuest(cell, peer, MATRIX, () -> {
            peer.close();
            peer = SiwPeer.boot();
            guestCapture = new GuestCapture(peer.pcap());
        }, body);
    }

    @AfterAll
    static void shutDown() throws IOException {
        if (peer != null) {
            peer.close();
        }
        if (!MATRIX.isEmpty()) {
            Path matrix = Path.of("target", "siw-interop-matrix.txt");
            Files.createDirectories(matrix.getParent());
            Files.write(matrix, MATRIX);
        }
    }

    /**
     * Whether a cell runs. Every configuration pings with 64 octets; the larger sizes (most of the
     * class's time under TCG) run in the two configurations whose captures the pcapng round trip
     * keeps, revision 2 with CRCs, one a role (jiwarp's client in peer-to-peer mode): the others
     * differ from them only in MPA setup and the CRC field, which their 64-octet cells carry.
     * {@code -Djiwarp.siw.rping=all} runs every size in every configuration (the matrix in
     * {@code siw-peer/README.md}).
     */
    static boolean runs(boolean jiwarpClient, int revision, boolean crc, boolean p2p, int size) {
        if (size == SIZES[0] || System.getProperty("jiwarp.siw.rping", "").equals("all")) {
            return true;
        }
        return revision == 2 && crc && p2p == jiwarpClient;
    }

    static Stream<Arguments> jiwarpClientCells() {
        List<Arguments> cells = new ArrayList<>();
        for (int revision : new int[] {2, 1}) {
            for (boolean crc : new boolean[] {false, true}) {
                for (boolean p2p : revision == 2 ? new boolean[] {false, true} : new boolean[] {false}) {
                    for (int size : SIZES) {
                        if (runs(true, revision, crc, p2p, size)) {
                            cells.add(Arguments.of(revision, crc, p2p, size));
                        }
                    }
                }
            }
        }
        return cells.stream();
    }

    static Stream<Arguments> siwClientCells() {
        List<Arguments> cells = new ArrayList<>();
        for (int revision : new int[] {2, 1}) {
            for (boolean crc : new boolean[] {false, true}) {
                for (int size : SIZES) {
                    if (runs(false, revision, crc, false, size)) {
                        cells.add(Arguments.of(revision, crc, size));
                    }
                }
            }
        }
        return cells.stream();
    }

    /** {@code jiwarp ping -c} on the host against {@code rping -s} in the guest, through the forwarded port. */
    @ParameterizedTest(name = "jiwarp ping -c -> siw rping -s: rev {0}, crc={1}, p2p={2}, -S {3}")
    @MethodSource("jiwarpClientCells")
    void jiwarpClientAgainstSiwServer(int revision, boolean crc, boolean p2p, int size) throws Exception {
        withFreshGuestOnHang("jiwarp client rev " + revision + " crc=" + crc + " p2p=" + p2p + " -S " + size,
                () -> jiwarpClientCell(revision, crc, p2p, size));
    }

    private void jiwarpClientCell(int revision, boolean crc, boolean p2p, int size) throws Exception {
        String cell = "rev" + revision + (crc ? "-crc" : "") + (p2p ? "-p2p" : "") + "-" + size;
        Path jiwarpPcap = captures.resolve("client-" + cell + ".pcap");
        Path guestPcap = captures.resolve("client-" + cell + "-guest.pcap");
        // Through the relay that pauses before the first FPDU (peer-to-peer: after the RTR), as siw's
        // accept race needs (see AcceptRaceRelay).
        AcceptRaceRelay relay = new AcceptRaceRelay(peer.hostPort(SiwPeer.RPING_PORT), ACCEPT_PAUSE, p2p ? 1 : 0);
        List<Object> args = new ArrayList<>(List.of("ping", "-c", "-a", "127.0.0.1", "-p", relay.port(), "-C", pingsOf(size),
                "-S", size, "-V", "--mpa-rev", revision));
        if (jiwarpCaptures(size)) {
            args.addAll(List.of("--pcap", jiwarpPcap, "--snaplen", 0));
        }
        if (crc) {
            args.add("--crc");
        }
        if (p2p) {
            args.add("--p2p");
        }

        Files.deleteIfExists(jiwarpPcap);
        ExecResult served;
        JiwarpCommand.Run client;
        long mark;
        try (SiwPeer.Background server = peer.start(rpingScript("rping -s -a " + SiwPeer.GUEST_ADDRESS + " -p "
                + SiwPeer.RPING_PORT + " -C " + pingsOf(size) + " -S " + size + " -V -v", "server ping data: rdma-ping-"))) {
            peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
            mark = guestCapture.mark();
            client = finish(JiwarpCommand.start(args.toArray()), server);
            served = server.await(Duration.ofSeconds(60));
        } finally {
            relay.close();
        }
        assertTrue(guestCapture.connection(mark, SiwPeer.RPING_PORT, guestPcap) > 0,
                "no connection to guest port " + SiwPeer.RPING_PORT + " in " + peer.pcap());
        if (revision == 1) {
            // siw: no IRD/ORD exchange in revision 1, so IRD = ORD = 0 and rping's Read cannot be posted.
            assertEquals(1, client.exit(), client::toString);
            // The flushed work request is not the story: the connection's end is.
            assertTrue(client.err().contains("the connection closed after 0 of " + pingsOf(size) + " pings")
                    && !client.err().contains("FLUSH_ERROR"), client::toString);
            assertEquals(255, served.exitCode(), served::toString);
            assertTrue(served.output().contains("post send error") && served.output().contains("pings: 0"),
                    served::toString);
        } else {
            assertEquals(0, client.exit(), client::toString);
            assertTrue(client.err().contains(pingsOf(size) + " pings of " + size + " octets")
                    && client.err().contains(pingsOf(size) + " validated"), client::toString);
            assertServed(served, pingsOf(size));
        }

        CaptureCheck guest = checkCaptures(guestPcap, jiwarpPcap, crc);
        DecodedPdu reply = guest.first(DecodedPdu.Kind.MPA_REPLY);
        assertNotNull(reply, "no MPA Reply in the guest capture");
        // siw echoes the revision and honours C.
        assertEquals(Integer.toString(revision), reply.fields().get("iwarp_mpa.rev"), reply.summary());
        assertEquals(crc ? "1" : "0", reply.fields().get("iwarp_mpa.crc_flag"), reply.summary());
        if (revision == 1) {
            assertEquals(0, guest.count(READ_REQUEST), "siw put a Read Request on the wire with ORD 0");
            record("jiwarp client", revision, crc, p2p, size, "FAILS as documented: siw IRD=ORD=0, rping server "
                    + "'post send error', no Read Request on the wire; jiwarp exit 1 (receive flushed after 0 pings)");
            return;
        }
        // Per ping the server reads the client's buffer once: one Read Request each.
        assertEquals(pingsOf(size), guest.count(READ_REQUEST), "Read Requests in " + guestPcap);
        if (p2p) {
            // RFC 6581: siw as responder picks the Write RTR; jiwarp's first FPDU is the zero-length Write.
            String first = guest.first(DecodedPdu.Kind.FPDU).summary();
            assertTrue(first.startsWith("Write [last DDP segment] STag=0x00000001 TO=0x0 payload=0 "), first);
        }
        record("jiwarp client", revision, crc, p2p, size, "ok: " + pingsOf(size) + "/" + pingsOf(size) + " validated both ends, "
                + guest.fpdus() + " FPDUs in the guest capture, " + capturesChecked(size));
    }

    /** {@code rping -c} in the guest against {@code jiwarp ping -s} on the host (the guest reaches it at 10.0.2.2). */
    @ParameterizedTest(name = "siw rping -c -> jiwarp ping -s: rev {0}, crc={1}, -S {2}")
    @MethodSource("siwClientCells")
    void siwClientAgainstJiwarpServer(int revision, boolean crc, int size) throws Exception {
        withFreshGuestOnHang("siw client rev " + revision + " crc=" + crc + " -S " + size,
                () -> siwClientCell(revision, crc, size));
    }

    private void siwClientCell(int revision, boolean crc, int size) throws Exception {
        String cell = "rev" + revision + (crc ? "-crc" : "") + "-" + size;
        Path jiwarpPcap = captures.resolve("server-" + cell + ".pcap");
        Path guestPcap = captures.resolve("server-" + cell + "-guest.pcap");
        Files.deleteIfExists(jiwarpPcap);
        int port = freePort();
        List<Object> args = new ArrayList<>(List.of("ping", "-s", "-a", "127.0.0.1", "-p", port, "--clients", 1,
                "--mpa-rev", revision));
        if (jiwarpCaptures(size)) {
            args.addAll(List.of("--pcap", jiwarpPcap, "--snaplen", 0));
        }
        if (crc) {
            args.add("--crc");
        }
        JiwarpCommand.Started server = JiwarpCommand.start(args.toArray());
        server.awaitErr("serving on", Duration.ofSeconds(30));
        long mark = guestCapture.mark();
        ExecResult client = peer.run(rpingScript("rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port + " -C " + pingsOf(size)
                + " -S " + size + " -V -v", "ping data: rdma-ping-"), RUN_LIMIT);
        JiwarpCommand.Run served = server.run().get(60, TimeUnit.SECONDS);

        assertTrue(guestCapture.connection(mark, port, guestPcap) > 0, "no connection to host port " + port);
        assertEquals(0, served.exit(), served::toString);
        if (revision == 1) {
            assertEquals(255, client.exitCode(), client::toString);
            assertTrue(client.output().contains("RDMA_CM_EVENT_REJECTED") && client.output().contains("pings: 0"),
                    client::toString);
            assertTrue(served.err().contains("gone after 0 pings"), served::toString);
        } else {
            assertServed(client, pingsOf(size));
            assertTrue(served.err().contains("gone after " + pingsOf(size) + " pings"), served::toString);
            assertTrue(served.err().contains(crc ? "connected: MPA rev 2, CRC," : "connected: MPA rev 2, no CRC,"),
                    served::toString);
        }

        CaptureCheck guest = checkCaptures(guestPcap, jiwarpPcap, crc);
        DecodedPdu request = guest.first(DecodedPdu.Kind.MPA_REQUEST);
        assertNotNull(request, "no MPA Request in the guest capture");
        // siw as initiator: revision 2, Enhanced, no CRC, IRD = ORD = 1 (rping's).
        assertTrue(request.summary().contains("rev=2 M=0 C=0 enhanced IRD=1 ORD=1"), request.summary());
        if (revision == 1) {
            assertEquals(0, guest.fpdus(), "FPDUs after a rejected Reply");
            DecodedPdu reply = guest.first(DecodedPdu.Kind.MPA_REPLY);
            assertTrue(reply.summary().contains("rev=1"), reply.summary());
            record("siw client", revision, crc, false, size, "FAILS as documented: siw (Rev 2 + Enhanced) rejects "
                    + "jiwarp's revision 1 Reply, rping RDMA_CM_EVENT_REJECTED exit 255; jiwarp: client gone after 0 pings");
            return;
        }
        assertEquals(pingsOf(size), guest.count(READ_REQUEST), "Read Requests in " + guestPcap);
        record("siw client", revision, crc, false, size, "ok: " + pingsOf(size) + "/" + pingsOf(size) + " validated both ends, "
                + guest.fpdus() + " FPDUs in the guest capture, " + capturesChecked(size));
    }

    /** siw never does markers: as responder it rejects a Request with M, as initiator a Reply with M. */
    @Test
    void markersAreRefusedInBothRoles() throws Exception {
        Path guestPcap = captures.resolve("markers-client-guest.pcap");
        long mark;
        JiwarpCommand.Run client;
        try (SiwPeer.Background server = peer.start("rping -s -a " + SiwPeer.GUEST_ADDRESS + " -p "
                + SiwPeer.RPING_PORT + " -C 1 -V")) {
            peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
            mark = guestCapture.mark();
            client = JiwarpCommand.run("ping", "-c", "-a", "127.0.0.1", "-p", peer.hostPort(SiwPeer.RPING_PORT),
                    "-C", 1, "-V", "--markers");
            // siw rejected in the kernel: rping never saw a connection and still waits.
            assertTrue(!server.isDone(), "rping -s ended after a rejected connection");
        }
        assertEquals(1, client.exit(), client::toString);
        assertTrue(client.err().contains("the peer rejected the connection (MPA Reply with the Reject bit set)"),
                client::toString);
        guestCapture.connection(mark, SiwPeer.RPING_PORT, guestPcap);
        CaptureCheck rejected = CaptureCheck.of(guestPcap, null);
        assertEquals(List.of(), rejected.problems(), "guest capture " + guestPcap);
        assertEquals(List.of(), rejected.disagreements(), "guest capture " + guestPcap);
        assertEquals(List.of("conversation 0: the responder rejected the connection (R bit)"), rejected.notes());
        DecodedPdu reply = rejected.first(DecodedPdu.Kind.MPA_REPLY);
        assertEquals("1", reply.fields().get("iwarp_mpa.rej_flag"), reply.summary());
        assertEquals("0", reply.fields().get("iwarp_mpa.marker_flag"), reply.summary());
        record("jiwarp client --markers", 2, false, false, 64, "FAILS as documented: siw replies R=1 M=0; jiwarp exit 1 "
                + "'the peer rejected the connection'");

        int port = freePort();
        JiwarpCommand.Started server = JiwarpCommand.start("ping", "-s", "-a", "127.0.0.1", "-p", port, "--clients", 1,
                "--markers");
        server.awaitErr("serving on", Duration.ofSeconds(30));
        ExecResult siwClient = peer.run("rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port + " -C 1 -V",
                RUN_LIMIT);
        JiwarpCommand.Run served = server.run().get(60, TimeUnit.SECONDS);
        assertEquals(255, siwClient.exitCode(), siwClient::toString);
        assertTrue(siwClient.output().contains("RDMA_CM_EVENT_REJECTED"), siwClient::toString);
        assertTrue(served.err().contains("connected: MPA rev 2, no CRC, markers from the peer") && served.err().contains("gone after 0 pings"),
                served::toString);
        record("siw client, jiwarp server --markers", 2, false, false, 64, "FAILS as documented: siw rejects the Reply "
                + "with M=1 (RDMA_CM_EVENT_REJECTED, exit 255)");
    }

    /**
     * With {@code -Djiwarp.regenerateSiwSamples=true}: short runs (3 pings) whose guest captures
     * become {@code pcap-samples/siw-rping-*.pcap} (see {@link SiwSampleCapturesTest}).
     */
    @Test
    void regenerateSamples() throws Exception {
        assumeTrue(SiwSampleCapturesTest.regenerating(), "-Djiwarp.regenerateSiwSamples=true writes new samples");
        String[][] clients = {{"siw-rping-rev2-crc.pcap", "--crc"}, {"siw-rping-p2p.pcap", "--p2p"}};
        for (String[] sample : clients) {
            Path guestPcap = captures.resolve("sample-" + sample[0]);
            long mark;
            try (SiwPeer.Background server = peer.start("rping -s -a " + SiwPeer.GUEST_ADDRESS + " -p "
                    + SiwPeer.RPING_PORT + " -C 3 -V");
                    AcceptRaceRelay relay = new AcceptRaceRelay(peer.hostPort(SiwPeer.RPING_PORT), ACCEPT_PAUSE,
                            sample[1].equals("--p2p") ? 1 : 0)) {
                peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
                mark = guestCapture.mark();
                JiwarpCommand.Run client = JiwarpCommand.run("ping", "-c", "-a", "127.0.0.1", "-p", relay.port(), "-C",
                        3, "-V", sample[1]);
                assertEquals(0, client.exit(), client::toString);
                assertEquals(0, server.await(Duration.ofSeconds(30)).exitCode());
            }
            guestCapture.connection(mark, SiwPeer.RPING_PORT, guestPcap);
            SiwSampleCapturesTest.keep(guestPcap, sample[0]);
        }
        int port = freePort();
        JiwarpCommand.Started server = JiwarpCommand.start("ping", "-s", "-a", "127.0.0.1", "-p", port, "--clients", 1);
        server.awaitErr("serving on", Duration.ofSeconds(30));
        long mark = guestCapture.mark();
        peer.run("rping -c -a " + SiwPeer.HOST_ADDRESS + " -p " + port + " -C 3 -S 4096 -V", RUN_LIMIT).orThrow();
        assertEquals(0, server.run().get(60, TimeUnit.SECONDS).exit());
        Path guestPcap = captures.resolve("sample-siw-rping-siw-client-4096.pcap");
        guestCapture.connection(mark, port, guestPcap);
        SiwSampleCapturesTest.keep(guestPcap, "siw-rping-siw-client-4096.pcap");
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Both captures of a run, each clean in jiwarp and tshark, with the same Read Requests; returns
     * the guest's.
     */
    private static CaptureCheck checkCaptures(Path guestPcap, Path jiwarpPcap, boolean crc) throws IOException {
        CaptureCheck guest = CaptureCheck.of(guestPcap, crc);
        assertEquals(List.of(), guest.problems(), "guest capture " + guestPcap);
        assertEquals(List.of(), guest.disagreements(), "guest capture " + guestPcap);
        assertEquals(List.of(), guest.notes(), "guest capture " + guestPcap);
        if (Files.exists(jiwarpPcap)) {
            CaptureCheck own = CaptureCheck.of(jiwarpPcap, crc);
            assertEquals(List.of(), own.problems(), "jiwarp capture " + jiwarpPcap);
            assertEquals(List.of(), own.disagreements(), "jiwarp capture " + jiwarpPcap);
            assertEquals(List.of(), own.notes(), "jiwarp capture " + jiwarpPcap);
            assertEquals(guest.count(READ_REQUEST), own.count(READ_REQUEST), "Read Requests, guest vs jiwarp capture");
        }
        return guest;
    }

    /**
     * Whether jiwarp records the run too ({@code --pcap}): only for pings that fit one FPDU. With
     * capture on, a jiwarp end that receives a tagged message of three or more FPDUs whose bytes
     * TCP delivers cut inside an FPDU closes the connection (no Terminate; the work request is
     * flushed); siw's Read Responses sometimes arrive that way. The guest's capture covers every size.
     */
    private static String capturesChecked(int size) {
        return (jiwarpCaptures(size) ? "guest and jiwarp captures agree" : "guest capture agrees") + " with tshark";
    }

    private static boolean jiwarpCaptures(int size) {
        return size <= 1024;
    }

    /**
     * Runs an rping in the guest, keeping its 64 KiB ping lines out of the answer: the exit status
     * stays rping's, the output says how many pings it printed, then everything else it said.
     */
    private static String rpingScript(String rping, String pingLine) {
        return rping + " >/tmp/rping.out 2>&1; rc=$?\n"
                + "echo \"pings: $(grep -c '" + pingLine + "' /tmp/rping.out)\"\n"
                + "grep -v 'ping data: ' /tmp/rping.out | tail -n 40\n"
                + "exit $rc\n";
    }

    /**
     * rping did all its pings, its data checked ({@code -V} exits at the first mismatch). Its exit
     * status is 0, or 255 when its connection-event thread lost the race with its own teardown
     * after the last ping ("rdma_get_cm_event: Bad file descriptor", an rping bug seen about once
     * in 30 runs).
     */
    private static void assertServed(ExecResult rping, int count) {
        assertEquals(count, pings(rping), rping::toString);
        assertTrue(rping.exitCode() == 0 || rping.exitCode() == 255
                && rping.output().contains("rdma_get_cm_event: Bad file descriptor"), rping::toString);
        assertFalse(rping.output().contains("data mismatch"), rping::toString);
    }

    private static int pings(ExecResult rping) {
        Matcher m = PINGS_LINE.matcher(rping.output());
        assertTrue(m.find(), rping::toString);
        return Integer.parseInt(m.group(1));
    }

    /**
     * Waits for a jiwarp client; if it hangs (siw's accept race would), kills the guest's server,
     * which closes the connection and ends the client, and fails.
     */
    private static JiwarpCommand.Run finish(JiwarpCommand.Started client, SiwPeer.Background server)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return client.run().get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            String threads = threadDump();
            String kernel = peer.run("dmesg | tail -n 60", Duration.ofSeconds(30)).output();
            server.kill();
            JiwarpCommand.Run late = client.run().get(30, TimeUnit.SECONDS);
            throw new AssertionError("jiwarp ping -c hung for " + RUN_LIMIT.toSeconds() + " s (then the guest's rping "
                    + "was killed): " + late + "\nguest kernel log:\n" + kernel + "\nthreads at the timeout:\n"
                    + threads);
        }
    }

    /** The stacks of this JVM's jiwarp and Netty threads, for a run that hangs. */
    private static String threadDump() {
        StringBuilder dump = new StringBuilder();
        for (java.util.Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
            String name = thread.getKey().getName();
            if (!name.startsWith("jiwarp") && !name.contains("EventLoop") && !name.contains("epoll")
                    && !name.contains("nio")) {
                continue;
            }
            dump.append(thread.getKey()).append(' ').append(thread.getKey().getState()).append('\n');
            for (StackTraceElement frame : thread.getValue()) {
                dump.append("    at ").append(frame).append('\n');
            }
        }
        return dump.toString();
    }

    private static void record(String role, int revision, boolean crc, boolean p2p, int size, String result) {
        synchronized (MATRIX) {
            MATRIX.add(String.format("%-36s rev %d  crc=%-5s p2p=%-5s -S %-5d  %s", role, revision, crc, p2p, size,
                    result));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
