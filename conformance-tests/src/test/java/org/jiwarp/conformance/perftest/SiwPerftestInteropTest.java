package org.jiwarp.conformance.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jiwarp.cli.Jiwarp;
import org.jiwarp.conformance.siw.ExecResult;
import org.jiwarp.conformance.siw.GuestHang;
import org.jiwarp.conformance.siw.SiwPeer;
import org.jiwarp.conformance.siw.SiwPeerImage;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * {@code jiwarp perftest} against linux-rdma perftest over Linux siw, with {@code -R} (rdma_cm), in
 * both roles: ib_write_bw, ib_read_bw, ib_send_bw and ib_write_lat, a few hundred iterations each.
 * perftest's server in the guest with jiwarp's client on the host (through the forwarded port), and
 * jiwarp's server on the host with perftest's client in the guest (at 10.0.2.2). Both ends must exit
 * 0; perftest's report must show the iterations and size asked for; jiwarp's checks (completions and
 * counts, Read data read back, placement of written and sent data, every ib_write_lat iteration)
 * must pass. One guest serves the whole class; a summary goes to
 * {@code target/siw-perftest-matrix.txt}.
 *
 * <p>The guest now and then stops answering altogether after a run (about one run in 15 to 35: no
 * more frames on its NIC, no console message, its TCP stack silent too), with perftest on both
 * ends inside the guest as well, without jiwarp: a siw or TCG problem of the guest. A cell whose
 * guest hangs so gets a fresh guest and one more try, and the matrix says so.
 */
@Tag("siw")
class SiwPerftestInteropTest {

    private static final int ITERS = 300;
    private static final Duration RUN_LIMIT = Duration.ofSeconds(180);
    /** perftest's bandwidth line: #bytes #iterations peak average rate. */
    private static final Pattern BW_LINE = Pattern.compile("(?m)^\\s*(\\d+)\\s+(\\d+)\\s+" + Figure.RE + "\\s+"
            + Figure.RE + "\\s+" + Figure.RE + "(\\s|$)");
    /** perftest's latency line: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%. */
    private static final Pattern LAT_LINE =
            Pattern.compile("(?m)^\\s*(\\d+)\\s+(\\d+)(\\s+" + Figure.RE + "){7}(\\s|$)");
    /**
     * perftest in the guest runs with {@code -F}: it times with the TSC and refuses to report ("Can't
     * produce a report", exit 1) when its TSC-against-clock sample is not linear enough, which
     * happens under QEMU TCG; with {@code -F} it reports anyway, its figures then possibly 0 or
     * nan. Its figures are not checked; its size and iteration count are.
     */
    private static final String PERFTEST_OPTIONS = " -R -F -n " + ITERS;

    private static SiwPeer peer;
    private static final List<String> MATRIX = new ArrayList<>();
    private static long started;

    @BeforeAll
    static void boot() {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        started = System.nanoTime();
        SiwPeerImage.ensureBuilt();
        peer = SiwPeer.boot();
        System.out.println("siw peer up in " + peer.bootTime().toMillis() + " ms under " + peer.accel());
    }

    /** A cell's body, run once more on a fresh guest if the guest stops answering ({@link GuestHang}). */
    private static void withFreshGuestOnHang(String cell, GuestHang.Cell body) throws Exception {
        GuestHang.retryOnFreshGuest(cell, peer, MATRIX, () -> {
            peer.close();
            peer = SiwPeer.boot();
        }, body);
    }

    @AfterAll
    static void shutDown() throws IOException {
        if (peer != null) {
            peer.close();
        }
        if (!MATRIX.isEmpty()) {
            MATRIX.add(String.format("total %.1f s (boot included)", (System.nanoTime() - started) / 1e9));
            Path matrix = Path.of("target", "siw-perftest-matrix.txt");
            Files.createDirectories(matrix.getParent());
            Files.write(matrix, MATRIX);
            MATRIX.forEach(System.out::println);
        }
    }

