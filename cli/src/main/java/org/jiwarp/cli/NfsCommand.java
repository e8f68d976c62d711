package org.jiwarp.cli;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.RpcException;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.TcpRpcClient;
import org.jiwarp.rpcrdma.nfs.Fattr3;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import org.jiwarp.tools.Failures;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code jiwarp nfs}: an NFSv3 client over RPC-over-RDMA (RFC 8166, RFC 8267) against a server
 * such as Linux's nfsd with {@code rdma 20049} in its portlist. MOUNT goes over TCP to
 * {@code --mount-port} (no rpcbind lookup: give the port rpc.mountd listens on, {@code -p}); the
 * path is mounted when it is a directory the server lets mount, else its parent is and the last
 * name is looked up (or created, for put). {@code jiwarp nfs serve} ({@link NfsServeCommand}) is
 * the server's side, a subcommand with options of its own.
 */
@Command(name = "nfs", sortOptions = false, subcommands = NfsServeCommand.class,
        description = {"NFSv3 over RDMA (RPC-over-RDMA version 1): list a directory, print a file's attributes, "
                + "read a file (READ into a Write chunk) or write one (WRITE from a Read chunk); or serve a "
                + "directory (jiwarp nfs serve --help).",
                "  jiwarp nfs ls    HOST:/export/dir",
                "  jiwarp nfs stat  HOST:/export/file",
                "  jiwarp nfs cat   HOST:/export/file [-o LOCAL]",
                "  jiwarp nfs put   LOCAL HOST:/export/file",
                "  jiwarp nfs serve DIR"})
final class NfsCommand implements Callable<Integer> {

    static final int MAX_IO = 1 << 20;

    /** Optional to picocli only, so that {@code serve} is taken as the subcommand it is; checked in {@link #call}. */
    @Parameters(index = "0", arity = "0..1", paramLabel = "ls|stat|cat|put", description = "What to do (or the "
            + "serve subcommand).")
    String action;

    @Parameters(index = "1..*", paramLabel = "ARG", description = "HOST:/path, and for put the local file first.")
    List<String> arguments;

    @Option(names = "--port", paramLabel = "PORT", description = "The NFS server's RPC-over-RDMA port (default "
            + "${DEFAULT-VALUE}).")
    int port = 20049;

    @Option(names = "--mount-port", paramLabel = "PORT", description = "rpc.mountd's TCP port (default "
            + "${DEFAULT-VALUE}).")
    int mountPort = 20048;

    @Option(names = "--tcp", description = "NFS over TCP (RPC record marking) to --tcp-port instead of RDMA: the same "
            + "calls, their data inline; to compare the two transports on one server.")
    boolean tcp;

    @Option(names = "--tcp-port", paramLabel = "PORT", description = "The NFS server's TCP port, with --tcp (default "
            + "${DEFAULT-VALUE}).")
    int tcpPort = 2049;

    @Option(names = "--rsize", paramLabel = "OCTETS", description = "Octets per READ, 4096 to 1048576 (default "
            + "${DEFAULT-VALUE}).")
    int rsize = MAX_IO;

    @Option(names = "--wsize", paramLabel = "OCTETS", description = "Octets per WRITE, 4096 to 1048576 (default "
            + "${DEFAULT-VALUE}).")
    int wsize = MAX_IO;

    @Option(names = "--depth", paramLabel = "N", description = "READs or WRITEs in flight at once, 1 to 16 "
            + "(default ${DEFAULT-VALUE}; the server's credits bound them too).")
    int depth = 4;

    @Option(names = {"-o", "--output"}, paramLabel = "LOCAL", description = "cat: write the file here instead of "
            + "standard output (through a temporary file, so an interrupted run leaves no half file).")
    Path output;

