package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.conformance.Tshark;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.PrivateData;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jiwarp nfs} (NFSv3 over RPC-over-RDMA) against the Linux kernel NFS server (nfsd with
 * svcrdma) over siw in the QEMU guest: files of 0 octets to 16 MiB put (WRITE from Read chunks)
 * and read back (READ into Write chunks) with matching SHA-256, also as the guest's sha256sum
 * sees them; a directory of 1000 entries listed (READDIR replies in Reply chunks); and the run's
 * capture ({@code target/nfs-captures}) dissected by tshark as RPC-over-RDMA and NFS, malformed
 * only where Wireshark 4.0 cannot put a Write chunk's data back into a READ reply.
 */
@Tag("siw")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SiwNfsInteropTest {

    /**
     * The largest file: 16 MiB, as {@link SiwNfsTwoGuestsTest} moves; 64 MiB made the capture 150 MB
     * and its comparison with tshark two minutes of CI without a field more to compare.
     */
    private static final int LARGEST = 16 << 20;
    private static final int[] SIZES = {0, 1, 4096, 1 << 20, LARGEST};

    private static SiwPeer peer;
    private static Path pcap;
    private static String export;
    /** What jiwarp nfs printed for the largest put and cat, for the figure beside the kernel client. */
    private static String jiwarpFigure = "";

    @BeforeAll
    static void boot() throws IOException {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        Path captures = Files.createDirectories(Path.of("target", "nfs-captures"));
        pcap = captures.resolve("jiwarp-nfs3-siw.pcap");
        peer = SiwPeer.builder().image(SiwPeerImage.ensureNfsBuilt()).memoryMb(768).pcap(pcap)
                .forward(NfsGuest.RDMA_PORT).forward(NfsGuest.MOUNT_PORT).boot();
        // The NFS variant of the guest serves: nfsd on 20049 over svcrdma on siw0, rpc.mountd on TCP 20048.
        ExecResult serve = peer.run("jw-nfs-serve", Duration.ofSeconds(60));
        assertTrue(serve.succeeded() && serve.output().contains("rdma 20049"), serve::toString);
        peer.awaitListening(NfsGuest.RDMA_PORT, Duration.ofSeconds(30));
        peer.awaitListening(NfsGuest.MOUNT_PORT, Duration.ofSeconds(30));
        export = "127.0.0.1:" + NfsGuest.EXPORT;
    }

    @AfterAll
    static void shutDown() {
        if (peer != null) {
            peer.close();
        }
    }

    @Test
    @Order(1)
    void putsAndReadsBackFilesOfEverySize(@TempDir Path dir) throws Exception {
        Random random = new Random(17);
        for (int size : SIZES) {
            byte[] content = new byte[size];
            random.nextBytes(content);
            Path local = dir.resolve("file-" + size);
            Files.write(local, content);
            String remote = export + "/file-" + size;

            JiwarpCommand.Run put = nfs("put", local, remote);
            assertEquals(0, put.exit(), put::toString);
            assertTrue(put.err().contains("wrote " + size + " octets"), put::toString);

            JiwarpCommand.Run stat = nfs("stat", remote);
            assertEquals(0, stat.exit(), stat::toString);
            assertTrue(stat.out().contains("Size: " + size + "\n"), stat::toString);

            Path back = dir.resolve("back-" + size);
            // The 4 KiB read is also recorded by jiwarp's own --pcap, as the host sees it.
            JiwarpCommand.Run cat = size == 4096 ? nfs("cat", remote, "-o", back, "--pcap", ownCapture())
                    : nfs("cat", remote, "-o", back);
            assertEquals(0, cat.exit(), cat::toString);
            assertArrayEquals(sha256(content), sha256(Files.readAllBytes(back)), "file-" + size + " read back");
            System.out.print(put.err() + cat.err());
            if (size == SIZES[SIZES.length - 1]) {
                jiwarpFigure = put.err() + cat.err();
            }

            ExecResult guest = peer.run("sha256sum " + NfsGuest.EXPORT + "/file-" + size).orThrow();
            assertTrue(guest.output().startsWith(HexFormat.of().formatHex(sha256(content))),
                    "file-" + size + " as the guest sees it: " + guest);
        }
    }

    @Test
    @Order(2)
    void listsADirectoryOfAThousandEntries() {
        peer.run("mkdir -p " + NfsGuest.EXPORT + "/many && cd " + NfsGuest.EXPORT + "/many && i=0; "
                + "while [ $i -lt 1000 ]; do : > entry-$i; i=$((i+1)); done", Duration.ofSeconds(120)).orThrow();
        JiwarpCommand.Run ls = nfs("ls", export + "/many");
        assertEquals(0, ls.exit(), ls::toString);
        List<String> names = Arrays.asList(ls.out().split("\n"));
        assertEquals(1000, names.size(), () -> "entries listed: " + names.size());
        for (int i = 0; i < 1000; i++) {
            assertTrue(names.contains("entry-" + i), "entry-" + i + " missing");
        }
    }

    /**
     * The transport as the kernel server runs it: its RFC 8797 private data, its credit grant, and
     * Send with Invalidate of the Write chunk's handle on every READ reply (jiwarp offers Remote
     * Invalidation), each handle one the call advertised (the client checks that).
     */
    @Test
    @Order(3)
    void svcrdmaGrantsCreditsAndInvalidatesTheCallsHandles() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (Rnic rnic = Rnic.open(); Nfs3Client nfs = Nfs3Client.mount(rnic,
                new InetSocketAddress(loopback, peer.hostPort(NfsGuest.MOUNT_PORT)),
                new InetSocketAddress(loopback, peer.hostPort(NfsGuest.RDMA_PORT)), NfsGuest.EXPORT, 1 << 20, 1 << 20,
                RpcRdmaClient.Options.defaults())) {
            PrivateData server = rdma(nfs).serverPrivateData();
            assertTrue(server != null && server.version() == 1, "svcrdma's private data: " + server);
            byte[] fh = nfs.lookup(nfs.root(), "file-4096");
            assertTrue(rdma(nfs).granted() > 1, "credits granted: " + rdma(nfs).granted());
            long before = rdma(nfs).remoteInvalidations();
            ByteBuf sink = Unpooled.buffer();
            nfs.read(fh, 0, 4096, sink);
            assertEquals(4096, sink.readableBytes());
            sink.release();
            assertEquals(before + 1, rdma(nfs).remoteInvalidations(), "a READ reply by Send with Invalidate");
        }
    }

    /** tshark dissects the run as RPC-over-RDMA carrying NFS, malformed only on READ replies (Wireshark 4.0). */
    @Test
    @Order(4)
    void tsharkDissectsRpcOverRdmaAndNfsInTheCapture() throws Exception {
        Path tshark = Tshark.required();
        String calls = tshark(tshark, "-Y", "rpcordma && nfs", "-T", "fields", "-e", "nfs.procedure_v3", "-e", "rpc.msgtyp");
        for (String procedure : new String[] {"6", "7", "8", "16"}) { // READ, WRITE, CREATE, READDIR
            assertTrue(calls.lines().anyMatch(l -> l.startsWith(procedure + "\t") || l.startsWith(procedure + ",")),
                    "no NFS procedure " + procedure + " inside RPC-over-RDMA in " + pcap);
        }
        String nomsg = tshark(tshark, "-Y", "rpcordma.msg_type == 1 && rpcordma.reply_count > 0");
        assertTrue(!nomsg.isBlank(), "no RDMA_NOMSG reply with a Reply chunk in " + pcap);
        // Connections that reuse an earlier one's ports are malformed to tshark (FieldComparison, Tshark.reusedStreams).
        List<Integer> reused = Tshark.reusedStreams(tshark, pcap);
        String malformed = tshark(tshark, "-Y", "_ws.malformed && !(nfs.procedure_v3 == 6 && rpc.msgtyp == 1)"
                + (reused.isEmpty() ? "" : " && !(" + Tshark.inStreams(reused) + ")"));
        assertTrue(malformed.isBlank(), "malformed frames other than READ replies:\n" + malformed);

        String own = tshark(tshark, ownCapture(), "-Y", "rpcordma", "-T", "fields", "-e", "rpcordma.msg_type",
                "-e", "nfs.procedure_v3", "-e", "rpcordma.writes_count");
        assertTrue(own.lines().anyMatch(l -> l.matches("0\t6\t1")),
                "jiwarp's own capture of cat has no READ call with a Write chunk:\n" + own);
    }

    /**
     * jiwarp reads the same capture as tshark does, field by field (iWARP, {@code rpcordma.*} and
     * CRC verdicts), and {@code jiwarp check} finds nothing in it: every RDMA Read Request and Write
     * of svcrdma inside a chunk jiwarp advertised, each Send with Invalidate naming a handle of the
     * call it answers, jiwarp's calls in flight within svcrdma's credits. The same for jiwarp's own
     * {@code --pcap} of a 4 KiB cat.
     */
    @Test
    @Order(5)
    void jiwarpDecodesTheRunAsTsharkDoesAndChecksItClean() throws Exception {
        for (Path capture : List.of(pcap, ownCapture())) {
            CaptureDecode decode = NfsGuest.decodedAsTsharkDoesAndClean(capture);
            long headers = decode.pdus().stream().filter(p -> p.fields().containsKey("rpcordma.xid")).count();
            long invalidations = decode.pdus().stream().filter(p -> p.summary().contains("Send with Invalidate")).count();
            System.out.println(capture.getFileName() + ": " + decode.pdus().size() + " PDUs, " + headers
                    + " RPC-over-RDMA headers, " + invalidations + " Send with Invalidate segments; no mismatch, "
                    + "no finding");
            assertTrue(headers > 0 && invalidations > 0, "nothing for the rpcrdma rules to judge in " + capture);
        }
    }

    private static RpcRdmaClient rdma(Nfs3Client nfs) {
        return (RpcRdmaClient) nfs.transport();
    }

    private static Path ownCapture() {
        return pcap.resolveSibling("jiwarp-nfs-cat-4k.pcap");
    }

    /**
     * The figure beside Linux's own client: the kernel NFS client in the same guest mounts the
     * export over RDMA (siw, through the guest's loopback, so no emulated link and nothing on the
     * QEMU capture; {@link SiwNfsTwoGuestsTest} has the client in a second guest) and copies as many
     * in and out; its checksum must match. The timings are printed, never asserted.
     */
    @Test
    @Order(6)
    void kernelClientFigureBesideJiwarps() {
        String script = String.join("\n",
                "set -e",
                "mkdir -p /mnt/nfs",
                "mount -t nfs -o rdma,port=20049,vers=3,rsize=1048576,wsize=1048576 " + SiwPeer.GUEST_ADDRESS + ":"
                        + NfsGuest.EXPORT + " /mnt/nfs",
                "dd if=/dev/urandom of=/tmp/kernel-src bs=1048576 count=" + (LARGEST >> 20) + " 2>/dev/null",
                "timed() { t0=$(cut -d' ' -f1 /proc/uptime); \"$@\" >/dev/null 2>&1; t1=$(cut -d' ' -f1 /proc/uptime); "
                        + "awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { s = b - a; if (s <= 0) s = 0.01; "
                        + "printf \"%.2f s (%.1f MB/s)\\n\", s, " + LARGEST + " / 1e6 / s }'; }",
                "echo \"wrote " + LARGEST + " octets in $(timed dd if=/tmp/kernel-src of=/mnt/nfs/kernel-file bs=1048576 conv=fsync)\"",
                "umount /mnt/nfs; echo 3 > /proc/sys/vm/drop_caches",
                "mount -t nfs -o rdma,port=20049,vers=3,rsize=1048576,wsize=1048576 " + SiwPeer.GUEST_ADDRESS + ":"
                        + NfsGuest.EXPORT + " /mnt/nfs",
                "echo \"read " + LARGEST + " octets in $(timed dd if=/mnt/nfs/kernel-file of=/tmp/kernel-back bs=1048576)\"",
                "umount /mnt/nfs",
                "cmp /tmp/kernel-src /tmp/kernel-back && echo SAME",
                "rm -f /tmp/kernel-src /tmp/kernel-back");
        ExecResult kernel = peer.run(script, Duration.ofSeconds(240));
        assertTrue(kernel.succeeded(), kernel::toString);
        assertTrue(kernel.output().strip().endsWith("SAME"), "the kernel client's copy differs: " + kernel);
        System.out.println("NFSv3 over RDMA, " + (LARGEST >> 20) + " MiB, 1 MiB rsize/wsize:\n  jiwarp nfs (host, through QEMU's user "
                + "network):\n" + jiwarpFigure.indent(4) + "  Linux kernel client (same guest, loopback):\n"
                + kernel.output().indent(4));
    }

    private static JiwarpCommand.Run nfs(Object... args) {
        return NfsGuest.nfs(peer, args);
    }

    private static String tshark(Path tshark, String... args) throws IOException, InterruptedException {
        return tshark(tshark, pcap, args);
    }

    private static String tshark(Path tshark, Path capture, String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 4];
        command[0] = tshark.toString();
        command[1] = "-n";
        command[2] = "-r";
        command[3] = capture.toString();
        System.arraycopy(args, 0, command, 4, args.length);
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "tshark hangs on " + capture);
        return out;
    }

    private static byte[] sha256(byte[] data) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(data);
    }
}