    /**
     * Program, jiwarp's options for it, message size (0: perftest's default), options both sides
     * get, options only jiwarp gets. 1000 octets make the messages cycle through a page (4 slots);
     * {@code -r 30} makes ib_send_bw's server return credit every 10 receives, so that the client
     * waits for it.
     */
    static Stream<Arguments> cells() {
        return Stream.of(
                Arguments.of("ib_write_bw", "--test write", 0, "", ""),
                Arguments.of("ib_write_bw", "--test write", 1000, "", ""),
                Arguments.of("ib_write_bw", "--test write", 1000, "", "--crc"),
                Arguments.of("ib_read_bw", "--test read", 0, "", ""),
                Arguments.of("ib_read_bw", "--test read", 1000, "", ""),
                Arguments.of("ib_send_bw", "--test send", 0, "", ""),
                Arguments.of("ib_send_bw", "--test send", 1000, "", ""),
                Arguments.of("ib_send_bw", "--test send", 1000, "-r 30", ""),
                Arguments.of("ib_write_lat", "--lat", 0, "", ""),
                Arguments.of("ib_write_lat", "--lat", 1000, "", "--crc"));
    }

    /** The client-only MPA modes on top: peer-to-peer (siw answers with the Write RTR), with and without CRC. */
    static Stream<Arguments> clientCells() {
        return Stream.concat(cells(), Stream.of(
                Arguments.of("ib_read_bw", "--test read", 1000, "", "--p2p"),
                Arguments.of("ib_send_bw", "--test send", 1000, "-r 30", "--p2p --crc"),
                Arguments.of("ib_write_lat", "--lat", 0, "", "--p2p")));
    }

    @Test
    void guestHasPerftest() {
        ExecResult version = peer.run("ib_write_bw --version");
        System.out.println("guest perftest: " + version.output().trim());
        // The protocol jiwarp speaks is perftest 6.06's (see org.jiwarp.cli.perftest).
        assertTrue(version.output().contains("Version: 6.06"), version::toString);
    }

    /** perftest's server in the guest, {@code jiwarp perftest HOST} on the host. */
    @ParameterizedTest(name = "{0} -R -s {2} {3} server in the guest <- jiwarp perftest {1} {4} client")
    @MethodSource("clientCells")
    void jiwarpClientAgainstPerftestServer(String program, String test, int size, String common, String extra)
            throws Exception {
        withFreshGuestOnHang(program + " " + size + " " + common + " jiwarp client " + extra,
                () -> jiwarpClient(program, test, size, common, extra));
    }

    private static void jiwarpClient(String program, String test, int size, String common, String extra)
            throws Exception {
        long start = System.nanoTime();
        String sizeOption = (size > 0 ? " -s " + size : "") + (common.isEmpty() ? "" : " " + common);
        ExecResult served;
        Run client;
        try (SiwPeer.Background server = peer.start(program + PERFTEST_OPTIONS + " -p " + SiwPeer.PERFTEST_PORT
                + sizeOption)) {
            peer.awaitListening(SiwPeer.PERFTEST_PORT, Duration.ofSeconds(60));
            List<Object> args = new ArrayList<>(List.of("perftest"));
            args.addAll(Arrays.asList(test.split(" ")));
            args.addAll(List.of("-n", ITERS, "-p", peer.hostPort(SiwPeer.PERFTEST_PORT), "--timeout", 60));
            if (size > 0) {
                args.addAll(List.of("-s", size));
            }
            args.addAll(options(common, extra));
            args.add("127.0.0.1");
            CompletableFuture<Run> running = Run.start(args.toArray());
            try {
                client = running.get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                server.kill();
                throw new AssertionError("jiwarp client hung; guest server said: " + server.output()
                        + "\njiwarp: " + running.get(60, TimeUnit.SECONDS));
            }
            served = server.await(Duration.ofSeconds(60));
        }
        String cell = program + " -s " + (size > 0 ? size : "default") + " " + common + ", perftest server <- jiwarp "
                + "client " + extra;
        assertEquals(0, client.exit(), () -> client + "\n--- guest:\n" + served + dmesgTail());
        assertEquals(0, served.exitCode(), () -> served + "\n--- jiwarp:\n" + client + dmesgTail());
        checkReport(program, size, served.output(), "perftest server", false);
        checkReport(program, size, client.out(), "jiwarp client", true);
        assertTrue(client.err().contains("done with perftest"), client::toString);
        checkMpa(program, extra, client, false);
        if (common.contains("-r 30")) {
            // siw's server returns credit every 10 receives; jiwarp's client must have waited for it.
            assertTrue(client.err().matches("(?s).*waited [1-9][0-9]* times for credit.*"), client::toString);
        }
        record(cell, start, client.err());
    }

