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
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.RpcException;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.nfs.Fattr3;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp nfs}: an NFSv3 client over RPC-over-RDMA (RFC 8166, RFC 8267) against a server
 * such as Linux's nfsd with {@code rdma 20049} in its portlist. MOUNT goes over TCP to
 * {@code --mount-port} (no rpcbind lookup: give the port rpc.mountd listens on, {@code -p}); the
 * path is mounted when it is a directory the server lets mount, else its parent is and the last
 * name is looked up (or created, for put).
 */
@Command(name = "nfs", sortOptions = false,
        description = {"NFSv3 over RDMA (RPC-over-RDMA version 1): list a directory, print a file's attributes, "
                + "read a file (READ into a Write chunk) or write one (WRITE from a Read chunk).",
                "  jiwarp nfs ls   HOST:/export/dir",
                "  jiwarp nfs stat HOST:/export/file",
                "  jiwarp nfs cat  HOST:/export/file [-o LOCAL]",
                "  jiwarp nfs put  LOCAL HOST:/export/file"})
final class NfsCommand implements Callable<Integer> {

    static final int MAX_IO = 1 << 20;

    @Parameters(index = "0", paramLabel = "ls|stat|cat|put", description = "What to do.")
    String action;

    @Parameters(index = "1..*", paramLabel = "ARG", description = "HOST:/path, and for put the local file first.")
    List<String> arguments;

    @Option(names = "--port", paramLabel = "PORT", description = "The NFS server's RPC-over-RDMA port (default "
            + "${DEFAULT-VALUE}).")
    int port = 20049;

    @Option(names = "--mount-port", paramLabel = "PORT", description = "rpc.mountd's TCP port (default "
            + "${DEFAULT-VALUE}).")
    int mountPort = 20048;

    @Option(names = "--rsize", paramLabel = "OCTETS", description = "Octets per READ, 4096 to 1048576 (default "
            + "${DEFAULT-VALUE}).")
    int rsize = MAX_IO;

    @Option(names = "--wsize", paramLabel = "OCTETS", description = "Octets per WRITE, 4096 to 1048576 (default "
            + "${DEFAULT-VALUE}).")
    int wsize = MAX_IO;

    @Option(names = {"-o", "--output"}, paramLabel = "LOCAL", description = "cat: write the file here instead of "
            + "standard output (through a temporary file, so an interrupted run leaves no half file).")
    Path output;

    @Option(names = "--no-remote-invalidation", description = "Do not offer Remote Invalidation in the RFC 8797 "
            + "private data (the server then answers with plain Sends).")
    boolean noRemoteInvalidation;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
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
        ConnectionOptions.checkPort(line, "--port", port, false);
        ConnectionOptions.checkPort(line, "--mount-port", mountPort, false);
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
        InetSocketAddress server = new InetSocketAddress(target.host, port);
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
        try (Nfs3Client nfs = Nfs3Client.connect(rnic, server, dir, rsize, wsize, options)) {
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
        ByteBuf chunk = Unpooled.buffer(rsize);
        try (OutputStream sink = partial == null ? new UncloseableStdout() : Files.newOutputStream(partial)) {
            boolean eof = false;
            while (!eof) {
                chunk.clear();
                eof = nfs.read(fh, offset, rsize, chunk);
                if (!eof && chunk.readableBytes() == 0) {
                    throw new RpcException("the server returned no data at offset " + offset + " before end of file");
                }
                offset += chunk.readableBytes();
                chunk.readBytes(sink, chunk.readableBytes());
            }
        } finally {
            chunk.release();
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
        ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(wsize);
        try (InputStream in = Files.newInputStream(local)) {
            while (true) {
                chunk.clear();
                while (chunk.isWritable() && chunk.writeBytes(in, chunk.writableBytes()) > 0) {
                    // fill the chunk: WRITEs of wsize octets but for the last
                }
                if (!chunk.isReadable()) {
                    break;
                }
                int n = chunk.readableBytes();
                int written = 0;
                while (written < n) {
                    int w = nfs.write(fh, offset + written, chunk.slice(written, n - written));
                    if (w <= 0) {
                        throw new RpcException("the server wrote nothing at offset " + (offset + written));
                    }
                    written += w;
                }
                offset += n;
            }
        } finally {
            chunk.release();
        }
        report(err, "wrote", offset, target, start);
        return 0;
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
