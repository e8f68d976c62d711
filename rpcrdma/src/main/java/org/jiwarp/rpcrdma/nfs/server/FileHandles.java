package org.jiwarp.rpcrdma.nfs.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * File handles of one export ({@code nfs_fh3}, RFC 1813 section 2.5: opaque, at most 64 octets)
 * and their resolution to paths inside it.
 *
 * <pre>
 * 0       1       4              12             20             28
 * +-------+-------+--------------+--------------+--------------+
 * |version| zero  |  export id   |     dev      |     ino      |
 * +-------+-------+--------------+--------------+--------------+
 * </pre>
 *
 * <p>The export id is the first 8 octets of SHA-256 over the export directory's real path, so a
 * handle survives a server restart on the same directory; dev and ino name the file as Linux
 * does. Resolving goes through a bounded ino-to-path cache filled by every procedure that names a
 * file; a cached path is re-checked with {@code lstat} (a rename may have moved it), and on a miss
 * (after a restart, or a rename) the export tree is walked breadth first, never following a
 * symbolic link, up to {@link #WALK_LIMIT} entries. A handle whose inode is not found in the tree
 * is STALE; one of the wrong length, version or export id is BADHANDLE. So a forged handle can
 * only ever name a file found inside the export, and the parent of every path resolved is checked
 * to lie inside the export's real path.
 *
 * <p>A walk that goes through the whole export, every directory read and the cache never emptied
 * meanwhile, leaves every inode of the export in the cache: until the cache is next emptied, an
 * inode not in it is STALE without another walk. A client learns every other handle from this
 * server (LOOKUP, CREATE, READDIRPLUS ... remember the path), so only a forged handle misses the
 * cache then, and forged handles cost one walk, not one each. An inode whose cached path no longer
 * names it (renamed outside NFS) is still looked for by a walk.
 */
final class FileHandles {

    static final int LENGTH = 28;
    static final int VERSION = 1;
    /** Entries in the ino-to-path cache before it is emptied and refilled. */
    static final int CACHE_LIMIT = 1 << 16;
    /** Directory entries one walk looks at before it gives up with STALE. */
    static final int WALK_LIMIT = 1 << 20;

    private final Path root;
    private final long exportId;
    private final long rootDev;
    private final long rootIno;
    private final Map<Long, Path> paths = new ConcurrentHashMap<>();
    /** Times the cache was emptied: a walk during which it was emptied indexed nothing. */
    private final AtomicLong emptied = new AtomicLong();
    /** Whether a whole walk has put every inode of the export in the cache since it was last emptied. */
    private volatile boolean indexed;
    private final AtomicLong walks = new AtomicLong();

    FileHandles(Path realRoot) throws IOException {
        this.root = realRoot;
        this.exportId = exportId(realRoot);
        Attributes attributes = Attributes.of(realRoot);
        this.rootDev = attributes.dev();
        this.rootIno = attributes.ino();
    }

    private static long exportId(Path realRoot) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(realRoot.toString().getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the platform has no SHA-256", e);
        }
    }

    Path root() {
        return root;
    }

    /** The export id, also the {@code fsid} of every file. */
    long exportId() {
        return exportId;
    }

    byte[] rootHandle() {
        return handle(rootDev, rootIno);
    }

    /** The handle of {@code path}, whose attributes are {@code attributes}; remembers the path. */
    byte[] handle(Path path, Attributes attributes) {
        remember(path, attributes.ino());
        return handle(attributes.dev(), attributes.ino());
    }

    private byte[] handle(long dev, long ino) {
        ByteBuffer fh = ByteBuffer.allocate(LENGTH);
        fh.put((byte) VERSION).put(new byte[3]).putLong(exportId).putLong(dev).putLong(ino);
        return fh.array();
    }

    void remember(Path path, long ino) {
        if (paths.size() >= CACHE_LIMIT) {
            indexed = false;
            emptied.incrementAndGet();
            paths.clear();
        }
        paths.put(ino, path);
    }

    /** Walks of the export so far. */
    long walks() {
        return walks.get();
    }

    /** Forgets a path after REMOVE or RMDIR. */
    void forget(long ino) {
        paths.remove(ino);
    }

    /**
     * The path inside the export that {@code fh} names.
     *
     * @throws Nfs3Error BADHANDLE for a handle not of this export's form, STALE for one whose file is gone
     */
    Path resolve(byte[] fh) {
        ByteBuffer b = ByteBuffer.wrap(fh);
        if (fh.length != LENGTH || b.get() != VERSION || b.get() != 0 || b.getShort() != 0 || b.getLong() != exportId) {
            throw new Nfs3Error(Nfs3Error.BADHANDLE);
        }
        long dev = b.getLong();
        long ino = b.getLong();
        if (dev == rootDev && ino == rootIno) {
            return root;
        }
        Path cached = paths.get(ino);
        if (cached != null && names(cached, dev, ino) && inside(cached)) {
            return cached;
        }
        if (cached == null && indexed) {
            throw new Nfs3Error(Nfs3Error.STALE); // not among the inodes a whole walk found
        }
        Path found = walk(dev, ino);
        if (found == null || !inside(found)) {
            throw new Nfs3Error(Nfs3Error.STALE);
        }
        return found;
    }

    private static boolean names(Path path, long dev, long ino) {
        Attributes attributes = Attributes.orNull(path);
        return attributes != null && attributes.dev() == dev && attributes.ino() == ino;
    }

    /** Whether the directory holding {@code path} is, with every link resolved, inside the export. */
    private boolean inside(Path path) {
        Path parent = path.getParent();
        try {
            return path.startsWith(root) && parent != null && parent.toRealPath().startsWith(root);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Breadth first through the export, never following a link, remembering what it passes; a
     * walk that finds nothing after reading every directory, the cache not emptied meanwhile,
     * leaves the export indexed.
     */
    private Path walk(long dev, long ino) {
        walks.incrementAndGet();
        long emptiedBefore = emptied.get();
        boolean whole = true;
        ArrayDeque<Path> directories = new ArrayDeque<>();
        directories.add(root);
        int seen = 0;
        while (!directories.isEmpty()) {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(directories.poll())) {
                for (Path entry : entries) {
                    if (++seen > WALK_LIMIT) {
                        return null;
                    }
                    Attributes attributes = Attributes.orNull(entry);
                    if (attributes == null) {
                        continue;
                    }
                    remember(entry, attributes.ino());
                    if (attributes.dev() == dev && attributes.ino() == ino) {
                        return entry;
                    }
                    if (attributes.isDirectory()) {
                        directories.add(entry);
                    }
                }
            } catch (IOException | InvalidPathException | java.nio.file.DirectoryIteratorException e) {
                whole = false; // a directory that cannot be read, or one that went away: walk on
            }
        }
        if (whole && emptied.get() == emptiedBefore) {
            indexed = true;
        }
        return null;
    }
}
