package org.jiwarp.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rpcrdma.RpcCall;
import org.jiwarp.rpcrdma.RpcException;
import org.jiwarp.rpcrdma.RpcRdmaServer;
import org.jiwarp.rpcrdma.RpcReply;
import org.jiwarp.rpcrdma.RpcTcpServer;
import org.jiwarp.rpcrdma.nfs.server.NfsExport;
import org.jiwarp.tools.Failures;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code jiwarp nfs serve DIR}: serves a local directory as an NFSv3 export, over RPC-over-RDMA
 * (RFC 8166, RFC 8267) on {@code --port}, over RPC on TCP (RFC 5531 section 11) on {@code
 * --tcp-port}, and MOUNT over TCP on {@code --mount-port}, as Linux's nfsd and rpc.mountd do with
 * {@code rdma 20049} in the portlist and {@code rpc.mountd -p 20048}. No rpcbind is asked or
 * offered: clients give the ports ({@code mountport=}, {@code port=}).
 *
 * <p>The listeners are bound before the export is opened, so a port in use is said before the
 * directory is read; until the export is open (a moment, before the serving line) a call is
 * answered SYSTEM_ERR. Runs until interrupted or stopped with Ctrl-C (a shutdown hook closes the
 * listeners and the export, within a bound).
 */
@Command(name = "serve", sortOptions = false,
        description = {"Serve a local directory as an NFSv3 export: NFS over RDMA and over TCP, MOUNT over TCP.",
                "  jiwarp nfs serve /srv/export",
                "  jiwarp nfs serve /srv/export --read-only --no-tcp --port 20049 --mount-port 20048"})
final class NfsServeCommand implements Callable<Integer> {

    /** The line a status comes at most this often, when something changed. */
    static final long STATUS_MILLIS = 5_000;
    /** How long a stop (Ctrl-C) waits for the listeners and the export to close. */
    static final long STOP_MILLIS = 20_000;

    @Parameters(index = "0", paramLabel = "DIR", description = "The directory to export.")
    Path directory;

    @Option(names = "--port", paramLabel = "PORT", description = "NFS over RDMA (RPC-over-RDMA) port; 0 picks a "
            + "free one (default ${DEFAULT-VALUE}).")
    int port = 20049;

    @Option(names = "--tcp-port", paramLabel = "PORT", description = "NFS over TCP port; 0 picks a free one "
            + "(default ${DEFAULT-VALUE}).")
    int tcpPort = 2049;

    @Option(names = "--no-tcp", description = "Do not serve NFS over TCP (MOUNT is served over TCP still).")
    boolean noTcp;

    @Option(names = "--mount-port", paramLabel = "PORT", description = "MOUNT (version 3) over TCP port; 0 picks "
            + "a free one (default ${DEFAULT-VALUE}).")
    int mountPort = 20048;

    @Option(names = "--bind", paramLabel = "ADDRESS", description = "The address to listen on (default "
            + "${DEFAULT-VALUE}: all).")
    String bind = "0.0.0.0";

