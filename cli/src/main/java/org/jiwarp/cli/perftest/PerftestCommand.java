package org.jiwarp.cli.perftest;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jiwarp.cli.ConnectionOptions;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.tools.perftest.PerftestClient;
import org.jiwarp.tools.perftest.PerftestException;
import org.jiwarp.tools.perftest.PerftestParameters;
import org.jiwarp.tools.perftest.PerftestResult;
import org.jiwarp.tools.perftest.PerftestServer;
import org.jiwarp.wire.perftest.Verb;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code jiwarp perftest}: linux-rdma perftest's {@code ib_write_bw}, {@code ib_read_bw},
 * {@code ib_send_bw} and {@code ib_write_lat} with {@code -R} (rdma_cm), interoperable with them in
 * both roles. Without a HOST it is the server and serves one client, as perftest does.
 *
 * <p>Exit codes: 0 success, 1 a failed run (connection, protocol, work completion, data check),
 * 2 usage error.
 */
@Command(name = "perftest", mixinStandardHelpOptions = true, sortOptions = false,
        modelTransformer = PerftestFlags.class,
        description = {"perftest over jiwarp: ib_write_bw, ib_read_bw, ib_send_bw and ib_write_lat with -R (rdma_cm), "
                + "in both roles. Server when no HOST is given.",
                "Checks every completion and count; a Read client reads the server's buffer back and compares, "
                + "a Write or Send server checks where the data landed."},
        footer = {"perftest's other flags (-d, -i, -m, -x, -b, -e, -I, ... and the raw Ethernet ones) are refused, "
                + "each in one sentence saying why."})