    @Option(names = "--no-remote-invalidation", description = "Do not offer Remote Invalidation in the RFC 8797 "
            + "private data (the server then answers with plain Sends).")
    boolean noRemoteInvalidation;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Option(names = {"-V", "--version"}, versionHelp = true, description = "Print version information and exit.")
    boolean version;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        if (action == null) {
            throw new CommandLine.ParameterException(line, "missing required parameter: 'ls|stat|cat|put' (or serve "
                    + "DIR to serve a directory)");
        }
        int wanted = "put".equals(action) ? 2 : 1;
        if (!List.of("ls", "stat", "cat", "put").contains(action)) {
            throw new CommandLine.ParameterException(line, "unknown action " + action + ": give ls, stat, cat or put");
        }
        if (arguments == null || arguments.size() != wanted) {
            throw new CommandLine.ParameterException(line, action + " takes " + (wanted == 2
                    ? "a local file and HOST:/path" : "one HOST:/path"));
        }
        for (int size : new int[] {rsize, wsize}) {
            if (size < 4096 || size > MAX_IO) {
                throw new CommandLine.ParameterException(line, "--rsize and --wsize are 4096 to 1048576 octets");
            }
        }
        if (depth < 1 || depth > 16) {
            throw new CommandLine.ParameterException(line, "--depth is 1 to 16");
        }
        ConnectionOptions.checkPort(line, "--port", port, false);
        ConnectionOptions.checkPort(line, "--mount-port", mountPort, false);
        ConnectionOptions.checkPort(line, "--tcp-port", tcpPort, false);
        connection.validate(line);
        Target target = Target.parse(line, arguments.get(wanted - 1));
        Path local = wanted == 2 ? Path.of(arguments.get(0)) : null;
        if (local != null && !Files.isRegularFile(local)) {
            throw new CommandLine.ParameterException(line, "no such local file: " + local);
        }
        PrintWriter err = line.getErr();
        Path capture = connection.captureDirectory();
        try (Rnic rnic = Rnic.open(connection.rnicOptions(1, capture))) {
            return run(rnic, target, local, line.getOut(), err);
        } catch (RpcException | IOException e) {
            err.println("jiwarp nfs: " + Failures.describe(e));
            if (Jiwarp.debug(line)) {
                e.printStackTrace(err);
            }
            err.flush();
            return Jiwarp.EXIT_RUNTIME_ERROR;
        } finally {
            connection.mergeCapture(capture);
        }
    }

    private int run(Rnic rnic, Target target, Path local, PrintWriter out, PrintWriter err) throws IOException {
        InetSocketAddress mountd = new InetSocketAddress(target.host, mountPort);
        InetSocketAddress server = new InetSocketAddress(target.host, tcp ? tcpPort : port);
        if (server.isUnresolved()) {
            throw new RpcException("unknown host " + target.host);
        }
        AuthSys credential = AuthSys.root("jiwarp");
        // The parent directory is mounted and the name looked up; an export's own root (whose
        // parent the server does not export) is mounted itself.
        byte[] dir = null;
        String name = target.name();
        if (name != null) {
            try {
                dir = Nfs3Client.mountHandle(mountd, target.parent(), credential);
            } catch (RpcException parentNotExported) {
                if ("put".equals(action)) {
                    throw parentNotExported;
                }
            }
        }
        if (dir == null) {
            dir = Nfs3Client.mountHandle(mountd, target.path, credential);
            name = null;
        }
        RpcRdmaClient.Options options = RpcRdmaClient.Options.defaults().remoteInvalidation(!noRemoteInvalidation);
        try (Nfs3Client nfs = tcp ? Nfs3Client.connect(TcpRpcClient.connect(server), dir, rsize, wsize)
                : Nfs3Client.connect(rnic, server, dir, rsize, wsize, options)) {
            switch (action) {
                case "ls":
                    return list(nfs, name == null ? dir : nfs.lookup(dir, name), out);
                case "stat":
                    return stat(nfs, name == null ? dir : nfs.lookup(dir, name), target, out);
                case "cat":
                    byte[] file = name == null ? dir : nfs.lookup(dir, name);
                    if (nfs.getattr(file).type() == Fattr3.NF3DIR) {
                        throw new RpcException(target + " is a directory");
                    }
                    return cat(nfs, file, target, out, err);
                default:
                    return put(nfs, dir, name, local, target, err);
            }
        }
    }

    private static int list(Nfs3Client nfs, byte[] dir, PrintWriter out) {
        nfs.readdir(dir).stream().map(Nfs3Client.Entry::name).filter(n -> !n.equals(".") && !n.equals(".."))
                .sorted().forEach(out::println);
        out.flush();
        return 0;
    }

    private static int stat(Nfs3Client nfs, byte[] fh, Target target, PrintWriter out) {
        Fattr3 a = nfs.getattr(fh);
        out.printf(Locale.ROOT, "  File: %s%n  Type: %s%n  Size: %d%n  Mode: %04o%n   Uid: %d%n   Gid: %d%n"
                        + " Links: %d%nFileid: %d%nModify: %s%n", target, a.typeName(), a.size(), a.mode() & 07777,
                a.uid(), a.gid(), a.nlink(), a.fileid(), Instant.ofEpochSecond(0, a.mtimeNanos()));
        out.flush();
        return 0;
    }

    private int cat(Nfs3Client nfs, byte[] fh, Target target, PrintWriter out, PrintWriter err) throws IOException {
        Path partial = output == null ? null : Files.createTempFile(output.toAbsolutePath().getParent(),
                "." + output.getFileName(), ".partial");
        long start = System.nanoTime();
        long offset = 0;
        ExecutorService pool = pool(depth);
        ArrayDeque<Future<Piece>> window = new ArrayDeque<>();
        boolean done = false;
        try (OutputStream sink = partial == null ? new UncloseableStdout() : Files.newOutputStream(partial)) {
            // READs of rsize at consecutive offsets, up to --depth in flight, written in order.
            long next = 0;
            for (int i = 0; i < depth; i++, next += rsize) {
                window.add(submitRead(pool, nfs, fh, next, rsize));
            }
            while (!window.isEmpty()) {
                Piece piece = await(window.poll());
                try {
                    if (done) {
                        continue; // READs past the end, issued before the end was known
                    }
                    int got = piece.data.readableBytes();
                    piece.data.readBytes(sink, got);
                    offset += got;
                    boolean eof = piece.eof;
                    while (!eof && offset < piece.offset + rsize) { // a short READ: the rest, in order
                        ByteBuf rest = Unpooled.buffer();
                        try {
                            eof = nfs.read(fh, offset, (int) (piece.offset + rsize - offset), rest);
                            if (!eof && !rest.isReadable()) {
                                throw new RpcException("the server returned no data at offset " + offset
                                        + " before end of file");
                            }
                            offset += rest.readableBytes();
                            rest.readBytes(sink, rest.readableBytes());
                        } finally {
                            rest.release();
                        }
                    }
                    done = eof;
                    if (!done) {
                        window.add(submitRead(pool, nfs, fh, next, rsize));
                        next += rsize;
                    }
                } finally {
                    piece.data.release();
                }
            }
        } catch (RpcException | IOException e) {
            drain(window);
            if (partial != null) {
                Files.deleteIfExists(partial);
            }
            throw e;
        } finally {
            pool.shutdownNow();
        }
        if (partial != null) {
            Files.move(partial, output, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            report(err, "read", offset, target, start);
        }
        return 0;
    }

    private int put(Nfs3Client nfs, byte[] dir, String name, Path local, Target target, PrintWriter err)
            throws IOException {
        long start = System.nanoTime();
        byte[] fh = nfs.create(dir, name, 0644);
        long offset = 0;
        ExecutorService pool = pool(depth);
        ArrayDeque<Future<Piece>> window = new ArrayDeque<>();
        try (InputStream in = Files.newInputStream(local)) {
            // WRITEs of wsize (the last one shorter), up to --depth in flight.
            while (true) {
                if (window.size() == depth) {
                    await(window.poll()).data.release();
                }
                ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(wsize);
                try {
                    while (chunk.isWritable() && chunk.writeBytes(in, chunk.writableBytes()) > 0) {
                        // fill the chunk
                    }
                } catch (IOException e) {
                    chunk.release();
                    throw e;
                }
                if (!chunk.isReadable()) {
                    chunk.release();
                    break;
                }
                long at = offset;
                offset += chunk.readableBytes();
                window.add(pool.submit(() -> {
                    int written = 0;
                    int n = chunk.readableBytes();
                    while (written < n) {
                        int w = nfs.write(fh, at + written, chunk.slice(written, n - written));
                        if (w <= 0) {
                            throw new RpcException("the server wrote nothing at offset " + (at + written));
                        }
                        written += w;
                    }
                    return new Piece(at, chunk, false);
                }));
            }
            while (!window.isEmpty()) {
                await(window.poll()).data.release();
            }
        } catch (RpcException | IOException e) {
            drain(window);
            throw e;
        } finally {
            pool.shutdownNow();
        }
        report(err, "wrote", offset, target, start);
        return 0;
    }

    /** One READ's or WRITE's data at its file offset. */
    private record Piece(long offset, ByteBuf data, boolean eof) {
    }

    private static Future<Piece> submitRead(ExecutorService pool, Nfs3Client nfs, byte[] fh, long offset, int count) {
        return pool.submit(() -> {
            ByteBuf data = Unpooled.buffer(count);
            try {
                boolean eof = nfs.read(fh, offset, count, data);
                return new Piece(offset, data, eof);
            } catch (RuntimeException e) {
                data.release();
                throw e;
            }
        });
    }

    private static Piece await(Future<Piece> future) {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RpcException r ? r : new RpcException(Failures.describe(e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("interrupted", e);
        }
    }

    /** After a failure: waits for the calls in flight and releases what they hold. */
    private static void drain(ArrayDeque<Future<Piece>> window) {
        for (Future<Piece> future : window) {
            try {
                future.get().data.release();
            } catch (ExecutionException | InterruptedException | java.util.concurrent.CancellationException ignored) {
                // its failure is not the first one
            }
        }
        window.clear();
    }

    private static ExecutorService pool(int threads) {
        return Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "jiwarp-nfs-io");
            thread.setDaemon(true);
            return thread;
        });
    }

    private static void report(PrintWriter err, String verb, long octets, Target target, long start) {
        double seconds = (System.nanoTime() - start) / 1e9;
        err.printf(Locale.ROOT, "jiwarp nfs: %s %d octets %s %s in %.2f s (%.1f MB/s)%n", verb, octets,
                verb.equals("read") ? "from" : "to", target, seconds, octets / 1e6 / Math.max(seconds, 1e-9));
        err.flush();
    }

    /** HOST:/path. */
    record Target(String host, String path) {

        static Target parse(CommandLine line, String text) {
            int colon = text.lastIndexOf(":/");
            if (colon <= 0) {
                throw new CommandLine.ParameterException(line, "give the NFS path as HOST:/export/path, not " + text);
            }
            String host = text.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            String path = text.substring(colon + 1).replaceAll("/+$", "");
            return new Target(host, path.isEmpty() ? "/" : path);
        }

        String parent() {
            int slash = path.lastIndexOf('/');
            return slash <= 0 ? "/" : path.substring(0, slash);
        }

        /** The last name, or {@code null} for "/". */
        String name() {
            int slash = path.lastIndexOf('/');
            return slash < 0 || slash == path.length() - 1 ? null : path.substring(slash + 1);
        }

        @Override
        public String toString() {
            return host + ":" + path;
        }
    }

    /** Standard output that a try-with-resources flushes but does not close. */
    private static final class UncloseableStdout extends OutputStream {
        @Override
        public void write(int b) {
            System.out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            System.out.write(b, off, len);
        }

        @Override
        public void close() {
            System.out.flush();
        }
    }
}
