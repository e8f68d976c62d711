package org.jiwarp.rpcrdma.nfs.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.Rpc;
import org.jiwarp.rpcrdma.Xdr;
import org.jiwarp.rpcrdma.nfs.server.Nfs3Calls.Reply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** MOUNT version 3's procedures called directly. */
@Timeout(30)
class MountServiceTest {

    @TempDir
    Path tmp;
    private NfsExport export;
    private Nfs3Calls mount;

    @BeforeEach
    void open() throws Exception {
        export = NfsExport.open(Files.createDirectory(tmp.resolve("export")), NfsExport.Options.defaults());
        mount = new Nfs3Calls(export.mount(), 100005).as(AuthSys.root("client-one"));
    }

    @Test
    void mntGivesTheRootAndAuthSys() {
        assertEquals(tmp.resolve("export").toAbsolutePath().toString(), export.mountPath());
        assertEquals(tmp.resolve("export"), export.directory());
        Reply reply = mount.call(MountService.MNT, out -> Xdr.putString(out, export.mountPath()));
        assertEquals(Rpc.SUCCESS, reply.acceptStat());
        assertEquals(MountService.MNT3_OK, reply.status());
        byte[] root = Xdr.getOpaque(reply.in(), 64);
        assertEquals(1, Xdr.getInt(reply.in()), "one flavor");
        assertEquals(AuthSys.FLAVOR, Xdr.getInt(reply.in()));
        Reply getattr = new Nfs3Calls(export.nfs(), 100003).call(Nfs3Service.GETATTR, out -> Xdr.putOpaque(out, root));
        assertEquals(0, getattr.status(), "the handle is the NFS program's");
        assertArrayEquals(root, FileHandlesTest.mountRoot(export));
    }

    /**
     * Each handler serves its own program alone: the Linux client asks NFSACL (100227) on the NFS
     * port, and answered as NFS its GETACL reads as an ACL that denies every write.
     */
    @Test
    void eachHandlerServesItsOwnProgramAlone() {
        assertEquals(Rpc.PROG_UNAVAIL, new Nfs3Calls(export.nfs(), 100227).call(0, out -> { }).acceptStat(),
                "NFSACL on the NFS handler");
        assertEquals(Rpc.PROG_UNAVAIL, new Nfs3Calls(export.mount(), 100003).call(0, out -> { }).acceptStat(),
                "NFS on the MOUNT handler");
        assertEquals(Rpc.SUCCESS, new Nfs3Calls(export.nfs(), 100003).call(0, out -> { }).acceptStat());
    }

    @Test
    void onlyADirectoryOpens() throws Exception {
        Path file = Files.writeString(tmp.resolve("file"), "not a directory");
        assertThrows(NotDirectoryException.class, () -> NfsExport.open(file, NfsExport.Options.defaults()));
        assertThrows(NoSuchFileException.class, () -> NfsExport.open(tmp.resolve("missing"), NfsExport.Options.defaults()));
    }

    @Test
    void otherPathsAreRefused() {
        for (String path : new String[] {"/", export.mountPath() + "/sub", tmp.toString(), ""}) {
            Reply reply = mount.call(MountService.MNT, out -> Xdr.putString(out, path));
            assertEquals(MountService.MNT3ERR_NOENT, reply.status(), path);
            assertEquals(0, reply.in().readableBytes(), "no handle after an error");
        }
        assertEquals(Rpc.GARBAGE_ARGS, mount.call(MountService.MNT, out -> Xdr.putInt(out, 2000)).acceptStat(),
                "a path beyond MNTPATHLEN");
    }

    @Test
    void dumpUmntAndExport() {
        Reply empty = mount.call(MountService.DUMP, out -> { });
        assertFalse(Xdr.getBoolean(empty.in()), "no mounts yet");
        mount.call(MountService.MNT, out -> Xdr.putString(out, export.mountPath()));
        Reply dump = mount.call(MountService.DUMP, out -> { });
        assertTrue(Xdr.getBoolean(dump.in()));
        assertEquals("client-one", Xdr.getString(dump.in(), 255));
        assertEquals(export.mountPath(), Xdr.getString(dump.in(), 1024));
        assertFalse(Xdr.getBoolean(dump.in()));

        Reply umnt = mount.call(MountService.UMNT, out -> Xdr.putString(out, export.mountPath()));
        assertEquals(Rpc.SUCCESS, umnt.acceptStat());
        assertEquals(0, umnt.in().readableBytes(), "UMNT returns nothing");
        assertFalse(Xdr.getBoolean(mount.call(MountService.DUMP, out -> { }).in()), "gone after UMNT");
        mount.call(MountService.MNT, out -> Xdr.putString(out, export.mountPath()));
        mount.call(MountService.UMNTALL, out -> { });
        assertFalse(Xdr.getBoolean(mount.call(MountService.DUMP, out -> { }).in()), "gone after UMNTALL");

        Reply exports = mount.call(MountService.EXPORT, out -> { });
        assertTrue(Xdr.getBoolean(exports.in()));
        assertEquals(export.mountPath(), Xdr.getString(exports.in(), 1024));
        assertFalse(Xdr.getBoolean(exports.in()), "no groups");
        assertFalse(Xdr.getBoolean(exports.in()), "one export");
        assertEquals(Rpc.SUCCESS, mount.call(MountService.NULL, out -> { }).acceptStat());
        assertEquals(Rpc.PROC_UNAVAIL, mount.call(6, out -> { }).acceptStat());
    }
}
