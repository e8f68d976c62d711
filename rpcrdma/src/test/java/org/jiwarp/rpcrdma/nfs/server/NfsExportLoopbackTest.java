package org.jiwarp.rpcrdma.nfs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.RpcHandler;
import org.jiwarp.rpcrdma.RpcPrograms;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.RpcRdmaServer;
import org.jiwarp.rpcrdma.nfs.Fattr3;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The export served by {@link RpcRdmaServer} over loopback TCP to the project's {@link Nfs3Client}:
 * WRITE's data in Read chunks, READ's in Write chunks, READDIR's reply in a Reply chunk. The root
 * handle comes from the export itself (MNT travels over TCP, served elsewhere).
 */
@Timeout(120)
class NfsExportLoopbackTest {

    private static final int MIB = 1 << 20;
    private static final int ENTRIES = 2500;

    @TempDir
    Path tmp;

    @Test
    void createWriteReadAndList() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("export"));
        for (int i = 0; i < ENTRIES; i++) {
            Files.createFile(dir.resolve("entry-" + i)); // a listing longer than one READDIR of 64 KiB
        }
        byte[] content = new byte[4 * MIB];
        new Random(24).nextBytes(content);
        Rnic serverRnic = Rnic.open();
        Rnic clientRnic = Rnic.open();
        try (NfsExport export = NfsExport.open(dir, NfsExport.Options.defaults())) {
            RpcHandler programs = RpcPrograms.builder().add(Nfs3Client.NFS_PROGRAM, Nfs3Client.NFS_V3, export.nfs())
                    .add(Nfs3Client.MOUNT_PROGRAM, Nfs3Client.MOUNT_V3, export.mount()).build();
            RpcRdmaServer server = RpcRdmaServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0), programs,
                    new RpcRdmaServer.Options(8, 4096, 2, 2, 16, MIB + (64 << 10)));
            try (Nfs3Client client = Nfs3Client.connect(clientRnic, server.localAddress(),
                    FileHandlesTest.mountRoot(export), MIB, MIB, new RpcRdmaClient.Options(8, 4096, true,
                            Duration.ofMillis(300), Duration.ofSeconds(60)))) {
                byte[] fh = client.create(client.root(), "data", 0644);
                for (int offset = 0; offset < content.length; offset += MIB) {
                    ByteBuf piece = PooledByteBufAllocator.DEFAULT.directBuffer(MIB);
                    try {
                        piece.writeBytes(content, offset, MIB);
                        assertEquals(MIB, client.write(fh, offset, piece));
                    } finally {
                        piece.release();
                    }
                }
                Fattr3 attributes = client.getattr(fh);
                assertEquals(content.length, attributes.size());
                assertEquals(Fattr3.NF3REG, attributes.type());
                assertTrue(Arrays.equals(content, Files.readAllBytes(dir.resolve("data"))), "the file on disk");

                ByteBuf back = Unpooled.buffer(content.length);
                boolean eof = false;
                for (int offset = 0; !eof; offset = back.writerIndex()) {
                    eof = client.read(fh, offset, MIB, back);
                    assertTrue(eof || back.writerIndex() > offset, "a READ with no data and no end of file");
                    assertTrue(back.writerIndex() <= content.length, "a READ past the end");
                }
                assertEquals(content.length, back.readableBytes());
                assertTrue(Arrays.equals(content, ByteBufUtil.getBytes(back)), "read back as written");
                back.release();

                List<Nfs3Client.Entry> entries = client.readdir(client.root());
                TreeSet<String> names = new TreeSet<>();
                entries.forEach(e -> names.add(e.name()));
                assertEquals(entries.size(), names.size(), "each name once");
                assertTrue(names.containsAll(List.of(".", "..", "data", "entry-0", "entry-" + (ENTRIES - 1))), names.toString());
                assertEquals(ENTRIES + 3, names.size());
                assertEquals(attributes.fileid(), entries.stream().filter(e -> e.name().equals("data"))
                        .findFirst().orElseThrow().fileid());
            } finally {
                server.close();
            }
            assertEquals(4L * MIB, export.statistics().octetsRead());
            assertEquals(4L * MIB, export.statistics().octetsWritten());
        } finally {
            clientRnic.close();
            serverRnic.close();
        }
    }
}