public final class PerftestCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "HOST", description = "The server to connect to (client). Without it: "
            + "server.")
    String host;

    @Option(names = {"-Z", "--server"}, description = "Server (the default without HOST).")
    boolean server;

    @Option(names = "--test", paramLabel = "write|read|send", converter = TestChoices.class,
            completionCandidates = TestChoices.class, description = "The operation (default write).")
    Verb verb = Verb.WRITE;

    /** What {@code --test} takes, in perftest's programs' order. */
    static final class TestChoices extends org.jiwarp.cli.OptionChoices<Verb> {
        TestChoices() {
            super(Verb.class, "write", "read", "send");
        }
    }

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

    @Option(names = {"-z", "--comm_rdma_cm"}, description = "Accepted for perftest's sake: the control connection "
            + "always goes through (jiwarp's) rdma_cm, as with -R.")
    boolean commRdmaCm;

    @Option(names = {"-c", "--connection"}, paramLabel = "RC", description = "Connection type: RC, the only one "
            + "iWARP has (UC, UD, XRC and DC are refused).")
    String connectionType = "RC";

    @Option(names = {"-l", "--post_list"}, paramLabel = "N", description = "Bandwidth tests: post N work requests "
            + "at a time, as one chain (default 1); -n must be a multiple of N, and -Q is N unless given.")
    Integer postList;

    @Option(names = "--perform_warm_up", description = "Bandwidth tests with Writes or Reads: one TX depth of "
            + "them, unmeasured, before the run, as perftest (it warms the path, not the Java compiler: see the note "
            + "after the report).")
    boolean performWarmUp;

    @Option(names = {"-N", "--noPeak"}, description = "Bandwidth tests: do not compute the peak (reported as 0), "
            + "as perftest does by itself above 20000 iterations.")
    boolean noPeak;

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

    @Option(names = "--report_gbits", description = "Report bandwidth in Gb/s (10^9 bits a second) instead of "
            + "MB/s (2^20 octets a second).")
    boolean reportGbits;

    @Option(names = {"-F", "--CPU-freq"}, description = "Accepted for perftest's sake: jiwarp measures with the "
            + "monotonic clock, not CPU cycles, so there is no frequency warning to silence.")
    boolean cpuFreq;

    @Option(names = {"-a", "--all"}, description = "Refused: one size per run here (jiwarp bench -a sweeps sizes).")
    boolean allSizes;

    @Option(names = {"-D", "--duration"}, paramLabel = "SECONDS", description = "Refused: runs are counted "
            + "by -n here (jiwarp bench -D runs for a time).")
    Integer duration;

    @Option(names = {"-q", "--qp"}, paramLabel = "N", description = "Refused unless 1: one test queue pair per run "
            + "here (jiwarp bench -q runs several).")
    Integer queuePairs;

    @Option(names = "--run_infinitely", description = "Refused: runs end after -n here (jiwarp bench -D runs for a "
            + "time).")
    boolean runInfinitely;

    @Option(names = {"-H", "--report-histogram"}, description = "Refused: the latency report gives perftest's "
            + "summary (jiwarp bench --lat prints percentiles).")
    boolean histogram;

    @Option(names = {"-U", "--report-unsorted"}, description = "Refused, as -H.")
    boolean unsorted;

    @Option(names = {"-C", "--report-cycles"}, description = "Refused: jiwarp measures in nanoseconds, not CPU "
            + "cycles.")
    boolean cycles;

    @Mixin
    ConnectionOptions connection;

    /**
     * What picocli matched to nothing: kept, so that an unknown option is named alone, not with the
     * HOST after it that picocli would take for another unknown option.
     */
    @CommandLine.Unmatched
    java.util.List<String> unmatched = new java.util.ArrayList<>();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        if (server && host != null) {
            throw new CommandLine.ParameterException(line, "give a HOST (client) or --server, not both");
        }
        if (!unmatched.isEmpty()) {
            String first = unmatched.stream().filter(arg -> arg.startsWith("-")).findFirst().orElse(null);
            throw new CommandLine.ParameterException(line, first != null
                    ? first + " is an option of neither jiwarp perftest nor perftest"
                    : "one HOST only, not " + (host == null ? "" : host + " and ") + String.join(" and ", unmatched));
        }
        String refused = PerftestFlags.refusal(line.getParseResult());
        if (refused != null) {
            throw new CommandLine.ParameterException(line, refused);
        }
        refuseUnimplemented(line);
        ConnectionOptions.checkPort(line, "-p", port, host == null);
        connection.validate(line);
        if (timeoutSeconds < 1 || acceptTimeoutSeconds < 0 || settleMillis < 0) {
            throw new CommandLine.ParameterException(line, "--timeout must be positive, --accept-timeout and "
                    + "--settle not negative");
        }
        PerftestParameters parameters = new PerftestParameters().verb(verb).latency(latency).size(size).iters(iters)
                .txDepth(txDepth).rxDepth(rxDepth).cqMod(cqMod).outReads(outReads).postList(postList).noPeak(noPeak)
                .performWarmUp(performWarmUp)
                .timeout(Duration.ofSeconds(timeoutSeconds)).settle(Duration.ofMillis(settleMillis))
                .reportGbits(reportGbits);
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
                            + org.jiwarp.tools.Failures.address(perftest.localAddress()) + " (" + connection.describe() + ")");
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

    /** perftest flags this implementation does not run: each refused in one sentence saying why. */
    private void refuseUnimplemented(CommandLine line) {
        String refusal = null;
        if (!connectionType.equalsIgnoreCase("RC")) {
            refusal = "-c " + connectionType + " (the connection type) does not apply here: iWARP has reliable "
                    + "connections (RC) only";
        } else if (allSizes) {
            refusal = "-a (every size in one run) is not implemented here: run one size per run with -s, "
                    + "or sweep sizes with jiwarp bench -a";
        } else if (duration != null || runInfinitely) {
            refusal = (duration != null ? "-D" : "--run_infinitely") + " (a timed run) is not implemented here: "
                    + "give the iterations with -n, or run for a time with jiwarp bench -D";
        } else if (queuePairs != null && queuePairs != 1) {
            refusal = "-q " + queuePairs + " is not implemented here: a run uses one test queue pair "
                    + "(jiwarp bench -q runs several)";
        } else if (histogram || unsorted) {
            refusal = (histogram ? "-H" : "-U") + " (the raw latency samples) is not implemented here: the report "
                    + "gives perftest's summary, and jiwarp bench --lat gives percentiles";
        } else if (cycles) {
            refusal = "-C (results in CPU cycles) is not implemented here: jiwarp measures in nanoseconds";
        }
        if (refusal != null) {
            throw new CommandLine.ParameterException(line, refusal);
        }
    }

    private static void print(PrintWriter writer, String text) {
        synchronized (writer) {
            writer.println(text);
            writer.flush();
        }
    }
}
