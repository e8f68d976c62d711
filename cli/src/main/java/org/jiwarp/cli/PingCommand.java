package org.jiwarp.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.tools.Failures;
import org.jiwarp.tools.rping.RpingClient;
import org.jiwarp.tools.rping.RpingServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code jiwarp ping}: rdma-core's rping, interoperable with it in both roles, with rping's flags
 * and defaults: {@code -S} 64 octets, a client that pings until the server leaves unless {@code -C},
 * a server that exits after one client unless {@code -P}. Each connection gets the CRC and markers
 * its MPA Request asks for.
 */
@Command(name = "ping", sortOptions = false,
        description = {"rping over jiwarp: the client advertises a buffer by Send, the server RDMA Reads it and "
                + "RDMA Writes it back, the client checks it (-V).",
                "Talks to rdma-core's rping in both roles, with rping's flags."})
final class PingCommand implements Callable<Integer> {

    /** rping's port. */
    static final int DEFAULT_PORT = 7174;
    /**
     * rping's default ping size: 64 octets, what rping sets (rping(8) says 100, but a jiwarp client
     * of 100 octets breaks against a default rping server, whose 64-octet buffer cannot take its
     * Read Response: siw answers with a DDP base-or-bounds Terminate).
     */
    static final int DEFAULT_SIZE = 64;

    @Option(names = "-s", description = "Server: serve one client, then exit (-P: serve clients until stopped).")
    boolean server;

    @Option(names = "-c", description = "Client.")
    boolean client;

    @Option(names = "-a", paramLabel = "ADDRESS", description = "The server's address (client), or the address to "
            + "bind (server; default all).")
    String address;

    @Option(names = "-I", paramLabel = "ADDRESS", description = "Client: the local address to connect from.")
    String source;

    @Option(names = "-p", paramLabel = "PORT", description = "Port (default ${DEFAULT-VALUE}).")
    int port = DEFAULT_PORT;

    @Option(names = "-C", paramLabel = "COUNT", description = "Pings to make (client; default 0: until the server "
            + "goes away), or to serve each client before closing its connection (server).")
    long count;

    @Option(names = "-S", paramLabel = "SIZE", description = "Ping data size, 26 to 65535 (default ${DEFAULT-VALUE}). "
            + "The server serves every size.")
    int size = DEFAULT_SIZE;

    @Option(names = "-V", description = "Validate the ping data.")
    boolean validate;

    @Option(names = "-v", description = "Print the ping data.")
    boolean verbose;

    @Option(names = "-d", description = "Debug lines: each connection's MPA settings, each ping's round trip.")
    boolean debugLines;

    @Option(names = "-P", description = "Server: persistent, serve clients one after another or at once until "
            + "stopped.")
    boolean persistent;

    @Option(names = "-q", description = "Create and move the queue pair in the application, not in rdma_cm "
            + "(jiwarp always does: accepted for rping's sake).")
    boolean selfCreatedQp;

    /** rping's {@code -t tos}: taken with its value, so that what follows is not read as the value. */
    @Option(names = "-t", paramLabel = "TOS", description = "Refused: rping sets the connection's type of service; "
            + "jiwarp does not set it.")
    String typeOfService;

    @Option(names = "--quiet", description = "No summary or connection lines, only errors.")
    boolean quiet;

    @Option(names = "--clients", paramLabel = "N", description = "Server: exit after N clients have come and gone "
            + "(implies -P).")
    long clients;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Option(names = "--version", versionHelp = true, description = "Print version information and exit (-V "
            + "validates, as rping's does).")
    boolean version;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        if (typeOfService != null) {
            throw new CommandLine.ParameterException(line, "-t (the type of service) is not implemented here: "
                    + "jiwarp does not set the IP type of service of its connections");
        }
        if (server == client) {
            throw new CommandLine.ParameterException(line, "give exactly one of -s (server) and -c (client)");
        }
        if (client && address == null) {
            throw new CommandLine.ParameterException(line, "the client needs the server's address: -a ADDRESS");
        }
        if (server && source != null) {
            throw new CommandLine.ParameterException(line, "-I is for the client; the server binds -a ADDRESS");
        }
        if (client && (persistent || clients != 0)) {
            throw new CommandLine.ParameterException(line, "-P and --clients are for the server (-s)");
        }
        if (size < 26 || size > 65535) {
            throw new CommandLine.ParameterException(line, "invalid size " + size
                    + " (valid range is 26 to 65535)");
        }
        if (count < 0 || clients < 0) {
            throw new CommandLine.ParameterException(line, "-C and --clients must not be negative");
        }
        ConnectionOptions.checkPort(line, "-p", port, server);
        connection.validate(line);
        InetSocketAddress bind = server ? socketAddress(address, port) : null;
        InetSocketAddress from = source != null ? socketAddress(source, 0) : null;
        PrintWriter out = line.getOut();
        PrintWriter err = line.getErr();
        Path capture = connection.captureDirectory();
        try (Rnic rnic = Rnic.open(connection.rnicOptions(1, capture))) {
            return server ? serve(rnic, bind, out, err) : ping(rnic, from, out, err);
        } finally {
            connection.mergeCapture(capture);
        }
    }

    /** An address to bind: a usage error when it is not one. */
    private InetSocketAddress socketAddress(String host, int port) {
        if (host == null) {
            return new InetSocketAddress(port);
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "unknown host " + host);
        }
        return address;
    }

    private int serve(Rnic rnic, InetSocketAddress bind, PrintWriter out, PrintWriter err) {
        long clientsToServe = clients > 0 ? clients : persistent ? 0 : 1;
        try (RpingServer rping = new RpingServer(rnic, bind, verbose, count, text -> print(out, text),
                text -> {
                    if (!quiet) {
                        print(err, "jiwarp ping: " + text);
                    }
                })) {
            if (!quiet) {
                print(err, "jiwarp ping: serving on " + Failures.address(rping.localAddress()) + " ("
                        + connection.describe() + "; " + (clientsToServe == 0 ? "until stopped"
                        : clientsToServe == 1 ? "one client" : clientsToServe + " clients") + ")");
            }
            while (clientsToServe == 0 || rping.clientsGone() < clientsToServe) {
                Thread.sleep(50);
            }
        } catch (InterruptedException stopped) {
            // Stopped from outside (a persistent server's end): not an error.
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private int ping(Rnic rnic, InetSocketAddress from, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        InetSocketAddress server = new InetSocketAddress(address, port);
        if (server.isUnresolved()) {
            print(err, "jiwarp ping: unknown host " + address);
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
        try {
            RpingClient.Result result = RpingClient.run(rnic, server, from, size, count, validate, verbose,
                    text -> print(out, text), debugLines ? text -> print(err, "jiwarp ping: " + text) : null).get();
            if (!quiet) {
                print(err, String.format(Locale.ROOT, "jiwarp ping: %d pings of %d octets to %s%s; round trip "
                                + "p50 %.1f us, max %.1f us%s", result.pings(), size, Failures.address(server),
                        validate ? ", " + result.validated() + " validated" : "",
                        result.roundTrips().getValueAtPercentile(50) / 1e3, result.roundTrips().getMaxValue() / 1e3,
                        result.serverLeft() ? "; then the server closed the connection" : ""));
            }
            return 0;
        } catch (ExecutionException e) {
            print(err, "jiwarp ping: " + Failures.describe(e.getCause()));
            if (Jiwarp.debug(spec.commandLine())) {
                e.getCause().printStackTrace(err);
            }
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
