package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The Linux kernel NFS client in the siw guest against {@code jiwarp nfs serve} on the host, over
 * RPC-over-RDMA (siw in the guest, jiwarp's RNIC on the host) and over RPC on TCP: the guest mounts
 * {@code 10.0.2.2:DIR} (QEMU's user network puts the host's 127.0.0.1 there) with NFSv3, MOUNT
 * over TCP at the server's port and no lock manager, so nothing asks a portmapper, which the host
 * does not run. Over each transport:
 *
 * <ul>
 *   <li>a tree of 1000 small files (a tenth of them about 18 KiB, so that WRITEs and READs take chunks)
 *       in ten directories goes in by {@code cp -r}; after a remount, {@code ls -lR} counts every
 *       entry and their sizes, the checksum of every file is the same in the guest's source and
 *       in the served directory as the host reads it, and the 18 KiB files read back through the
 *       mount have theirs;
 *   <li>rename in a directory and across two, remove, mkdir, rmdir and {@code rm -r}, each seen
 *       in the served directory;
 *   <li>a 64 MiB file from {@code /dev/urandom} written and, after a remount, read back: SHA-256
 *       the same in the guest and on the host; the rates are printed, never asserted;
 *   <li>the server stopped in the middle of a read of that file's first 32 MiB (the reader blocked
 *       while it is gone) and started again on the same ports and directory: the hard mount's read
 *       completes with the right checksum;
 *   <li>{@code fio}: random reads and writes of 64 KiB with {@code direct=1} and
 *       {@code verify=crc32c} on 16 MiB for at most 15 s, no verify error.
 * </ul>
 *
 * <p>The RDMA run's tree and rename steps are captured ({@code target/nfs-captures/jiwarp-nfs-serve-rdma.pcap}):
 * jiwarp's decode agrees with tshark's field by field and {@code jiwarp check} finds nothing in it.
 * The capture stops before the 64 MiB file: that run alone would make it some 150 MB, minutes of
 * comparison in CI for no field that the tree's WRITE and READ chunks do not already show.
 */
