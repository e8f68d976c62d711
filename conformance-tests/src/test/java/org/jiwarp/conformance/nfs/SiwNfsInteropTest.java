package org.jiwarp.conformance.nfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.jiwarp.conformance.siw.ExecResult;
import org.jiwarp.conformance.siw.SiwPeer;
import org.jiwarp.conformance.siw.SiwPeerImage;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.PrivateData;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.nfs.Fattr3;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * jiwarp's NFSv3 client over RPC-over-RDMA against the Linux kernel NFS server (nfsd, svcrdma) over
 * siw in the QEMU guest: files written with WRITE from Read chunks and read back with READ into
 * Write chunks compare equal by SHA-256 (and with the guest's own sha256sum), and a directory of
 * 1000 entries lists through READDIR replies in Reply chunks.
 */
@Tag("siw")
class SiwNfsInteropTest {

    private static SiwPeer peer;
    private static Rnic rnic;
    private static Nfs3Client nfs;

    @BeforeAll
    static void boot() throws Exception {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        Path captures = Files.createDirectories(Path.of("target", "nfs-captures"));
        peer = SiwPeer.builder().image(SiwPeerImage.ensureNfsBuilt()).memoryMb(768)
                .pcap(captures.resolve("jiwarp-nfs3-siw.pcap"))
                .forward(NfsGuest.RDMA_PORT).forward(NfsGuest.MOUNT_PORT).boot();
        ExecResult serve = peer.run("jw-nfs-serve", Duration.ofSeconds(60));
        assertTrue(serve.succeeded() && serve.output().contains("rdma 20049"), serve::toString);
        peer.awaitListening(NfsGuest.RDMA_PORT, Duration.ofSeconds(30));
        peer.awaitListening(NfsGuest.MOUNT_PORT, Duration.ofSeconds(30));
        rnic = Rnic.open();
        InetAddress loopback = InetAddress.getLoopbackAddress();
        nfs = Nfs3Client.mount(rnic, new InetSocketAddress(loopback, peer.hostPort(NfsGuest.MOUNT_PORT)),
                new InetSocketAddress(loopback, peer.hostPort(NfsGuest.RDMA_PORT)), NfsGuest.EXPORT,
                1 << 20, 1 << 20, RpcRdmaClient.Options.defaults());
    }

    @AfterAll
    static void shutDown() {
        if (nfs != null) {
            nfs.close();
        }
        if (rnic != null) {
            rnic.close();
        }
        if (peer != null) {
            System.out.println("NFS guest dmesg:\n" + peer.dmesg());
            peer.close();
        }
    }

    @Test
    void serverOffersRemoteInvalidationAndGrantsCredits() {
        PrivateData server = nfs.transport().serverPrivateData();
        assertTrue(server != null && server.version() == 1, "svcrdma's RFC 8797 private data: " + server);
        nfs.getattr(nfs.root());
        assertTrue(nfs.transport().granted() > 1, "credits granted: " + nfs.transport().granted());
    }

    @Test
    void writesAndReadsBackFilesOfEverySize() throws Exception {
        Random random = new Random(17);
        for (int size : new int[] {0, 1, 4096, 1 << 20, 64 << 20}) {
            byte[] content = new byte[size];
            random.nextBytes(content);
            String name = "file-" + size;
            byte[] fh = nfs.create(nfs.root(), name, 0644);
            ByteBuf chunk = Unpooled.directBuffer(nfs.wsize());
            for (int offset = 0; offset < size; offset += nfs.wsize()) {
                int n = Math.min(nfs.wsize(), size - offset);
                chunk.clear().writeBytes(content, offset, n);
                assertEquals(n, nfs.write(fh, offset, chunk), "WRITE at " + offset);
            }
            chunk.release();
            Fattr3 attributes = nfs.getattr(fh);
            assertEquals(size, attributes.size(), name + " size");

            long invalidatedBefore = nfs.transport().remoteInvalidations();
            ByteBuf back = Unpooled.buffer(size);
            long offset = 0;
            boolean eof = false;
            while (!eof) {
                int before = back.readableBytes();
                eof = nfs.read(fh, offset, nfs.rsize(), back);
                offset += back.readableBytes() - before;
                assertTrue(eof || back.readableBytes() > before, "READ made no progress at " + offset);
            }
            byte[] read = new byte[back.readableBytes()];
            back.readBytes(read);
            back.release();
            assertArrayEquals(sha256(content), sha256(read), name + " read back");
            if (size > 0) {
                assertTrue(nfs.transport().remoteInvalidations() > invalidatedBefore,
                        "svcrdma answered READ by Send with Invalidate of the Write chunk's handle");
            }
            ExecResult guest = peer.run("sha256sum " + NfsGuest.EXPORT + "/" + name).orThrow();
            assertTrue(guest.output().startsWith(hex(sha256(content))), name + " in the guest: " + guest);
        }
    }

    @Test
    void listsADirectoryOfAThousandEntries() {
        peer.run("mkdir -p " + NfsGuest.EXPORT + "/many && cd " + NfsGuest.EXPORT
                + "/many && i=0; while [ $i -lt 1000 ]; do : > entry-$i; i=$((i+1)); done", Duration.ofSeconds(120)).orThrow();
        byte[] dir = nfs.lookupPath(nfs.root(), "many");
        List<Nfs3Client.Entry> entries = nfs.readdir(dir);
        Set<String> names = new HashSet<>();
        entries.forEach(e -> names.add(e.name()));
        for (int i = 0; i < 1000; i++) {
            assertTrue(names.contains("entry-" + i), "entry-" + i + " missing from " + entries.size() + " entries");
        }
        assertEquals(1002, names.size(), "1000 entries with . and ..");
    }

    private static byte[] sha256(byte[] data) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(data);
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (byte b : bytes) {
            s.append(String.format("%02x", b));
        }
        return s.toString();
    }
}