    /** {@code jiwarp perftest} server on the host, perftest's client in the guest at 10.0.2.2. */
    @ParameterizedTest(name = "{0} -R -s {2} {3} client in the guest -> jiwarp perftest {1} {4} server")
    @MethodSource("cells")
    void perftestClientAgainstJiwarpServer(String program, String test, int size, String common, String extra)
            throws Exception {
        withFreshGuestOnHang(program + " " + size + " " + common + " jiwarp server " + extra,
                () -> jiwarpServer(program, test, size, common, extra));
    }

    private static void jiwarpServer(String program, String test, int size, String common, String extra)
            throws Exception {
        long start = System.nanoTime();
        int port = freePort();
        List<Object> args = new ArrayList<>(List.of("perftest"));
        args.addAll(Arrays.asList(test.split(" ")));
        args.addAll(List.of("-n", ITERS, "-p", port, "--bind", "127.0.0.1", "--timeout", 60, "--accept-timeout", 120));
        if (size > 0) {
            args.addAll(List.of("-s", size));
        }
        args.addAll(options(common, extra));
        CompletableFuture<Run> server = Run.start(args.toArray());
        Run.awaitListening(port, Duration.ofSeconds(30));
        ExecResult client = peer.run(program + PERFTEST_OPTIONS + " -p " + port + (size > 0 ? " -s " + size : "")
                + (common.isEmpty() ? "" : " " + common) + " " + SiwPeer.HOST_ADDRESS, RUN_LIMIT);
        Run served = server.get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
        String cell = program + " -s " + (size > 0 ? size : "default") + " " + common + ", jiwarp server " + extra
                + " <- perftest client";
        assertEquals(0, client.exitCode(), () -> client + "\n--- jiwarp:\n" + served + dmesgTail());
        assertEquals(0, served.exit(), () -> served + "\n--- guest:\n" + client + dmesgTail());
        checkReport(program, size, client.output(), "perftest client", false);
        // ib_write_bw's and ib_read_bw's server prints the client's figures (perftest's, see PERFTEST_OPTIONS).
        boolean own = program.equals("ib_send_bw") || program.equals("ib_write_lat");
        checkReport(program, size, served.out(), "jiwarp server", own);
        assertTrue(served.err().contains("done with perftest"), served::toString);
        checkMpa(program, extra, served, true);
        if (common.contains("-r 30")) {
            assertTrue(served.err().contains("30 credit Writes completed"), served::toString);
        }
        record(cell, start, served.err());
    }

    /**
     * One 64 KiB run of 1000 iterations each way, both ends' reports side by side (printed, for the
     * record). In ib_write_bw the client measures and sends its figures to the server, which prints
     * them: so both ends must print the same line, whichever end is jiwarp, and its figures must
     * parse. In ib_send_bw the server times its own receives (from the first to the last; no
     * peak, as perftest): the two ends measure the same run independently, over nearly the same
     * stretch (the client from its first post to its last completion, the server from its first
     * receive to its last), so their averages and message rates must agree within a factor of two,
     * a tolerance far wider than the run-to-run noise (they agreed within 1 % here, both ways) and
     * narrower than a figure computed wrongly (a unit, a size or an iteration count off). No figure
     * is compared with a wall-clock expectation.
     */
    @Test
    void bothEndsReportTheSameRun() throws Exception {
        withFreshGuestOnHang("figures at both ends", SiwPerftestInteropTest::bothEndsReport);
    }

