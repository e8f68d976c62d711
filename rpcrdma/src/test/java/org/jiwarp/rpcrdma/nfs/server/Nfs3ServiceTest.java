package org.jiwarp.rpcrdma.nfs.server;

import static org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.name;
import static org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.sattr;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.Rpc;
import org.jiwarp.rpcrdma.Xdr;
import org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.Fattr;
import org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.Reply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The NFS program's procedures called directly, over a temporary directory. */
@Timeout(60)
class Nfs3ServiceTest {

    @TempDir
    Path tmp;
    private Path dir;
    private NfsExport export;
    private Nfs3Calls nfs;
    private byte[] root;

    @BeforeEach
    void open() throws Exception {
        dir = Files.createDirectory(tmp.resolve("export"));
        export = NfsExport.open(dir, NfsExport.Options.defaults());
        nfs = new Nfs3Calls(export.nfs(), 100003);
        root = FileHandlesTest.mountRoot(export);
    }

    // ---- helpers ----

    private Reply call(int procedure, Consumer<ByteBuf> arguments) {
        Reply reply = nfs.call(procedure, arguments);
        assertEquals(Rpc.SUCCESS, reply.acceptStat(), "accept_stat");
        return reply;
    }

    static Consumer<ByteBuf> dirop(byte[] dirFh, String name) {
        return out -> {
            Xdr.putOpaque(out, dirFh);
            name(out, name);
        };
    }

    private Reply lookupReply(byte[] dirFh, String name) {
        return call(Nfs3Service.LOOKUP, dirop(dirFh, name));
    }

    private byte[] lookup(byte[] dirFh, String name) {
        Reply reply = lookupReply(dirFh, name);
        assertEquals(0, reply.status(), "LOOKUP " + name);
        return Xdr.getOpaque(reply.in(), 64);
    }

