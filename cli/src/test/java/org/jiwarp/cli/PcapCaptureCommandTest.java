package org.jiwarp.cli;

import static org.jiwarp.cli.BenchCommandTest.count;
import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --pcap} as users meet it: a run stopped with Ctrl-C (SIGINT) leaves a capture that decodes
 * and no temporary files; segments are whole, or cut to their headers plus {@code --snaplen} octets; a
 * missing directory is an error, not created.
 */
class PcapCaptureCommandTest {

    @TempDir
    Path temp;

    @Test
    void aPingStoppedWithSigintLeavesACaptureThatDecodesAndNoTemporaryFiles() throws Exception {
        int port = PingCommandTest.freePort();
        Path pcap = temp.resolve("interrupted.pcap");
        Path tmp = Files.createDirectories(temp.resolve("tmp"));
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port));
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process client = null;
        // Until the client has made 20 round trips (retrying while the server is not listening yet), 60 s at most.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            // env --default-signal=INT: a build started in the background (nohup ... &) passes SIGINT on
            // ignored, and a JVM that starts with SIGINT ignored never runs its shutdown hooks for it.
            client = new ProcessBuilder("env", "--default-signal=INT",
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Djava.io.tmpdir=" + tmp, "-cp", classPath, Jiwarp.class.getName(), "ping", "-c", "-a",
                    "127.0.0.1", "-p", String.valueOf(port), "-V", "-d", "--crc", "--pcap", pcap.toString())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(temp.resolve("client.err").toFile()).start();
            // An endless ping: wait for 20 round trips, then Ctrl-C it.
            while (client.isAlive() && !read(temp.resolve("client.err")).contains("ping 20: round trip")) {
                if (System.nanoTime() > deadline) {
                    client.destroyForcibly();
                    throw new AssertionError("the client made no 20 round trips within 60 s; it printed:\n"
                            + read(temp.resolve("client.err")));
                }
                Thread.sleep(20);
            }
            if (client.isAlive()) {
                break;
            }
            assertTrue(read(temp.resolve("client.err")).contains("refused"), read(temp.resolve("client.err")));
            assertTrue(System.nanoTime() < deadline, "the server was not listening within 60 s");
            Thread.sleep(100);
        }
        Process kill = new ProcessBuilder("kill", "-INT", String.valueOf(client.pid())).start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS), "kill -INT did not return within 10 s");
        assertEquals(0, kill.exitValue());
        if (!client.waitFor(60, TimeUnit.SECONDS)) {
            // Say where it hangs: its threads and what it printed.
            Process dump = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    String.valueOf(client.pid()), "Thread.print").redirectErrorStream(true).start();
            String threads = new String(dump.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            client.destroyForcibly();
            throw new AssertionError("the client did not stop on SIGINT; it printed:\n"
                    + read(temp.resolve("client.err")) + "\nits threads:\n" + threads);
        }
        assertEquals(0, server.get(60, TimeUnit.SECONDS).exit());

        assertTrue(Files.isRegularFile(pcap), "no capture after SIGINT");
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(List.of(), left.toList(), "temporary files left behind");
        }
        assertFalse(Files.exists(temp.resolve("interrupted.pcap.part")));
        // Ctrl-C says at once that the capture is being merged, then what was written.
        String said = read(temp.resolve("client.err"));
        long packets = PcapFile.read(pcap).records().size();
        assertTrue(said.contains("jiwarp: stopped; merging the capture into " + pcap + " ...\n"), said);
        assertTrue(said.matches("(?s).*jiwarp: wrote " + packets + " packets \\([0-9.]+ KiB\\) to "
                + java.util.regex.Pattern.quote(pcap.toString()) + "\n.*"), packets + " packets; it said:\n" + said);
        Run decoded = jiwarp("decode", pcap);
        assertEquals(0, decoded.exit(), decoded.err());
        assertTrue(decoded.out().contains("MPA Request Frame rev=2"), decoded.out());
        assertTrue(count(decoded.out(), " Write [last DDP segment]") >= 20, decoded.out());
        assertTrue(!decoded.out().contains("Bad CRC32"), decoded.out());
    }

    @Test
    void segmentsAreWholeByDefaultAndCutToTheirHeadersPlusTheSnapLength() throws Exception {
        Path cut = capturePing("cut.pcap", "--snaplen", "128");
        Path whole = capturePing("whole.pcap");
        Path wider = capturePing("wider.pcap", "--snaplen", "500");
        int truncated = 0;
        for (PcapRecord record : PcapFile.read(cut).records()) {
            int headers = PcapMerge.headers(record.data());
            assertEquals(Math.min(record.originalLength(), headers + 128), record.capturedLength(), record.toString());
            truncated += record.capturedLength() < record.originalLength() ? 1 : 0;
        }
        assertTrue(truncated >= 6, "the 1000-octet Read Responses and Writes were not cut: " + truncated);
        for (PcapRecord record : PcapFile.read(wider).records()) {
            assertEquals(Math.min(record.originalLength(), PcapMerge.headers(record.data()) + 500),
                    record.capturedLength(), record.toString());
        }
        for (PcapRecord record : PcapFile.read(whole).records()) {
            assertEquals(record.originalLength(), record.capturedLength(), record.toString());
        }
        assertEquals(128 + 14 + 40 + 60, PcapFile.read(cut).snapLength());
        assertEquals(262_144, PcapFile.read(whole).snapLength());
        // Whole segments decode completely: three pings, each with its Read Response and Write.
        Run decoded = jiwarp("decode", whole);
        assertEquals(0, decoded.exit(), decoded.err());
        assertEquals(3, count(decoded.out(), " Read Response [last DDP segment]"), decoded.out());
        assertEquals(3, count(decoded.out(), " Write [last DDP segment]"), decoded.out());
    }

    @Test
    void aMissingDirectoryIsAnErrorAndIsNotCreated() {
        Path missing = temp.resolve("no").resolve("such");
        Run run = jiwarp("ping", "-c", "-a", "127.0.0.1", "-C", "1", "--pcap", missing.resolve("x.pcap"));
        assertEquals(1, run.exit(), run.err());
        assertEquals("jiwarp ping: cannot write --pcap " + missing.resolve("x.pcap") + ": the directory " + missing
                + " does not exist\n", run.err());
        assertFalse(Files.exists(temp.resolve("no")));
        Run negative = jiwarp("ping", "-c", "-a", "127.0.0.1", "--pcap", temp.resolve("x.pcap"), "--snaplen", "-1");
        assertEquals(2, negative.exit(), negative.err());
    }

    private Path capturePing(String name, String... extra) throws Exception {
        int port = PingCommandTest.freePort();
        Path pcap = temp.resolve(name);
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() ->
                jiwarp("ping", "-s", "-a", "127.0.0.1", "-p", port));
        Object[] args = Stream.concat(Stream.of("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "3", "-S", "1000",
                "-V", "--pcap", pcap), Stream.of((Object[]) extra)).toArray();
        Run client = null;
        // Retry while the server is not listening yet (refused), for 30 s at most.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            client = jiwarp(args);
            if (client.exit() == 0 || !client.err().contains("refused") || System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        assertEquals(0, client.exit(), client.err());
        assertEquals(0, server.get(60, TimeUnit.SECONDS).exit());
        return pcap;
    }

    private static String read(Path file) throws java.io.IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