    private static void bothEndsReport() throws Exception {
        // 300 of 64 KiB (19 MiB) a run, as the other interop runs: four runs of 1000 took about a minute of CI under TCG.
        int iters = 300;
        // jiwarp's client, perftest's server in the guest.
        for (String program : new String[] {"ib_write_bw", "ib_send_bw"}) {
            ExecResult served;
            Run client;
            try (SiwPeer.Background server = peer.start(program + " -R -F -n " + iters + " -p "
                    + SiwPeer.PERFTEST_PORT)) {
                peer.awaitListening(SiwPeer.PERFTEST_PORT, Duration.ofSeconds(60));
                client = Run.start("perftest", "--test", program.substring(3, program.indexOf("_bw")), "-n", iters,
                        "-p", peer.hostPort(SiwPeer.PERFTEST_PORT), "--timeout", 60, "127.0.0.1")
                        .get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
                served = server.await(Duration.ofSeconds(60));
            }
            System.out.println("=== " + program + " -R -F -n " + iters + " server in the guest:\n" + served.output()
                    + "\n=== jiwarp " + client.command() + ":\n" + client.out() + client.err());
            assertEquals(0, client.exit(), client::toString);
            assertEquals(0, served.exitCode(), served::toString);
            compareReports(program, client.out(), served.output(), program.equals("ib_write_bw"));
        }
        // perftest's client in the guest, jiwarp's server.
        for (String program : new String[] {"ib_write_bw", "ib_send_bw"}) {
            int port = freePort();
            CompletableFuture<Run> server = Run.start("perftest", "--test", program.substring(3,
                    program.indexOf("_bw")), "-n", iters, "-p", port, "--bind", "127.0.0.1", "--timeout", 60,
                    "--accept-timeout", 120);
            Run.awaitListening(port, Duration.ofSeconds(30));
            ExecResult client = peer.run(program + " -R -F -n " + iters + " -p " + port + " " + SiwPeer.HOST_ADDRESS,
                    RUN_LIMIT);
            Run served = server.get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
            System.out.println("=== " + program + " -R -F -n " + iters + " client in the guest:\n" + client.output()
                    + "\n=== jiwarp " + served.command() + ":\n" + served.out() + served.err());
            assertEquals(0, client.exitCode(), client::toString);
            assertEquals(0, served.exit(), served::toString);
            compareReports(program, client.output(), served.out(), program.equals("ib_write_bw"));
        }
    }

    /**
     * Both report lines show 64 KiB and the iterations; where the client's figures travel to the
     * server ({@code same}), the two lines' figures are equal to the printed precision.
     */
    private static void compareReports(String program, String clientOutput, String serverOutput, boolean same) {
        double[] client = reportFigures(program + " client", clientOutput);
        double[] server = reportFigures(program + " server", serverOutput);
        assertEquals(65536, client[0]);
        assertEquals(65536, server[0]);
        assertEquals(client[1], server[1], "iterations");
        assertTrue(client[3] > 0, () -> "the average in:\n" + clientOutput);
        if (same) {
            for (int i = 2; i < 5; i++) {
                assertEquals(client[i], server[i], 0.011, "figure " + i + " of the client's report, printed by both:\n"
                        + clientOutput + "\n---\n" + serverOutput);
            }
        } else {
            for (int i = 3; i < 5; i++) {
                double ratio = server[i] / client[i];
                assertTrue(ratio > 0.5 && ratio < 2, "figure " + i + ": the server's " + server[i] + " against the "
                        + "client's " + client[i] + ":\n" + clientOutput + "\n---\n" + serverOutput);
            }
        }
    }

    private static double[] reportFigures(String who, String output) {
        Matcher m = BW_LINE.matcher(output);
        assertTrue(m.find(), () -> who + ": no report line in:\n" + output);
        String[] fields = m.group().trim().split("\\s+");
        double[] figures = new double[5];
        for (int i = 0; i < 5; i++) {
            figures[i] = Double.parseDouble(fields[i].replace("nan", "NaN").replace("inf", "Infinity"));
        }
        return figures;
    }

    /** The report line shows the size and iterations asked for; jiwarp's, positive figures too. */
    private static void checkReport(String program, int size, String output, String who, boolean figures) {
        boolean latency = program.endsWith("_lat");
        int expectedSize = size > 0 ? size : latency ? 2 : 65536;
        Matcher m = (latency ? LAT_LINE : BW_LINE).matcher(output);
        assertTrue(m.find(), () -> who + ": no " + program + " report line in:\n" + output);
        assertEquals(expectedSize, Integer.parseInt(m.group(1)), () -> who + " report size:\n" + output);
        assertEquals(ITERS, Integer.parseInt(m.group(2)), () -> who + " report iterations:\n" + output);
        if (figures) {
            String[] fields = m.group().trim().split("\\s+");
            for (int i = 2; i < fields.length; i++) {
                double value = Double.parseDouble(fields[i]);
                // ib_send_bw's server reports no peak (0), as perftest's does.
                boolean noPeak = !latency && i == 2 && program.equals("ib_send_bw") && who.contains("server");
                assertTrue(noPeak || value > 0 && Double.isFinite(value),
                        () -> who + ": figure " + value + " in:\n" + output);
            }
        }
    }