    private Fattr getattr(byte[] fh) {
        Reply reply = call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, fh));
        assertEquals(0, reply.status(), "GETATTR");
        return Fattr.decode(reply.in());
    }

    private int getattrStatus(byte[] fh) {
        return call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, fh)).status();
    }

    private Reply createReply(byte[] dirFh, String name, int how, int mode, byte[] verifier) {
        return call(Nfs3Service.CREATE, out -> {
            dirop(dirFh, name).accept(out);
            Xdr.putInt(out, how);
            if (how == Nfs3Service.EXCLUSIVE) {
                Xdr.putFixedOpaque(out, verifier);
            } else {
                sattr(out, mode, -1);
            }
        });
    }

    private byte[] create(byte[] dirFh, String name) {
        Reply reply = createReply(dirFh, name, Nfs3Service.UNCHECKED, 0640, null);
        assertEquals(0, reply.status(), "CREATE " + name);
        assertTrue(Xdr.getBoolean(reply.in()));
        return Xdr.getOpaque(reply.in(), 64);
    }

    private byte[] mkdir(byte[] dirFh, String name) {
        Reply reply = call(Nfs3Service.MKDIR, out -> {
            dirop(dirFh, name).accept(out);
            sattr(out, 0755, -1);
        });
        assertEquals(0, reply.status(), "MKDIR " + name);
        assertTrue(Xdr.getBoolean(reply.in()));
        return Xdr.getOpaque(reply.in(), 64);
    }

    private Reply write(byte[] fh, long offset, byte[] data, int stable) {
        return call(Nfs3Service.WRITE, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, offset);
            Xdr.putInt(out, data.length);
            Xdr.putInt(out, stable);
            Xdr.putOpaque(out, data);
        });
    }

    private Reply read(byte[] fh, long offset, int count) {
        return call(Nfs3Service.READ, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, offset);
            Xdr.putInt(out, count);
        });
    }

    private static int status(Reply reply) {
        return reply.status();
    }

    // ---- tests ----

    @Test
    void nullUnknownAndGarbage() {
        Reply none = nfs.call(Nfs3Service.NULL, out -> { });
        assertEquals(Rpc.SUCCESS, none.acceptStat());
        assertEquals(0, none.in().readableBytes());
        assertEquals(Rpc.PROC_UNAVAIL, nfs.call(22, out -> { }).acceptStat());
        assertEquals(Rpc.GARBAGE_ARGS, nfs.call(Nfs3Service.GETATTR, out -> Xdr.putInt(out, 28)).acceptStat());
        assertEquals(Rpc.GARBAGE_ARGS, nfs.call(Nfs3Service.GETATTR, out -> Xdr.putInt(out, 65)).acceptStat());
        assertEquals(Rpc.GARBAGE_ARGS, nfs.call(Nfs3Service.WRITE, out -> {
            Xdr.putOpaque(out, root);
            Xdr.putHyper(out, 0);
            Xdr.putInt(out, 4);
            Xdr.putInt(out, 3); // no such stable_how
            Xdr.putOpaque(out, new byte[4]);
        }).acceptStat());
    }

    @Test
    void getattrOfTheRootIsTheDirectory() throws Exception {
        Fattr attributes = getattr(root);
        assertEquals(Attributes.NF3DIR, attributes.type());
        assertEquals(((Long) Files.getAttribute(dir, "unix:ino")).longValue(), attributes.fileid());
        assertEquals((Integer) Files.getAttribute(dir, "unix:mode") & 07777, attributes.mode());
        assertEquals((Integer) Files.getAttribute(dir, "unix:nlink"), attributes.nlink());
        try (NfsExport again = NfsExport.open(dir, NfsExport.Options.defaults())) {
            Reply reply = new Nfs3Calls(again.nfs(), 100003).call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, root));
            assertEquals(0, reply.status());
            assertEquals(attributes.fsid(), Fattr.decode(reply.in()).fsid(), "fsid is stable per export");
        }
    }

    @Test
    void createWriteReadCommit() throws Exception {
        byte[] fh = create(root, "file");
        Fattr created = getattr(fh);
        assertEquals(Attributes.NF3REG, created.type());
        assertEquals(0640, created.mode());

        Reply unstable = write(fh, 0, "hello".getBytes(StandardCharsets.US_ASCII), Nfs3Service.UNSTABLE);
        assertEquals(0, unstable.status());
        assertEquals(5, Nfs3Calls.wcc(unstable.in()).size(), "post-op size");
        assertEquals(5, Xdr.getInt(unstable.in()));
        assertEquals(Nfs3Service.UNSTABLE, Xdr.getInt(unstable.in()));
        byte[] verifier = Xdr.getFixedOpaque(unstable.in(), 8);

        Reply sync = write(fh, 5, " world".getBytes(StandardCharsets.US_ASCII), Nfs3Service.FILE_SYNC);
        assertEquals(0, sync.status());
        Nfs3Calls.wcc(sync.in());
        assertEquals(6, Xdr.getInt(sync.in()));
        assertEquals(Nfs3Service.FILE_SYNC, Xdr.getInt(sync.in()));
        assertArrayEquals(verifier, Xdr.getFixedOpaque(sync.in(), 8), "one verifier per server start");
        assertEquals("hello world", Files.readString(dir.resolve("file")));

        Reply whole = read(fh, 0, 100);
        assertEquals(0, whole.status());
        assertEquals(11, Fattr.postOp(whole.in()).size());
        assertEquals(11, Xdr.getInt(whole.in()));
        assertTrue(Xdr.getBoolean(whole.in()), "eof");
        assertEquals(11, Xdr.getInt(whole.in()), "the opaque's length word ends the results");
        assertEquals(0, whole.in().readableBytes());
        assertEquals("hello world", new String(whole.ddp(), StandardCharsets.US_ASCII));

        Reply part = read(fh, 6, 3);
        assertEquals(0, part.status());
        Fattr.postOp(part.in());
        assertEquals(3, Xdr.getInt(part.in()));
        assertFalse(Xdr.getBoolean(part.in()), "not eof before the end");
        assertEquals("wor", new String(part.ddp(), StandardCharsets.US_ASCII));

        Reply tail = read(fh, 6, 5);
        assertEquals(0, tail.status());
        Fattr.postOp(tail.in());
        Xdr.getInt(tail.in());
        assertTrue(Xdr.getBoolean(tail.in()), "eof when the read reaches the end");

        Reply commit = call(Nfs3Service.COMMIT, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putHyper(out, 0);
            Xdr.putInt(out, 0);
        });
        assertEquals(0, commit.status());
        assertNotNull(Nfs3Calls.wcc(commit.in()));
        assertArrayEquals(verifier, Xdr.getFixedOpaque(commit.in(), 8));

        try (NfsExport restarted = NfsExport.open(dir, NfsExport.Options.defaults())) {
            Reply after = new Nfs3Calls(restarted.nfs(), 100003).call(Nfs3Service.COMMIT, out -> {
                Xdr.putOpaque(out, fh);
                Xdr.putHyper(out, 0);
                Xdr.putInt(out, 0);
            });
            assertEquals(0, after.status());
            Nfs3Calls.wcc(after.in());
            assertFalse(java.util.Arrays.equals(verifier, Xdr.getFixedOpaque(after.in(), 8)),
                    "a new server start draws a new verifier");
        }
    }

    @Test
    void readCountIsBoundedByRtmax() throws Exception {
        byte[] fh = create(root, "big");
        Files.write(dir.resolve("big"), new byte[(1 << 20) + 4096]);
        Reply reply = read(fh, 0, 8 << 20);
        assertEquals(0, reply.status());
        Fattr.postOp(reply.in());
        assertEquals(1 << 20, Xdr.getInt(reply.in()));
        assertFalse(Xdr.getBoolean(reply.in()));
        assertEquals(1 << 20, reply.ddp().length);
    }

    @Test
    void createModes() throws Exception {
        create(root, "file");
        Files.writeString(dir.resolve("file"), "data");
        assertEquals(Nfs3Error.EXIST, createReply(root, "file", Nfs3Service.GUARDED, 0644, null).status());
        Reply unchecked = call(Nfs3Service.CREATE, out -> {
            dirop(root, "file").accept(out);
            Xdr.putInt(out, Nfs3Service.UNCHECKED);
            sattr(out, -1, 0);
        });
        assertEquals(0, unchecked.status(), "UNCHECKED reuses the file");
        assertEquals(0, Files.size(dir.resolve("file")), "and sets its size");

        byte[] verifier = {1, 2, 3, 4, 5, 6, 7, 8};
        Reply first = createReply(root, "exclusive", Nfs3Service.EXCLUSIVE, 0, verifier);
        assertEquals(0, first.status());
        Xdr.getBoolean(first.in());
        byte[] fh = Xdr.getOpaque(first.in(), 64);
        Reply again = createReply(root, "exclusive", Nfs3Service.EXCLUSIVE, 0, verifier);
        assertEquals(0, again.status(), "a retransmitted EXCLUSIVE CREATE succeeds");
        Xdr.getBoolean(again.in());
        assertArrayEquals(fh, Xdr.getOpaque(again.in(), 64));
        byte[] other = {1, 2, 3, 4, 5, 6, 7, 9};
        assertEquals(Nfs3Error.EXIST, createReply(root, "exclusive", Nfs3Service.EXCLUSIVE, 0, other).status());
        assertEquals(Nfs3Error.EXIST, createReply(root, "file", Nfs3Service.EXCLUSIVE, 0, verifier).status());
        mkdir(root, "sub");
        assertEquals(Nfs3Error.EXIST, createReply(root, "sub", Nfs3Service.UNCHECKED, 0644, null).status(),
                "UNCHECKED never reuses a directory");
    }

    @Test
    void setattr() throws Exception {
        byte[] fh = create(root, "file");
        Files.writeString(dir.resolve("file"), "0123456789");
        Fattr before = getattr(fh);
        Reply reply = call(Nfs3Service.SETATTR, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putBoolean(out, true);
            Xdr.putInt(out, 0600);
            Xdr.putBoolean(out, false);
            Xdr.putBoolean(out, false);
            Xdr.putBoolean(out, true);
            Xdr.putHyper(out, 4);
            Xdr.putInt(out, 1); // atime: SET_TO_SERVER_TIME
            Xdr.putInt(out, 2); // mtime: SET_TO_CLIENT_TIME
            Xdr.putInt(out, 1_000_000_000);
            Xdr.putInt(out, 123_456_789);
            Xdr.putBoolean(out, true); // guard
            Xdr.putInt(out, (int) before.ctimeSeconds());
            Xdr.putInt(out, (int) before.ctimeNanos());
        });
        assertEquals(0, reply.status());
        Fattr after = Nfs3Calls.wcc(reply.in());
        assertEquals(0600, after.mode());
        assertEquals(4, after.size());
        assertEquals(1_000_000_000L, after.mtimeSeconds());
        assertEquals(123_456_789L, after.mtimeNanos());
        assertTrue(after.atimeSeconds() > 1_600_000_000L, "atime set to the server's time");
        assertEquals("0123", Files.readString(dir.resolve("file")));

        Reply grow = call(Nfs3Service.SETATTR, out -> {
            Xdr.putOpaque(out, fh);
            sattr(out, -1, 4096);
            Xdr.putBoolean(out, false);
        });
        assertEquals(0, grow.status());
        assertEquals(4096, Files.size(dir.resolve("file")));

        Reply stale = call(Nfs3Service.SETATTR, out -> {
            Xdr.putOpaque(out, fh);
            sattr(out, 0644, -1);
            Xdr.putBoolean(out, true); // a guard with an old ctime
            Xdr.putInt(out, 1);
            Xdr.putInt(out, 0);
        });
        assertEquals(Nfs3Error.NOT_SYNC, stale.status());
        assertEquals(0600, Nfs3Calls.wcc(stale.in()).mode(), "the guard kept the mode");
    }

    @Test
    void lookupNames() throws Exception {
        byte[] sub = mkdir(root, "sub");
        byte[] file = create(sub, "file");
        assertArrayEquals(sub, lookup(sub, "."));
        assertArrayEquals(root, lookup(sub, ".."));
        assertArrayEquals(root, lookup(root, ".."), ".. at the root is the root");
        assertArrayEquals(file, lookup(sub, "file"));
        Reply found = lookupReply(sub, "file");
        found.status();
        Xdr.getOpaque(found.in(), 64);
        assertEquals(Attributes.NF3REG, Fattr.postOp(found.in()).type());
        assertEquals(Attributes.NF3DIR, Fattr.postOp(found.in()).type());

        Reply missing = lookupReply(sub, "nothing");
        assertEquals(Nfs3Error.NOENT, missing.status());
        assertNotNull(Fattr.postOp(missing.in()), "the directory's attributes come with the failure");
        assertEquals(Nfs3Error.INVAL, lookupReply(sub, "").status());
        assertEquals(Nfs3Error.INVAL, lookupReply(root, "sub/file").status());
        assertEquals(Nfs3Error.INVAL, lookupReply(root, "a\0b").status());
        assertEquals(Nfs3Error.NAMETOOLONG, lookupReply(root, "n".repeat(256)).status());
        assertEquals(Nfs3Error.NOENT, lookupReply(root, "n".repeat(255)).status());
        assertEquals(Nfs3Error.NOTDIR, lookupReply(file, "x").status());
    }

    @Test
    void accessFromModeBits() throws Exception {
        byte[] fh = create(root, "file");
        Files.setAttribute(dir.resolve("file"), "unix:mode", 0644);
        int all = 0x3f;
        Consumer<ByteBuf> args = out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putInt(out, all);
        };
        Reply asRoot = call(Nfs3Service.ACCESS, args);
        assertEquals(0, asRoot.status());
        Fattr.postOp(asRoot.in());
        assertEquals(Nfs3Service.ACCESS3_READ | Nfs3Service.ACCESS3_MODIFY | Nfs3Service.ACCESS3_EXTEND
                | Nfs3Service.ACCESS3_DELETE, Xdr.getInt(asRoot.in()), "root: all but executing a file no one may");
        Reply asOther = nfs.as(new AuthSys(0, "test", 4242, 4242, List.of())).call(Nfs3Service.ACCESS, args);
        assertEquals(0, asOther.status());
        Fattr.postOp(asOther.in());
        assertEquals(Nfs3Service.ACCESS3_READ, Xdr.getInt(asOther.in()), "another user: the other bits");
        Reply asNobody = nfs.as(null).call(Nfs3Service.ACCESS, out -> {
            Xdr.putOpaque(out, fh);
            Xdr.putInt(out, Nfs3Service.ACCESS3_MODIFY);
        });
        asNobody.status();
        Fattr.postOp(asNobody.in());
        assertEquals(0, Xdr.getInt(asNobody.in()), "only what was asked, and nobody may not modify");
    }

    @Test
    void directoriesLinksAndRemoval() throws Exception {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "secret");
        byte[] sub = mkdir(root, "sub");
        create(sub, "file");
        Reply symlink = call(Nfs3Service.SYMLINK, out -> {
            dirop(root, "link").accept(out);
            sattr(out, -1, -1);
            Xdr.putString(out, "../outside/secret");
        });
        assertEquals(0, symlink.status());
        Reply readlink = call(Nfs3Service.READLINK, out -> Xdr.putOpaque(out, lookup(root, "link")));
        assertEquals(0, readlink.status());
        assertEquals(Attributes.NF3LNK, Fattr.postOp(readlink.in()).type());
        assertEquals(17, Xdr.getInt(readlink.in()));
        assertEquals("../outside/secret", new String(readlink.ddp(), StandardCharsets.UTF_8));

        byte[] link = lookup(root, "link");
        assertEquals(Attributes.NF3LNK, getattr(link).type(), "LOOKUP gives the link, never its target");
        assertEquals(Nfs3Error.INVAL, read(link, 0, 100).status(), "READ of a link");
        Reply writeLink = write(link, 0, new byte[] {1}, Nfs3Service.FILE_SYNC);
        assertEquals(Nfs3Error.INVAL, writeLink.status(), "WRITE of a link");
        assertEquals("secret", Files.readString(outside.resolve("secret")));
        assertEquals(Nfs3Error.NOTDIR, lookupReply(link, "secret").status());
        assertEquals(Nfs3Error.INVAL, call(Nfs3Service.READLINK, out -> Xdr.putOpaque(out, sub)).status());
        assertEquals(Nfs3Error.ISDIR, read(sub, 0, 10).status());

        Reply mkdirAgain = call(Nfs3Service.MKDIR, out -> {
            dirop(root, "sub").accept(out);
            sattr(out, 0755, -1);
        });
        assertEquals(Nfs3Error.EXIST, mkdirAgain.status());
        Nfs3Calls.wcc(mkdirAgain.in());
        Reply mknod = call(Nfs3Service.MKNOD, out -> {
            dirop(root, "fifo").accept(out);
            Xdr.putInt(out, Attributes.NF3FIFO);
            sattr(out, 0644, -1);
        });
        assertEquals(Nfs3Error.NOTSUPP, mknod.status());

        assertEquals(Nfs3Error.NOTEMPTY, call(Nfs3Service.RMDIR, dirop(root, "sub")).status());
        assertEquals(Nfs3Error.ISDIR, call(Nfs3Service.REMOVE, dirop(root, "sub")).status());
        assertEquals(Nfs3Error.NOTDIR, call(Nfs3Service.RMDIR, dirop(sub, "file")).status());
        assertEquals(Nfs3Error.INVAL, call(Nfs3Service.RMDIR, dirop(sub, ".")).status());
        assertEquals(Nfs3Error.NOENT, call(Nfs3Service.REMOVE, dirop(sub, "nothing")).status());
        Reply remove = call(Nfs3Service.REMOVE, dirop(sub, "file"));
        assertEquals(0, remove.status());
        assertNotNull(Nfs3Calls.wcc(remove.in()));
        assertEquals(0, call(Nfs3Service.RMDIR, dirop(root, "sub")).status());
        assertFalse(Files.exists(dir.resolve("sub")));
        assertEquals(Nfs3Error.STALE, getattrStatus(sub), "a removed directory's handle is stale");
        assertEquals(0, call(Nfs3Service.REMOVE, dirop(root, "link")).status());
        assertTrue(Files.exists(outside.resolve("secret")), "REMOVE of a link leaves its target");
    }

    @Test
    void renameAndLink() throws Exception {
        byte[] sub = mkdir(root, "sub");
        byte[] fh = create(root, "a");
        Reply rename = call(Nfs3Service.RENAME, out -> {
            dirop(root, "a").accept(out);
            dirop(sub, "b").accept(out);
        });
        assertEquals(0, rename.status());
        assertNotNull(Nfs3Calls.wcc(rename.in()));
        assertNotNull(Nfs3Calls.wcc(rename.in()));
        assertEquals(Nfs3Error.NOENT, lookupReply(root, "a").status());
        assertArrayEquals(fh, lookup(sub, "b"), "the handle follows the file");
        Files.move(dir.resolve("sub/b"), dir.resolve("c")); // behind the server's back
        assertEquals(Attributes.NF3REG, getattr(fh).type(), "the handle still finds the file");

        Reply link = call(Nfs3Service.LINK, out -> {
            Xdr.putOpaque(out, fh);
            dirop(sub, "d").accept(out);
        });
        assertEquals(0, link.status());
        assertEquals(2, Fattr.postOp(link.in()).nlink());
        assertEquals(Nfs3Error.EXIST, call(Nfs3Service.LINK, out -> {
            Xdr.putOpaque(out, fh);
            dirop(sub, "d").accept(out);
        }).status());
        Files.createDirectories(dir.resolve("other/x"));
        assertEquals(Nfs3Error.NOTEMPTY, call(Nfs3Service.RENAME, out -> {
            dirop(root, "sub").accept(out);
            dirop(root, "other").accept(out);
        }).status(), "a directory over one that is not empty");
    }

    /** A READDIR or READDIRPLUS until end of directory; checks each reply's size against the limit. */
    private List<String> readdirAll(byte[] dirFh, boolean plus, int dircount, int maxcount) {
        List<String> names = new ArrayList<>();
        long cookie = 0;
        byte[] verifier = new byte[8];
        for (int calls = 0; calls < 1000; calls++) {
            long from = cookie;
            byte[] verf = verifier;
            Reply reply = call(plus ? Nfs3Service.READDIRPLUS : Nfs3Service.READDIR, out -> {
                Xdr.putOpaque(out, dirFh);
                Xdr.putHyper(out, from);
                Xdr.putFixedOpaque(out, verf);
                Xdr.putInt(out, dircount);
                if (plus) {
                    Xdr.putInt(out, maxcount);
                }
            });
            assertTrue(reply.in().readableBytes() <= maxcount, "a reply of " + reply.in().readableBytes()
                    + " octets for a count of " + maxcount);
            assertEquals(0, reply.status());
            assertEquals(Attributes.NF3DIR, Fattr.postOp(reply.in()).type());
            verifier = Xdr.getFixedOpaque(reply.in(), 8);
            int nameOctets = 0;
            while (Xdr.getBoolean(reply.in())) {
                Xdr.getHyper(reply.in());
                String name = Xdr.getString(reply.in(), 255);
                nameOctets += 8 + 4 + name.length() + Xdr.pad(name.length()) + 8;
                names.add(name);
                cookie = Xdr.getHyper(reply.in());
                if (plus) {
                    assertNotNull(Fattr.postOp(reply.in()));
                    assertTrue(Xdr.getBoolean(reply.in()));
                    byte[] fh = Xdr.getOpaque(reply.in(), 64);
                    assertEquals(0, getattrStatus(fh), "the handle of " + name);
                }
            }
            assertTrue(!plus || nameOctets <= dircount, "dircount exceeded: " + nameOctets);
            if (Xdr.getBoolean(reply.in())) {
                return names;
            }
        }
        throw new AssertionError("READDIR never reached the end");
    }

    @Test
    void readdirInPieces() throws Exception {
        TreeSet<String> expected = new TreeSet<>(List.of(".", ".."));
        for (int i = 0; i < 60; i++) {
            String name = "file-" + i + "-" + "x".repeat(i % 13);
            Files.createFile(dir.resolve(name));
            expected.add(name);
        }
        List<String> small = readdirAll(root, false, 512, 512);
        assertEquals(expected.size(), small.size(), "each name once");
        assertEquals(expected, new TreeSet<>(small));
        assertEquals(expected, new TreeSet<>(readdirAll(root, false, 64 << 10, 64 << 10)));
        List<String> byDircount = readdirAll(root, true, 100, 4096);
        assertEquals(expected.size(), byDircount.size());
        assertEquals(expected, new TreeSet<>(byDircount));
        List<String> byMaxcount = readdirAll(root, true, 4096, 1200);
        assertEquals(expected.size(), byMaxcount.size());
        assertEquals(expected, new TreeSet<>(byMaxcount));

        Reply tooSmall = call(Nfs3Service.READDIR, out -> {
            Xdr.putOpaque(out, root);
            Xdr.putHyper(out, 0);
            Xdr.putFixedOpaque(out, new byte[8]);
            Xdr.putInt(out, 100);
        });
        assertEquals(Nfs3Error.TOOSMALL, tooSmall.status());
        assertEquals(Nfs3Error.NOTDIR, call(Nfs3Service.READDIR, out -> {
            Xdr.putOpaque(out, lookup(root, "file-1-x"));
            Xdr.putHyper(out, 0);
            Xdr.putFixedOpaque(out, new byte[8]);
            Xdr.putInt(out, 4096);
        }).status());
    }

    /**
     * rm -r as the Linux client does it: a READDIR in pieces, each piece's names removed before the
     * next READDIR with the last cookie. Every name is listed once and the directory ends empty
     * (cookies as indexes into the listing skipped the names that moved up behind the cookie).
     */
    @Test
    void removingWhileListingMissesNoName() throws Exception {
        Files.createDirectory(dir.resolve("tree"));
        TreeSet<String> expected = new TreeSet<>();
        for (int i = 0; i < 200; i++) {
            Files.createFile(dir.resolve("tree/f" + i));
            expected.add("f" + i);
        }
        byte[] tree = lookup(root, "tree");
        List<String> seen = new ArrayList<>();
        long cookie = 0;
        for (int calls = 0; calls < 1000; calls++) {
            long from = cookie;
            Reply reply = call(Nfs3Service.READDIR, out -> {
                Xdr.putOpaque(out, tree);
                Xdr.putHyper(out, from);
                Xdr.putFixedOpaque(out, new byte[8]);
                Xdr.putInt(out, 1024);
            });
            assertEquals(0, reply.status());
            Fattr.postOp(reply.in());
            Xdr.getFixedOpaque(reply.in(), 8);
            while (Xdr.getBoolean(reply.in())) {
                Xdr.getHyper(reply.in());
                String name = Xdr.getString(reply.in(), 255);
                cookie = Xdr.getHyper(reply.in());
                if (!name.equals(".") && !name.equals("..")) {
                    seen.add(name);
                    assertEquals(0, call(Nfs3Service.REMOVE, dirop(tree, name)).status(), "REMOVE " + name);
                }
            }
            if (Xdr.getBoolean(reply.in())) {
                break;
            }
        }
        assertEquals(expected.size(), seen.size(), "each name once");
        assertEquals(expected, new TreeSet<>(seen));
        try (var left = Files.list(dir.resolve("tree"))) {
            assertEquals(0, left.count(), "the directory is empty");
        }
    }

    @Test
    void fileSystemInformation() {
        Reply fsinfo = call(Nfs3Service.FSINFO, out -> Xdr.putOpaque(out, root));
        assertEquals(0, fsinfo.status());
        assertNotNull(Fattr.postOp(fsinfo.in()));
        int[] sizes = new int[7];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = Xdr.getInt(fsinfo.in());
        }
        assertArrayEquals(new int[] {1 << 20, 1 << 20, 4096, 1 << 20, 1 << 20, 4096, 64 << 10}, sizes);
        assertEquals(Long.MAX_VALUE, Xdr.getHyper(fsinfo.in()));
        assertEquals(0, Xdr.getInt(fsinfo.in()));
        assertEquals(1, Xdr.getInt(fsinfo.in()), "time_delta 1 ns");
        assertEquals(0x1b, Xdr.getInt(fsinfo.in()), "LINK, SYMLINK, HOMOGENEOUS, CANSETTIME");

        Reply pathconf = call(Nfs3Service.PATHCONF, out -> Xdr.putOpaque(out, root));
        assertEquals(0, pathconf.status());
        Fattr.postOp(pathconf.in());
        Xdr.getInt(pathconf.in());
        assertEquals(255, Xdr.getInt(pathconf.in()));
        assertTrue(Xdr.getBoolean(pathconf.in()), "no_trunc");
        assertTrue(Xdr.getBoolean(pathconf.in()), "chown_restricted");
        assertFalse(Xdr.getBoolean(pathconf.in()), "case_insensitive");
        assertTrue(Xdr.getBoolean(pathconf.in()), "case_preserving");

        Reply fsstat = call(Nfs3Service.FSSTAT, out -> Xdr.putOpaque(out, root));
        assertEquals(0, fsstat.status());
        Fattr.postOp(fsstat.in());
        long total = Xdr.getHyper(fsstat.in());
        long free = Xdr.getHyper(fsstat.in());
        long available = Xdr.getHyper(fsstat.in());
        assertTrue(total > 0 && free <= total && available <= free, total + " " + free + " " + available);
    }

    @Test
    void readOnlyRefusesEveryChange() throws Exception {
        byte[] file = create(root, "file");
        byte[] sub = mkdir(root, "sub");
        Files.writeString(dir.resolve("file"), "kept");
        try (NfsExport readOnly = NfsExport.open(dir, new NfsExport.Options(true))) {
            Nfs3Calls ro = new Nfs3Calls(readOnly.nfs(), 100003);
            List<Reply> replies = List.of(
                    ro.call(Nfs3Service.SETATTR, out -> {
                        Xdr.putOpaque(out, file);
                        sattr(out, 0600, 0);
                        Xdr.putBoolean(out, false);
                    }),
                    ro.call(Nfs3Service.WRITE, out -> {
                        Xdr.putOpaque(out, file);
                        Xdr.putHyper(out, 0);
                        Xdr.putInt(out, 1);
                        Xdr.putInt(out, Nfs3Service.FILE_SYNC);
                        Xdr.putOpaque(out, new byte[] {'X'});
                    }),
                    ro.call(Nfs3Service.CREATE, out -> {
                        dirop(root, "new").accept(out);
                        Xdr.putInt(out, Nfs3Service.UNCHECKED);
                        sattr(out, 0644, -1);
                    }),
                    ro.call(Nfs3Service.MKDIR, out -> {
                        dirop(root, "new").accept(out);
                        sattr(out, 0755, -1);
                    }),
                    ro.call(Nfs3Service.SYMLINK, out -> {
                        dirop(root, "new").accept(out);
                        sattr(out, -1, -1);
                        Xdr.putString(out, "file");
                    }),
                    ro.call(Nfs3Service.MKNOD, out -> {
                        dirop(root, "new").accept(out);
                        Xdr.putInt(out, Attributes.NF3FIFO);
                        sattr(out, 0644, -1);
                    }),
                    ro.call(Nfs3Service.REMOVE, dirop(root, "file")),
                    ro.call(Nfs3Service.RMDIR, dirop(root, "sub")),
                    ro.call(Nfs3Service.RENAME, out -> {
                        dirop(root, "file").accept(out);
                        dirop(sub, "moved").accept(out);
                    }),
                    ro.call(Nfs3Service.LINK, out -> {
                        Xdr.putOpaque(out, file);
                        dirop(sub, "linked").accept(out);
                    }));
            for (int i = 0; i < replies.size(); i++) {
                assertEquals(Nfs3Error.ROFS, replies.get(i).status(), "change " + i);
            }
            Reply read = ro.call(Nfs3Service.READ, out -> {
                Xdr.putOpaque(out, file);
                Xdr.putHyper(out, 0);
                Xdr.putInt(out, 10);
            });
            assertEquals(0, read.status(), "reading goes on");
            Reply access = ro.call(Nfs3Service.ACCESS, out -> {
                Xdr.putOpaque(out, file);
                Xdr.putInt(out, 0x3f);
            });
            access.status();
            Fattr.postOp(access.in());
            assertEquals(Nfs3Service.ACCESS3_READ, Xdr.getInt(access.in()), "ACCESS grants no change");
            assertEquals(10, readOnly.statistics().errors(), "ten refusals counted");
        }
        assertEquals("kept", Files.readString(dir.resolve("file")));
        assertEquals(List.of("file", "sub"), Files.list(dir).map(p -> p.getFileName().toString()).sorted().toList());
    }

    @Test
    void statisticsCountCallsAndOctets() {
        byte[] fh = create(root, "file");
        write(fh, 0, new byte[1000], Nfs3Service.UNSTABLE);
        read(fh, 0, 600);
        assertEquals(Nfs3Error.NOENT, lookupReply(root, "nothing").status());
        assertEquals(Nfs3Error.NOTDIR, lookupReply(fh, "within-a-file").status());
        NfsExport.Statistics statistics = export.statistics();
        assertEquals(1000, statistics.octetsWritten());
        assertEquals(600, statistics.octetsRead());
        assertEquals(1, statistics.errors(), "NOTDIR counted, a missing name not");
        assertEquals(6, statistics.calls(), "MNT, CREATE, WRITE, READ, two LOOKUPs");
    }

    @Test
    void concurrentCallsOnTheirOwnFiles() throws Exception {
        int threads = 4;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    for (int round = 0; round < 20; round++) {
                        String name = "t" + id + "-" + round;
                        byte[] fh = create(root, name);
                        byte[] data = (name + " ").repeat(100).getBytes(StandardCharsets.US_ASCII);
                        assertEquals(0, write(fh, 0, data, Nfs3Service.DATA_SYNC).status());
                        Reply back = read(lookup(root, name), 0, data.length);
                        assertEquals(0, back.status());
                        assertArrayEquals(data, back.ddp(), name);
                        if (round % 2 == 0) {
                            assertEquals(0, call(Nfs3Service.REMOVE, dirop(root, name)).status());
                        }
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> future : done) {
                future.get(50, java.util.concurrent.TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(threads * 10 + 2, readdirAll(root, false, 4096, 4096).size(), "the files kept, '.' and '..'");
    }

    static byte[] forge(byte[] like, long ino) {
        ByteBuffer b = ByteBuffer.wrap(like.clone());
        b.putLong(20, ino);
        return b.array();
    }
}
