package org.jiwarp.rpcrdma.nfs.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.jiwarp.rpcrdma.Rpc;
import org.jiwarp.rpcrdma.Xdr;
import org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.Fattr;
import org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.Reply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** File handles across restarts, and forged ones, through the NFS and MOUNT programs. */
@Timeout(60)
class FileHandlesTest {

    @TempDir
    Path tmp;
    private Path dir;

    @BeforeEach
    void tree() throws Exception {
        dir = Files.createDirectory(tmp.resolve("export"));
        Files.createDirectories(dir.resolve("a/b/c"));
        Files.writeString(dir.resolve("a/b/c/file"), "inside");
        Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(tmp.resolve("outside/secret"), "secret");
    }

    /** MNT of the export's mount path, which must succeed; the root handle. */
    static byte[] mountRoot(NfsExport export) {
        Reply reply = new Nfs3Calls(export.mount(), 100005).call(MountService.MNT,
                out -> Xdr.putString(out, export.mountPath()));
        assertEquals(Rpc.SUCCESS, reply.acceptStat());
        assertEquals(MountService.MNT3_OK, reply.status());
        return Xdr.getOpaque(reply.in(), 64);
    }

    private static byte[] lookupPath(Nfs3Calls nfs, byte[] root, String path) {
        byte[] fh = root;
        for (String name : path.split("/")) {
            byte[] from = fh;
            Reply reply = nfs.call(Nfs3Service.LOOKUP, Nfs3ServiceTest.dirop(from, name));
            assertEquals(0, reply.status(), "LOOKUP " + name);
            fh = Xdr.getOpaque(reply.in(), 64);
        }
        return fh;
    }