    /** A figure as perftest prints it, 0, nan or inf included. */
    private static final class Figure {
        static final String RE = "(?:-?[\\d.]+|-?nan|-?inf)";
    }

    /**
     * Both connections negotiated what jiwarp asked for: CRC (siw honours C), P2P (siw picks the
     * Write RTR). And the IRD/ORD perftest uses: its Requests carry 0/0, so jiwarp's server ends up
     * with 0/0, except on ib_read_bw's test connection (128/128, siw's maximum); siw's server
     * answers jiwarp's 1/1 (128/128 for reads) with the same.
     */
    private static void checkMpa(String program, String extra, Run jiwarp, boolean server) {
        List<String> connections = jiwarp.err().lines().filter(l -> l.contains("connection up: MPA rev ")).toList();
        assertEquals(2, connections.size(), jiwarp::toString);
        for (String line : connections) {
            assertTrue(line.contains(", CRC") == extra.contains("--crc"), line);
            assertTrue(line.contains("peer-to-peer (WRITE RTR)") == extra.contains("--p2p"), line);
            boolean reads = program.equals("ib_read_bw") && line.contains("test connection");
            String ordIrd = reads ? "IRD 128 / ORD 128" : server ? "IRD 0 / ORD 0" : "IRD 1 / ORD 1";
            assertTrue(line.contains(ordIrd), () -> "expected " + ordIrd + ": " + line);
        }
    }

    private static List<Object> options(String common, String extra) {
        List<Object> options = new ArrayList<>();
        for (String part : (common + " " + extra).trim().split("\\s+")) {
            if (!part.isEmpty()) {
                options.add(part);
            }
        }
        return options;
    }

    private static String dmesgTail() {
        try {
            List<String> lines = peer.dmesg().lines().toList();
            return "\n--- guest dmesg (tail):\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 20),
                    lines.size()));
        } catch (RuntimeException e) {
            return "\n(no dmesg: " + e.getMessage() + ")";
        }
    }

    private static void record(String cell, long start, String jiwarpErr) {
        String checks = jiwarpErr.lines().filter(l -> l.contains("done with perftest")).findFirst().orElse("")
                .replaceFirst(".*done with perftest [^:]*: ", "");
        synchronized (MATRIX) {
            MATRIX.add(String.format("%-64s ok %5.1f s  %s", cell, (System.nanoTime() - start) / 1e9, checks));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** {@code jiwarp ...} run in this JVM: exit code and output. */
    record Run(String command, int exit, String out, String err) {

        static CompletableFuture<Run> start(Object... args) {
            String[] strings = Arrays.stream(args).map(Object::toString).toArray(String[]::new);
            CompletableFuture<Run> run = new CompletableFuture<>();
            Thread thread = new Thread(() -> {
                try {
                    StringWriter out = new StringWriter();
                    StringWriter err = new StringWriter();
                    CommandLine line = Jiwarp.commandLine();
                    line.setOut(new PrintWriter(out, true));
                    line.setErr(new PrintWriter(err, true));
                    int exit = line.execute(strings);
                    run.complete(new Run("jiwarp " + String.join(" ", strings), exit, out.toString(), err.toString()));
                } catch (Throwable t) {
                    run.completeExceptionally(t);
                }
            }, "jiwarp-perftest");
            thread.setDaemon(true);
            thread.start();
            return run;
        }

        /** Waits until something listens on 127.0.0.1:{@code port}. */
        static void awaitListening(int port, Duration limit) throws InterruptedException {
            long deadline = System.nanoTime() + limit.toNanos();
            while (true) {
                try (java.net.Socket probe = new java.net.Socket()) {
                    probe.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                    return;
                } catch (IOException e) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new AssertionError("nothing listens on 127.0.0.1:" + port);
                    }
                    Thread.sleep(50);
                }
            }
        }

        @Override
        public String toString() {
            return "`" + command + "`: exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }
}
