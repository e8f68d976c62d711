package org.jiwarp.cli.perftest;

import org.jiwarp.cli.ConnectionOptions;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jiwarp.rnic.Rnic;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp perftest}: linux-rdma perftest's {@code ib_write_bw}, {@code ib_read_bw},
 * {@code ib_send_bw} and {@code ib_write_lat} with {@code -R} (rdma_cm), interoperable with them in
 * both roles. Without a HOST it is the server and serves one client, as perftest does.
 *
 * <p>Exit codes: 0 success, 1 a failed run (connection, protocol, work completion, data check),
 * 2 usage error.
 */
@Command(name = "perftest", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"perftest over jiwarp: ib_write_bw, ib_read_bw, ib_send_bw and ib_write_lat with -R (rdma_cm), "
                + "in both roles. Server when no HOST is given.",
                "Checks every completion and count; a Read client reads the server's buffer back and compares, "
                + "a Write or Send server checks where the data landed."})
public final class PerftestCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "HOST", description = "The server to connect to (client). Without it: "
            + "server.")
    String host;

    @Option(names = "--server", description = "Server (the default without HOST).")
    boolean server;

    @Option(names = "--test", paramLabel = "write|read|send", description = "The operation (default write).")
    Verb verb = Verb.WRITE;

    @Option(names = "--lat", description = "Latency test (ib_write_lat); the default is bandwidth (ib_*_bw).")
    boolean latency;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", description = "Message size (default 65536; 2 with --lat).")
    Integer size;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", description = "Iterations (default 5000 for write BW, else "
            + "1000; at least 5).")
    Integer iters;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", description = "Port (default ${DEFAULT-VALUE}).")
    int port = 18515;

    @Option(names = {"-t", "--tx-depth"}, paramLabel = "N",
            description = "Send queue depth (default 128; 1 with --lat).")
    Integer txDepth;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "N", description = "Receive queue depth of the send test "
            + "(default 512).")
    Integer rxDepth;

    @Option(names = {"-Q", "--cq-mod"}, paramLabel = "N", description = "Work requests per completion (default 100; "
            + "1 above 8 KiB).")
    Integer cqMod;

    @Option(names = {"-o", "--outs"}, paramLabel = "N", description = "Outstanding Reads (read test; default 128).")
    Integer outReads;

    @Option(names = {"-R", "--rdma_cm"}, description = "Accepted for perftest's sake: connections always go through "
            + "(jiwarp's) rdma_cm.")
    boolean rdmaCm;

    @Option(names = "--bind", paramLabel = "ADDRESS", description = "Server: the address to listen on (default all).")
    String bind;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "Longest wait for any one step once connected "
            + "(default ${DEFAULT-VALUE}).")
    long timeoutSeconds = 60;

    @Option(names = "--accept-timeout", paramLabel = "SECONDS", description = "Server: longest wait for a client "
            + "(default 0: for ever).")
    long acceptTimeoutSeconds;

    @Option(names = "--settle", paramLabel = "MS", description = "Client: pause between the control connection coming "
            + "up and the first message, for siw's passive-accept race, with --p2p too (default ${DEFAULT-VALUE}).")
    long settleMillis = 200;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        if (server && host != null) {
            throw new CommandLine.ParameterException(line, "give a HOST (client) or --server, not both");
        }
        ConnectionOptions.checkPort(line, "-p", port, host == null);
        connection.validate(line);
        if (timeoutSeconds < 1 || acceptTimeoutSeconds < 0 || settleMillis < 0) {
            throw new CommandLine.ParameterException(line, "--timeout must be positive, --accept-timeout and "
                    + "--settle not negative");
        }
        PerftestParameters parameters = new PerftestParameters().verb(verb).latency(latency).size(size).iters(iters)
                .txDepth(txDepth).rxDepth(rxDepth).cqMod(cqMod).outReads(outReads)
                .timeout(Duration.ofSeconds(timeoutSeconds)).settle(Duration.ofMillis(settleMillis));
        java.nio.file.Path capture = connection.captureDirectory();
        org.jiwarp.rnic.RnicOptions options;
        try {
            parameters.validate();
            options = connection.rnicOptions(1, capture);
        } catch (IllegalArgumentException e) {
            connection.mergeCapture(capture);
            throw new CommandLine.ParameterException(line, e.getMessage());
        }
        PrintWriter out = line.getOut();
        PrintWriter err = line.getErr();
        String role = host == null ? "server" : "client";
        try (Rnic rnic = Rnic.open(options)) {
            PerftestResult result;
            if (host == null) {
                InetSocketAddress address = bind == null ? new InetSocketAddress(port)
                        : new InetSocketAddress(bind, port);
                try (PerftestServer perftest = PerftestServer.listen(rnic, address)) {
                    print(err, "jiwarp perftest: " + parameters.program() + " server listening on "
                            + perftest.localAddress() + " (" + connection.describe() + ")");
                    print(out, "\n************************************\n* Waiting for client to connect... *\n"
                            + "************************************");
                    result = perftest.serve(rnic, parameters, Duration.ofSeconds(acceptTimeoutSeconds),
                            text -> print(out, text), text -> print(err, "jiwarp perftest: " + text));
                }
            } else {
                result = PerftestClient.run(rnic, new InetSocketAddress(host, port), parameters,
                        text -> print(out, text), text -> print(err, "jiwarp perftest: " + text));
            }
            print(err, "jiwarp perftest: " + parameters.program() + " " + role + " done with perftest "
                    + result.peerVersion() + ": " + result.checks()
                    + (result.dataDigest() >= 0
                            ? String.format(Locale.ROOT, "; data crc32c 0x%08x", result.dataDigest()) : ""));
            return 0;
        } catch (PerftestException e) {
            print(err, "jiwarp perftest: " + parameters.program() + " " + role + " failed: " + e.getMessage());
            return 1;
        } finally {
            connection.mergeCapture(capture);
        }
    }

    private static void print(PrintWriter writer, String text) {
        synchronized (writer) {
            writer.println(text);
            writer.flush();
        }
    }
}
