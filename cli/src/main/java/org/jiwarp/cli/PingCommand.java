package org.jiwarp.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.jiwarp.cli.ping.RpingClient;
import org.jiwarp.cli.ping.RpingServer;
import org.jiwarp.rnic.Rnic;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code jiwarp ping}: rdma-core's rping, interoperable with it in both roles, with rping's flags.
 * As a server it serves clients one after another (or at once) until stopped, each with the CRC and
 * markers its MPA Request asks for.
 */
@Command(name = "ping", sortOptions = false,
        description = {"rping over jiwarp: the client advertises a buffer by Send, the server RDMA Reads it and "
                + "RDMA Writes it back, the client checks it (-V).",
                "Talks to rdma-core's rping in both roles."})
final class PingCommand implements Callable<Integer> {

    @Option(names = "-s", description = "Server: serve clients until stopped (or --clients).")
    boolean server;

    @Option(names = "-c", description = "Client.")
    boolean client;

    @Option(names = "-a", paramLabel = "ADDRESS", description = "The server's address (client), or the address to "
            + "bind (server; default all).")
    String address;

    @Option(names = "-p", paramLabel = "PORT", description = "Port (default ${DEFAULT-VALUE}).")
    int port = 7174;

    @Option(names = "-C", paramLabel = "COUNT", description = "Pings to make (client; default 0: until the server "
            + "goes away).")
    long count;

    @Option(names = "-S", paramLabel = "SIZE", description = "Ping data size, 26 to 65535 (default ${DEFAULT-VALUE}).")
    int size = 64;

    @Option(names = "-V", description = "Validate the ping data.")
    boolean validate;

    @Option(names = "-v", description = "Print the ping data.")
    boolean verbose;

    @Option(names = "-q", description = "Quiet: no summary or connection lines, only errors.")
    boolean quiet;

    @Option(names = "--clients", paramLabel = "N", description = "Server: exit after N clients have come and gone "
            + "(default 0: never).")
    long clients;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        if (server == client) {
            throw new CommandLine.ParameterException(line, "give exactly one of -s (server) and -c (client)");
        }
        if (client && address == null) {
            throw new CommandLine.ParameterException(line, "the client needs the server's address: -a ADDRESS");
        }
        if (size < 26 || size > 65535) {
            throw new CommandLine.ParameterException(line, "invalid size " + size + " (valid range is 26 to 65535)");
        }
        if (count < 0 || clients < 0 || port < 0 || port > 65535) {
            throw new CommandLine.ParameterException(line, "-C, --clients and -p must not be negative (-p at most 65535)");
        }
        if (connection.mpaRevision != 1 && connection.mpaRevision != 2) {
            throw new CommandLine.ParameterException(line, "--mpa-rev must be 1 or 2, not " + connection.mpaRevision);
        }
        PrintWriter out = line.getOut();
        PrintWriter err = line.getErr();
        Path capture = connection.captureDirectory();
        try (Rnic rnic = Rnic.open(connection.rnicOptions(1, capture))) {
            return server ? serve(rnic, out, err) : ping(rnic, out, err);
        } finally {
            connection.mergeCapture(capture);
        }
    }

    private int serve(Rnic rnic, PrintWriter out, PrintWriter err) throws InterruptedException {
        InetSocketAddress bind = address == null ? new InetSocketAddress(port) : new InetSocketAddress(address, port);
        try (RpingServer rping = new RpingServer(rnic, bind, verbose, line -> print(out, line),
                line -> {
                    if (!quiet) {
                        print(err, "jiwarp ping: " + line);
                    }
                })) {
            if (!quiet) {
                print(err, "jiwarp ping: serving on " + rping.localAddress() + " (" + connection.describe() + ")");
            }
            while (clients == 0 || rping.clientsGone() < clients) {
                Thread.sleep(50);
            }
        }
        return 0;
    }

    private int ping(Rnic rnic, PrintWriter out, PrintWriter err) throws InterruptedException {
        InetSocketAddress server = new InetSocketAddress(address, port);
        try {
            RpingClient.Result result = RpingClient.run(rnic, server, size, count, validate, verbose,
                    line -> print(out, line)).get();
            if (!quiet) {
                print(err, String.format(Locale.ROOT, "jiwarp ping: %d pings of %d octets to %s%s; round trip "
                                + "p50 %.1f us, max %.1f us", result.pings(), size, server,
                        validate ? ", " + result.validated() + " validated" : "",
                        result.roundTrips().getValueAtPercentile(50) / 1e3, result.roundTrips().getMaxValue() / 1e3));
            }
            return 0;
        } catch (ExecutionException e) {
            print(err, "jiwarp ping: " + e.getCause().getMessage());
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
    }

    private static void print(PrintWriter writer, String line) {
        synchronized (writer) {
            writer.println(line);
            writer.flush();
        }
    }
}