    private static Reply read(Nfs3Calls nfs, byte[] fh) {
        return nfs.call(Nfs3Service.READ, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, 0);
            Xdr.putInt(out, 100);
        });
    }

    private static int getattr(Nfs3Calls nfs, byte[] fh) {
        return nfs.call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, fh)).status();
    }

    @Test
    void handlesSurviveARestart() throws Exception {
        byte[] root;
        byte[] file;
        try (NfsExport first = NfsExport.open(dir, NfsExport.Options.defaults())) {
            root = mountRoot(first);
            file = lookupPath(new Nfs3Calls(first.nfs(), 100003), root, "a/b/c/file");
        }
        try (NfsExport second = NfsExport.open(dir, NfsExport.Options.defaults())) {
            assertArrayEquals(root, mountRoot(second), "the same root handle");
            Reply reply = read(new Nfs3Calls(second.nfs(), 100003), file);
            assertEquals(0, reply.status(), "a handle from before the restart, with an empty cache");
            assertEquals("inside", new String(reply.ddp(), StandardCharsets.UTF_8));
        }
        Files.move(dir.resolve("a/b"), dir.resolve("b")); // renamed while no server ran
        try (NfsExport third = NfsExport.open(dir, NfsExport.Options.defaults())) {
            Nfs3Calls nfs = new Nfs3Calls(third.nfs(), 100003);
            assertEquals(0, read(nfs, file).status(), "found by walking the tree");
            Files.move(dir.resolve("b"), dir.resolve("a/b2")); // and again, now cached
            Reply reply = read(nfs, file);
            assertEquals(0, reply.status(), "the cached path no longer names it: walked again");
            assertEquals("inside", new String(reply.ddp(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void forgedHandles() throws Exception {
        try (NfsExport export = NfsExport.open(dir, NfsExport.Options.defaults())) {
            Nfs3Calls nfs = new Nfs3Calls(export.nfs(), 100003);
            byte[] root = mountRoot(export);
            byte[] file = lookupPath(nfs, root, "a/b/c/file");
            assertEquals(FileHandles.LENGTH, file.length);

            byte[] otherExport = file.clone();
            otherExport[7] ^= 1;
            assertEquals(Nfs3Error.BADHANDLE, getattr(nfs, otherExport), "another export's id");
            assertEquals(Nfs3Error.BADHANDLE, getattr(nfs, Arrays.copyOf(file, FileHandles.LENGTH - 1)), "truncated");
            assertEquals(Nfs3Error.BADHANDLE, getattr(nfs, Arrays.copyOf(file, FileHandles.LENGTH + 4)), "too long");
            assertEquals(Nfs3Error.BADHANDLE, getattr(nfs, new byte[0]), "empty");
            byte[] version = file.clone();
            version[0] = 2;
            assertEquals(Nfs3Error.BADHANDLE, getattr(nfs, version), "another version");

            long secretIno = (Long) Files.getAttribute(tmp.resolve("outside/secret"), "unix:ino");
            byte[] secret = Nfs3ServiceTest.forge(file, secretIno);
            assertEquals(Nfs3Error.STALE, getattr(nfs, secret), "a file outside the export on the same file system");
            assertEquals(Nfs3Error.STALE, read(nfs, secret).status());
            long outsideIno = (Long) Files.getAttribute(tmp, "unix:ino");
            assertEquals(Nfs3Error.STALE, getattr(nfs, Nfs3ServiceTest.forge(file, outsideIno)), "the export's parent");

            Files.createSymbolicLink(dir.resolve("a/escape"), tmp.resolve("outside"));
            Reply through = nfs.call(Nfs3Service.LOOKUP, Nfs3ServiceTest.dirop(lookupPath(nfs, root, "a/escape"), "secret"));
            assertEquals(Nfs3Error.NOTDIR, through.status(), "a link is never a directory to look in");
            assertEquals(Nfs3Error.STALE, getattr(nfs, secret), "nor walked through");
        }
    }

    /**
     * A client sending handles forged with inodes the export does not hold costs the server one
     * walk of the export, not one each: the first walk indexes it. A handle whose file was moved
     * outside NFS is still found, by another walk.
     */
    @Test
    void forgedInodesCostOneWalk() throws Exception {
        FileHandles handles = new FileHandles(dir.toRealPath());
        byte[] root = handles.rootHandle();
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 50; i++) {
            long ino = (1L << 40) + random.nextInt(1 << 20);
            Nfs3Error e = org.junit.jupiter.api.Assertions.assertThrows(Nfs3Error.class,
                    () -> handles.resolve(Nfs3ServiceTest.forge(root, ino)));
            assertEquals(Nfs3Error.STALE, e.status);
        }
        assertEquals(1, handles.walks(), "fifty forged inodes, one walk");

        Path file = dir.resolve("a/b/c/file");
        long ino = (Long) Files.getAttribute(file, "unix:ino");
        byte[] fh = Nfs3ServiceTest.forge(root, ino);
        assertEquals(file, handles.resolve(fh), "a file the walk passed is in the cache");
        Files.move(file, dir.resolve("a/moved"));
        assertEquals(dir.resolve("a/moved"), handles.resolve(fh), "moved outside NFS: found by walking again");
        assertEquals(2, handles.walks());
    }

    @Test
    void exportIdIsTheDirectorysAndFsidFollows() throws Exception {
        Path other = Files.createDirectory(tmp.resolve("other"));
        try (NfsExport one = NfsExport.open(dir, NfsExport.Options.defaults());
                NfsExport two = NfsExport.open(other, NfsExport.Options.defaults())) {
            byte[] oneRoot = mountRoot(one);
            byte[] twoRoot = mountRoot(two);
            assertNotEquals(ByteBuffer.wrap(oneRoot, 4, 8), ByteBuffer.wrap(twoRoot, 4, 8));
            assertEquals(Nfs3Error.BADHANDLE, getattr(new Nfs3Calls(two.nfs(), 100003), oneRoot),
                    "one export's handle at another");
            Reply reply = new Nfs3Calls(one.nfs(), 100003).call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, oneRoot));
            assertEquals(0, reply.status());
            assertEquals(ByteBuffer.wrap(oneRoot, 4, 8).getLong(), Fattr.decode(reply.in()).fsid());
        }
    }
}