    @Option(names = "--read-only", description = "Refuse every change (NFS3ERR_ROFS).")
    boolean readOnly;

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
        ConnectionOptions.checkPort(line, "--port", port, true);
        ConnectionOptions.checkPort(line, "--tcp-port", tcpPort, true);
        ConnectionOptions.checkPort(line, "--mount-port", mountPort, true);
        connection.validate(line);
        InetSocketAddress any = new InetSocketAddress(bind, 0);
        if (any.isUnresolved()) {
            throw new CommandLine.ParameterException(line, "unknown address " + bind);
        }
        Path dir = directory.toAbsolutePath().normalize();
        if (!Files.exists(dir)) {
            throw new CommandLine.ParameterException(line, "no such directory: " + dir);
        }
        if (!Files.isDirectory(dir)) {
            throw new CommandLine.ParameterException(line, dir + " is not a directory");
        }
        if (!Files.isReadable(dir) || !Files.isExecutable(dir)) {
            throw new CommandLine.ParameterException(line, "cannot read the directory " + dir);
        }
        PrintWriter err = line.getErr();
        Path capture = connection.captureDirectory();
        Thread serving = Thread.currentThread();
        CountDownLatch done = new CountDownLatch(1);
        Thread hook = new Thread(() -> stop(serving, done), "jiwarp-nfs-serve-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return serve(dir, any.getAddress().getHostAddress(), capture, err);
        } catch (RpcException | IOException e) {
            print(err, "jiwarp nfs serve: " + Failures.describe(e));
            if (Jiwarp.debug(line)) {
                e.printStackTrace(err);
            }
            return Jiwarp.EXIT_RUNTIME_ERROR;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is waiting for done, below
            }
            done.countDown();
            connection.mergeCapture(capture);
        }
    }

    /**
     * Ctrl-C: the serving thread is interrupted and given a while to close what it opened ({@code
     * done}: the thread itself does not end, the JVM's exit holds it).
     */
    private static void stop(Thread serving, CountDownLatch done) {
        serving.interrupt();
        try {
            done.await(STOP_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private int serve(Path dir, String host, Path capture, PrintWriter err) throws IOException {
        // Closed in reverse: the listeners first, so no handler runs on a closed export, then the RNIC.
        try (Export export = new Export();
                Rnic rnic = Rnic.open(connection.rnicOptions(2, capture));
                RpcRdmaServer rdma = RpcRdmaServer.listen(rnic, new InetSocketAddress(host, port), export::nfs,
                        RpcRdmaServer.Options.defaults());
                RpcTcpServer tcp = noTcp ? null : RpcTcpServer.listen(new InetSocketAddress(host, tcpPort),
                        export::nfs, RpcTcpServer.Options.defaults());
                RpcTcpServer mountd = RpcTcpServer.listen(new InetSocketAddress(host, mountPort), export::mount,
                        RpcTcpServer.Options.defaults())) {
            NfsExport open = export.open(dir, readOnly);
            // The line scripts wait for (benchmarks/nfs-transports.sh): it starts with "serving ".
            print(err, "serving " + open.mountPath() + ": NFSv3 over RDMA on " + address(host, rdma.localAddress())
                    + (tcp == null ? "" : ", over TCP on " + address(host, tcp.localAddress()))
                    + ", MOUNT on TCP " + address(host, mountd.localAddress())
                    + " (" + (readOnly ? "read-only, " : "") + connection.describe() + ")");
            String last = status(new NfsExport.Statistics(0, 0, 0, 0), 0);
            while (true) {
                Thread.sleep(STATUS_MILLIS);
                String status = status(open.statistics(), rdma.connections() + (tcp == null ? 0 : tcp.connections())
                        + mountd.connections());
                if (!status.equals(last)) {
                    print(err, "jiwarp nfs serve: " + status);
                    last = status;
                }
            }
        } catch (InterruptedException stopped) {
            // Ctrl-C or the caller's interrupt: the end of serving, not an error.
            Thread.currentThread().interrupt();
            print(err, "jiwarp nfs serve: stopped");
            return 0;
        }
    }

    static String status(NfsExport.Statistics s, int connections) {
        return String.format(Locale.ROOT, "%d calls, %.1f MB read, %.1f MB written, %d errors; %d connection%s",
                s.calls(), s.octetsRead() / 1e6, s.octetsWritten() / 1e6, s.errors(), connections,
                connections == 1 ? "" : "s");
    }

    /**
     * HOST:PORT as the serving line says it: the address given to {@code --bind} (a socket bound to
     * 0.0.0.0 reports the IPv6 any-address on a dual-stack host) and the port bound, the one chosen
     * for port 0.
     */
    static String address(String host, InetSocketAddress bound) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + bound.getPort();
    }

    private static void print(PrintWriter writer, String text) {
        synchronized (writer) {
            writer.println(text);
            writer.flush();
        }
    }

    /**
     * The export, opened after the listeners are bound: until then a call is answered SYSTEM_ERR
     * (between the bind and the serving line).
     */
    private static final class Export implements AutoCloseable {
        private volatile NfsExport export;

        NfsExport open(Path dir, boolean readOnly) throws IOException {
            export = NfsExport.open(dir, new NfsExport.Options(readOnly));
            return export;
        }

        RpcReply nfs(RpcCall call) {
            NfsExport opened = export;
            return opened == null ? RpcReply.systemErr() : opened.nfs().handle(call);
        }

        RpcReply mount(RpcCall call) {
            NfsExport opened = export;
            return opened == null ? RpcReply.systemErr() : opened.mount().handle(call);
        }

        @Override
        public void close() {
            if (export != null) {
                export.close();
            }
        }
    }
}