@Tag("siw")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SiwNfsServeTest {

    private static final int BIG = 64 << 20;
    private static final int FILES = 1000;
    /** How much of the 64 MiB file the read across the server's restart takes: its first half. */
    private static final int RESTART_READ = 32 << 20;
    private static final int DIRECTORIES = 10;
    private static final String MNT = "/mnt/j";
    /** The tree as the guest makes it, in its own memory. */
    private static final String SOURCE = "/tmp/tree";
    private static final Pattern SECONDS = Pattern.compile("(write|read) ([0-9.]+) s");
    /** The serving line: "serving DIR: NFSv3 over RDMA on H:P, over TCP on H:T, MOUNT on TCP H:M (...)". */
    private static final Pattern PORTS = Pattern.compile("(over RDMA on|, over TCP on|MOUNT on TCP|MOUNT over TCP on) \\S+:(\\d+)");

    /** The two transports, the same script over each. */
    enum Transport {
        RDMA, TCP;

        String dir() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static SiwPeer guest;
    private static Path pcap;
    private static Path export;
    private static JiwarpCommand.Started server;
    private static int rdmaPort;
    private static int tcpPort;
    private static int mountPort;
    private static Map<String, String> sourceSums;
    private static long sourceOctets;
    private static final List<String> rates = new ArrayList<>();

    @BeforeAll
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    static void bootAndServe() throws Exception {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        Path captures = Files.createDirectories(Path.of("target", "nfs-captures"));
        pcap = captures.resolve("jiwarp-nfs-serve-rdma.pcap");
        export = Files.createDirectories(Path.of("target", "nfs-serve")).toAbsolutePath().resolve("export");
        deleteTree(export);
        Files.createDirectories(export);
        serve(0, 0, 0);
        guest = SiwPeer.builder().image(SiwPeerImage.ensureNfsBuilt()).memoryMb(1024).pcap(pcap).boot();
        System.out.println("guest booted in " + guest.bootTime().toMillis() + " ms (" + guest.accel() + ")");
        // The tree to copy in: 1000 files in ten directories, made by one awk in the guest (a
        // process per file costs seconds under TCG); every tenth file about 18 KiB, the others under 2 KiB.
        guest.run("rm -rf " + SOURCE + " && i=0; while [ $i -lt " + DIRECTORIES + " ]; do mkdir -p " + SOURCE
                + "/d$i; i=$((i+1)); done && awk 'BEGIN { srand(24); for (i = 0; i < " + FILES + "; i++) {"
                + " f = \"" + SOURCE + "/d\" int(i / " + (FILES / DIRECTORIES) + ") \"/f\" i;"
                + " n = (i % 10 == 0) ? 1024 : 1 + int(rand() * 50);"
                + " for (j = 0; j < n; j++) printf \"%d %d %.6f\\n\", i, j, rand() > f; close(f) } }'",
                Duration.ofSeconds(60)).orThrow();
        sourceSums = sums(guest.run("cd " + SOURCE + " && find . -type f | sort | xargs sha256sum",
                Duration.ofSeconds(60)).orThrow().output());
        assertEquals(FILES, sourceSums.size(), "files in the guest's tree");
        sourceOctets = Long.parseLong(guest.run("find " + SOURCE + " -type f | xargs cat | wc -c", Duration.ofSeconds(60))
                .orThrow().output().strip());
    }

    @AfterAll
    static void shutDown() throws Exception {
        try {
            if (guest != null) {
                System.out.println("guest kernel log, NFS and RPC lines:\n" + guest.run("dmesg | grep -iE 'nfs|rpc|siw' "
                        + "| tail -n 40", Duration.ofSeconds(30)).output());
                guest.close();
            }
        } finally {
            if (server != null) {
                JiwarpCommand.Run last = server.stop(Duration.ofSeconds(30));
                System.out.println("the last jiwarp nfs serve printed:\n" + last.err());
            }
        }
        System.out.println("Linux kernel NFSv3 client in the siw guest (TCG) against jiwarp nfs serve on the host, "
                + BIG / (1 << 20) + " MiB, MB/s:\n" + String.join("\n", rates));
    }

    // ------------------------------------------------------------------------------------------
    // RDMA

    @Test
    @Order(1)
    void rdmaTreeCopiedInListedAndChecksummed() {
        treeCopiedInListedAndChecksummed(Transport.RDMA);
    }

    @Test
    @Order(2)
    void rdmaRenameRemoveMkdirRmdir() throws IOException {
        renameRemoveMkdirRmdir(Transport.RDMA);
    }

    /**
     * The capture of the RDMA run so far (the tree and the renames): jiwarp reads it as tshark
     * does and {@code jiwarp check} finds nothing: every RDMA Read Request and Write of jiwarp's
     * server inside a chunk the kernel client advertised, each Send with Invalidate naming a handle
     * of the call it answers, the client's calls within jiwarp's credits.
     */
    @Test
    @Order(3)
    void rdmaCaptureDecodesAsTsharkDoesAndChecksClean() throws Exception {
        guest.stopPcap();
        CaptureDecode decode = NfsGuest.decodedAsTsharkDoesAndClean(pcap);
        long headers = decode.pdus().stream().filter(p -> p.fields().containsKey("rpcordma.xid")).count();
        long reads = decode.pdus().stream().filter(p -> p.summary().contains("Read Request")).count();
        long writes = decode.pdus().stream().filter(p -> "0x00".equals(p.fields().get("iwarp_rdma.opcode"))).count();
        System.out.println(pcap.getFileName() + ": " + Files.size(pcap) + " octets, " + decode.pdus().size() + " PDUs, "
                + headers + " RPC-over-RDMA headers, " + reads + " Read Request segments, " + writes
                + " Write segments; no mismatch, no finding");
        assertTrue(headers > 0 && reads > 0 && writes > 0,
                "the capture shows no NFS over RDMA with chunks pulled and pushed by the server: " + pcap);
    }

    @Test
    @Order(4)
    void rdmaBigFileWrittenAndReadBack() throws Exception {
        bigFileWrittenAndReadBack(Transport.RDMA);
    }

    @Test
    @Order(5)
    void rdmaReadSurvivesAServerRestart() throws Exception {
        readSurvivesAServerRestart(Transport.RDMA);
    }

    @Test
    @Order(6)
    void rdmaFioVerifies() {
        fioVerifies(Transport.RDMA);
    }

    // ------------------------------------------------------------------------------------------
    // TCP

    @Test
    @Order(11)
    void tcpTreeCopiedInListedAndChecksummed() {
        treeCopiedInListedAndChecksummed(Transport.TCP);
    }

    @Test
    @Order(12)
    void tcpRenameRemoveMkdirRmdir() throws IOException {
        renameRemoveMkdirRmdir(Transport.TCP);
    }

    @Test
    @Order(14)
    void tcpBigFileWrittenAndReadBack() throws Exception {
        bigFileWrittenAndReadBack(Transport.TCP);
    }

    @Test
    @Order(15)
    void tcpReadSurvivesAServerRestart() throws Exception {
        readSurvivesAServerRestart(Transport.TCP);
    }

    @Test
    @Order(16)
    void tcpFioVerifies() {
        fioVerifies(Transport.TCP);
    }

    // ------------------------------------------------------------------------------------------

    /**
     * The mount command: NFSv3 to the server's port for the transport, MOUNT version 3 over TCP at
     * its port, no NLM (nolock): with every port and version given, mount.nfs asks no portmapper
     * and the kernel pings NULL at the ports given. Hard (the default), so a server restart is
     * waited out.
     */
    private static String mount(Transport transport) {
        String proto = transport == Transport.RDMA ? "proto=rdma,port=" + rdmaPort : "proto=tcp,port=" + tcpPort;
        return "mkdir -p " + MNT + " && mount -t nfs -o vers=3," + proto + ",mountvers=3,mountproto=tcp,mountport="
                + mountPort + ",nolock,hard,timeo=100 " + SiwPeer.HOST_ADDRESS + ":" + export + " " + MNT;
    }

    /**
     * Mounts, makes the transport's directory in the export, runs {@code script} (with {@code set -e}:
     * one command a line, as a failing command in a {@code &&} chain does not end the script),
     * unmounts; the mount line is checked.
     */
    private static ExecResult mounted(Transport transport, String script, Duration timeout) {
        ExecResult result = guest.run(String.join("\n",
                "set -e",
                "umount " + MNT + " 2>/dev/null || true",
                mount(transport),
                "grep ' " + MNT + " ' /proc/mounts",
                "mkdir -p " + MNT + "/" + transport.dir(),
                script,
                "umount " + MNT), timeout);
        if (!result.succeeded()) {
            throw new AssertionError("over " + transport + ": " + result + "\n--- guest kernel log, last lines:\n"
                    + guest.run("dmesg | tail -n 30", Duration.ofSeconds(30)).output());
        }
        String mounted = result.output().lines().filter(l -> l.contains(" " + MNT + " nfs ")).findFirst().orElse("");
        String proto = transport == Transport.RDMA ? "proto=rdma,port=" + rdmaPort : "proto=tcp,port=" + tcpPort;
        assertTrue(mounted.contains(proto) && mounted.contains("vers=3"), "not mounted as asked: " + mounted);
        return result;
    }

    private static void treeCopiedInListedAndChecksummed(Transport transport) {
        String root = MNT + "/" + transport.dir();
        mounted(transport, "cp -r " + SOURCE + " " + root + "/tree", Duration.ofSeconds(150));
        // After a remount (and the page cache dropped) every listing and read comes from the server.
        guest.run("echo 3 > /proc/sys/vm/drop_caches", Duration.ofSeconds(30)).orThrow();
        ExecResult seen = mounted(transport, String.join("\n",
                "ls -lR " + root + "/tree > /tmp/ls-lR",
                "echo \"files $(grep -c '^-' /tmp/ls-lR)\"",
                "echo \"directories $(grep -c '^d' /tmp/ls-lR)\"",
                "echo \"octets $(awk '/^-/ { n += $5 } END { print n }' /tmp/ls-lR)\"",
                // The hundred 18 KiB files read back through the mount: READs answered in Write chunks.
                "cd " + root + "/tree", "find . -type f -name 'f*0' | sort | xargs sha256sum", "cd /"),
                Duration.ofSeconds(150));
        assertTrue(seen.output().contains("\nfiles " + FILES + "\n"), () -> "ls -lR over " + transport + ": " + seen);
        assertTrue(seen.output().contains("\ndirectories " + DIRECTORIES + "\n"), () -> "ls -lR over " + transport + ": " + seen);
        assertTrue(seen.output().contains("\noctets " + sourceOctets + "\n"), () -> "ls -lR's sizes over " + transport
                + " (" + sourceOctets + " octets in the source): " + seen);
        Map<String, String> large = new TreeMap<>(sourceSums);
        large.keySet().removeIf(name -> !name.endsWith("0"));
        assertSameSums(large, sums(seen.output()), "the 18 KiB files read back through the mount over " + transport);
        assertSameSums(sourceSums, hostSums(export.resolve(transport.dir()).resolve("tree")),
                "the served directory (the host's view) against the guest's tree after cp -r over " + transport);
    }

    private static void renameRemoveMkdirRmdir(Transport transport) throws IOException {
        String root = MNT + "/" + transport.dir();
        mounted(transport, String.join("\n",
                "cd " + root + "/tree",
                "mv d0/f0 d0/renamed-f0",
                "mv d1/f100 d2/moved-f100",
                "rm d3/f300",
                "mkdir d3/new d3/new/sub",
                "rmdir d3/new/sub",
                "mkdir d4/gone",
                "rmdir d4/gone",
                "rm -r d9",
                "ls d0 d1 d2 d3 d4 | grep -c . | sed 's/^/listed /'",
                "cd /"), Duration.ofSeconds(90));
        Path tree = export.resolve(transport.dir()).resolve("tree");
        assertFalse(Files.exists(tree.resolve("d0/f0")), "d0/f0 still there after its rename");
        assertEquals(sourceSums.get("./d0/f0"), sha256(tree.resolve("d0/renamed-f0")), "d0/renamed-f0's content");
        assertFalse(Files.exists(tree.resolve("d1/f100")), "d1/f100 still there after its move to d2");
        assertEquals(sourceSums.get("./d1/f100"), sha256(tree.resolve("d2/moved-f100")), "d2/moved-f100's content");
        assertFalse(Files.exists(tree.resolve("d3/f300")), "d3/f300 still there after rm");
        assertTrue(Files.isDirectory(tree.resolve("d3/new")), "d3/new not made");
        assertFalse(Files.exists(tree.resolve("d3/new/sub")), "d3/new/sub still there after rmdir");
        assertFalse(Files.exists(tree.resolve("d4/gone")), "d4/gone still there after rmdir");
        assertFalse(Files.exists(tree.resolve("d9")), "d9 still there after rm -r");
        Map<String, String> expected = new TreeMap<>(sourceSums);
        expected.put("./d0/renamed-f0", expected.remove("./d0/f0"));
        expected.put("./d2/moved-f100", expected.remove("./d1/f100"));
        expected.remove("./d3/f300");
        expected.keySet().removeIf(name -> name.startsWith("./d9/"));
        assertSameSums(expected, hostSums(tree), "the served tree after the renames and removals over " + transport);
    }

    private static void bigFileWrittenAndReadBack(Transport transport) throws Exception {
        String file = MNT + "/" + transport.dir() + "/big";
        String timed = "timed() { t0=$(cut -d' ' -f1 /proc/uptime); \"$@\" >/dev/null 2>&1; "
                + "t1=$(cut -d' ' -f1 /proc/uptime); awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { printf \"%.3f\", b - a }'; }";
        guest.run("dd if=/dev/urandom of=/tmp/big bs=1048576 count=" + (BIG >> 20) + " 2>/dev/null",
                Duration.ofSeconds(60)).orThrow();
        ExecResult write = mounted(transport, timed + "\necho \"write $(timed dd if=/tmp/big of=" + file
                + " bs=1048576 conv=fsync) s\"", Duration.ofSeconds(120));
        String source = guest.run("sha256sum /tmp/big && rm /tmp/big", Duration.ofSeconds(60)).orThrow().output();
        assertEquals(firstWord(source), sha256(export.resolve(transport.dir()).resolve("big")),
                "the served file after the guest wrote it over " + transport);
        guest.run("echo 3 > /proc/sys/vm/drop_caches", Duration.ofSeconds(30)).orThrow();
        ExecResult read = mounted(transport, timed + "\necho \"read $(timed dd if=" + file
                + " of=/tmp/back bs=1048576) s\"", Duration.ofSeconds(120));
        String back = guest.run("sha256sum /tmp/back && rm /tmp/back", Duration.ofSeconds(60)).orThrow().output();
        assertEquals(firstWord(source), firstWord(back), "the file read back over " + transport);
        rates.add(String.format(Locale.ROOT, "  %s: write %.1f, read %.1f", transport, rate(write), rate(read)));
        System.out.println(rates.get(rates.size() - 1));
    }

    /**
     * The server goes while the guest reads the first half of the 64 MiB file (4 MiB at a time, a pause
     * between, so the read is still going when the server stops) and comes back on the same ports
     * and directory: the reader waits while it is gone and then reads on to the end.
     */
    private static void readSurvivesAServerRestart(Transport transport) throws Exception {
        String file = MNT + "/" + transport.dir() + "/big";
        String expected = sha256(export.resolve(transport.dir()).resolve("big"), RESTART_READ);
        guest.run("echo 3 > /proc/sys/vm/drop_caches; umount " + MNT + " 2>/dev/null; rm -f /tmp/progress; "
                + mount(transport), Duration.ofSeconds(60)).orThrow();
        try (SiwPeer.Background reader = guest.start("i=0; while [ $i -lt " + (RESTART_READ >> 20) / 4 + " ]; do dd if=" + file
                + " bs=4194304 skip=$i count=1 2>/dev/null; i=$((i+1)); echo $((i*4)) > /tmp/progress; sleep 0.2; done"
                + " | sha256sum")) {
            awaitProgress(8, Duration.ofSeconds(60));
            JiwarpCommand.Run stopped = server.stop(Duration.ofSeconds(30));
            assertEquals(0, stopped.exit(), stopped::toString);
            Thread.sleep(2000);
            int during = progress();
            assertTrue(during < (RESTART_READ >> 20) && !reader.isDone(),
                    "the read was over before the server came back (" + during + " MiB): nothing was waited out");
            serve(rdmaPort, tcpPort, mountPort);
            ExecResult read = reader.await(Duration.ofSeconds(120));
            assertTrue(read.succeeded(), () -> "the read across the restart over " + transport + ": " + read
                    + "\n--- guest kernel log:\n" + guest.run("dmesg | tail -n 30", Duration.ofSeconds(30)).output());
            assertEquals(expected, firstWord(read.output()), "the file read across the restart over " + transport);
            System.out.println(transport + ": the server stopped after " + during + " MiB read; read on to the end "
                    + "once it was back, checksum right");
        } finally {
            guest.run("umount " + MNT, Duration.ofSeconds(60));
        }
    }

    private static void fioVerifies(Transport transport) {
        String root = MNT + "/" + transport.dir();
        ExecResult fio = mounted(transport, "fio --name=randrw --directory=" + root + " --filename=fio.dat --size=16m"
                + " --rw=randrw --bs=64k --ioengine=psync --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 --runtime=15"
                + " --numjobs=1\nrm " + root + "/fio.dat", Duration.ofSeconds(150));
        assertTrue(fio.output().contains("err= 0"), () -> "fio over " + transport + ": " + fio);
        // fio's verify errors: "verify: bad magic header ...", "crc32c: verify failed at file ...".
        assertFalse(fio.output().matches("(?s).*(bad magic|bad header|verify failed|verify type mismatch).*"),
                () -> "fio over " + transport + ": " + fio);
    }

    // ------------------------------------------------------------------------------------------

    /** Starts {@code jiwarp nfs serve} on the export with these ports (0: any) and takes the bound ones. */
    private static void serve(int rdma, int tcp, int mount) throws InterruptedException {
        server = JiwarpCommand.start("nfs", "serve", export, "--port", rdma, "--tcp-port", tcp, "--mount-port", mount);
        server.awaitErr("serving ", Duration.ofSeconds(30));
        String line = server.err().lines().filter(l -> l.contains("serving ")).findFirst().orElseThrow();
        Map<String, Integer> ports = new TreeMap<>();
        Matcher m = PORTS.matcher(line.substring(line.indexOf("serving ")));
        while (m.find()) {
            ports.putIfAbsent(m.group(1), Integer.parseInt(m.group(2)));
        }
        assertEquals(3, ports.size(), "no RDMA, TCP and MOUNT port in: " + line);
        rdmaPort = ports.get("over RDMA on");
        tcpPort = ports.get(", over TCP on");
        mountPort = ports.getOrDefault("MOUNT on TCP", ports.get("MOUNT over TCP on"));
        System.out.println(line);
    }

    private static void awaitProgress(int mebibytes, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (progress() < mebibytes) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the guest read fewer than " + mebibytes + " MiB in " + timeout.toSeconds() + " s");
            }
            Thread.sleep(100);
        }
    }

    private static int progress() {
        String text = guest.run("cat /tmp/progress 2>/dev/null || echo 0", Duration.ofSeconds(30)).output().strip();
        return Integer.parseInt(text);
    }

    private static double rate(ExecResult result) {
        Matcher m = SECONDS.matcher(result.output());
        assertTrue(m.find(), result::toString);
        return BIG / 1e6 / Math.max(0.001, Double.parseDouble(m.group(2)));
    }

    /** Fails naming the first files missing, extra or with another checksum, not the whole lists. */
    private static void assertSameSums(Map<String, String> expected, Map<String, String> actual, String what) {
        List<String> differences = new ArrayList<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String got = actual.get(e.getKey());
            if (got == null) {
                differences.add(e.getKey() + " missing");
            } else if (!got.equals(e.getValue())) {
                differences.add(e.getKey() + " is " + got + ", not " + e.getValue());
            }
        }
        actual.keySet().stream().filter(name -> !expected.containsKey(name)).forEach(name -> differences.add(name + " extra"));
        assertTrue(differences.isEmpty(), () -> what + ": " + differences.size() + " of " + expected.size()
                + " files differ, first: " + differences.subList(0, Math.min(5, differences.size())));
    }

    /** {@code sha256sum}'s lines as path to checksum. */
    private static Map<String, String> sums(String output) {
        Map<String, String> sums = new TreeMap<>();
        for (String line : output.split("\n")) {
            Matcher m = Pattern.compile("([0-9a-f]{64})  (\\./.*)").matcher(line.strip());
            if (m.matches()) {
                sums.put(m.group(2), m.group(1));
            }
        }
        return sums;
    }

    /** The same list as the guest's {@code find . -type f | xargs sha256sum}, from the host's view of {@code tree}. */
    private static Map<String, String> hostSums(Path tree) {
        Map<String, String> sums = new TreeMap<>();
        try (Stream<Path> files = Files.walk(tree)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                sums.put("./" + tree.relativize(file), sha256(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sums;
    }

    private static String sha256(Path file) {
        return sha256(file, Long.MAX_VALUE);
    }

    /** SHA-256 of the first {@code length} octets of {@code file}. */
    private static String sha256(Path file, long length) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            long left = length;
            for (int n; left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0; left -= n) {
                digest.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String firstWord(String text) {
        return text.strip().split("\\s+")[0];
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
