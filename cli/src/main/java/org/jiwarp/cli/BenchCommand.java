package org.jiwarp.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jiwarp.cli.bench.BenchMode;
import org.jiwarp.cli.bench.BenchOp;
import org.jiwarp.cli.bench.BenchReport;
import org.jiwarp.cli.bench.BenchResult;
import org.jiwarp.cli.bench.BenchRun;
import org.jiwarp.cli.bench.BenchSpec;
import org.jiwarp.cli.bench.Limit;
import org.jiwarp.rnic.RnicOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp bench}: bandwidth and latency of RDMA Write, Read and Send, with perftest's option
 * names. With no host, server and client run in this process over loopback; {@code --server} and a
 * host run them in two processes or on two machines. {@code --baseline tcp} runs the same pattern over
 * plain TCP in the same run and reports the ratio.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Measure jiwarp's bandwidth and latency (like perftest's ib_write_bw, ib_read_bw, ib_send_bw, "
                + "ib_*_lat), optionally beside plain TCP.",
                "No host: server and client in this process over loopback. --server: serve remote clients; "
                        + "HOST: run against a jiwarp bench --server there."})
final class BenchCommand implements Callable<Integer> {

    /** perftest's default port. */
    static final int DEFAULT_PORT = 18515;

    @Parameters(index = "0", arity = "0..1", paramLabel = "HOST", description = "A host running jiwarp bench --server.")
    String host;

    @Option(names = "--server", description = "Serve clients until stopped (the TCP baseline listens on PORT+1).")
    boolean server;

    @Option(names = {"-p", "--port"}, description = "Port (default ${DEFAULT-VALUE}).")
    int port = DEFAULT_PORT;

    @Option(names = "--op", split = ",", paramLabel = "write|read|send|atomic",
            converter = OpChoices.class, completionCandidates = OpChoices.class,
            description = "Operations to measure (default: write,read,send); atomic is RFC 7306 fetch-and-add and "
                    + "compare-and-swap on 8 octets (fetch_add or compare_swap for one of them).")
    List<BenchOp> ops = new ArrayList<>(List.of(BenchOp.WRITE, BenchOp.READ, BenchOp.SEND));

    /** What {@code --op} takes; {@code IMMEDIATE} is {@code --op send --imm}. */
    static final class OpChoices extends OptionChoices<BenchOp> {
        OpChoices() {
            super(BenchOp.class, "write", "read", "send", "atomic", "fetch_add", "compare_swap");
        }
    }

    @Option(names = "--imm", description = "With --op send: RFC 7306 Immediate Data (8 octets carried in the peer's "
            + "receive completion) instead of Sends.")
    boolean immediate;

    @Option(names = "--lat", description = "Latency (ping-pong, as ib_*_lat) instead of bandwidth.")
    boolean latency;

    @Option(names = {"-s", "--size"}, description = "Message size in octets (default 65536; 8 for --lat).")
    Integer size;

    @Option(names = {"-a", "--all"}, description = "Every size from 2 octets to 8 MiB, in powers of two.")
    boolean allSizes;

    @Option(names = {"-n", "--iters"}, description = "Messages per queue pair (default 5000; 1000 for --lat).")
    Long iterations;

    @Option(names = {"-D", "--duration"}, description = "Run for this many seconds instead of -n.")
    Double duration;

    @Option(names = {"-q", "--qp"}, description = "Queue pairs (connections) in parallel (default ${DEFAULT-VALUE}).")
    int queuePairs = 1;

    @Option(names = {"-t", "--tx-depth"}, description = "Send queue depth: messages outstanding per queue pair "
            + "(default 128; 1 for --lat).")
    Integer txDepth;

    @Option(names = {"-Q", "--cq-mod"}, description = "Signal one message in this many (default ${DEFAULT-VALUE}, "
            + "at most the send queue depth).")
    int cqMod = 100;

    @Option(names = "--baseline", paramLabel = "tcp", description = "Also run the same pattern over plain TCP "
            + "(Netty, same transport, threads and batching) and report jiwarp's ratio to it.")
    String baseline;

    @Option(names = "--threads", description = "Event loop threads per side (default 1 on loopback, else the cores).")
    Integer threads;

    @Option(names = "--warmup", description = "Seconds each stack runs each operation, unmeasured, before the "
            + "first measured run, so that the JIT has compiled the hot paths (default ${DEFAULT-VALUE}; 0 for none).")
    double warmup = 2;

    @Option(names = "--json", description = "Print the results as JSON instead of a table.")
    boolean json;

    @Option(names = "--markdown", description = "Print the results as a Markdown table.")
    boolean markdown;

    @Mixin
    ConnectionOptions connection;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        validate();
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            // A benchmark measures the stack, not Netty's sampled leak tracking (-D... to turn it back on).
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        boolean interactive = System.console() != null && !json && !markdown;
        BenchRun.Settings settings = new BenchRun.Settings(mpaSettings(), connection.transport,
                threads != null ? threads : host == null ? 1 : Runtime.getRuntime().availableProcessors(),
                connection.captureDirectory());
        try {
            if (server) {
                try (BenchRun.Servers servers = BenchRun.serve(settings, new InetSocketAddress(port),
                        message -> err.println("jiwarp bench: " + message))) {
                    err.println("jiwarp bench: serving on port " + servers.jiwarpAddress().getPort()
                            + " (TCP baseline on " + servers.tcpAddress().getPort() + "); stop with Ctrl-C");
                    new CountDownLatch(1).await();
                }
                return 0;
            }
            List<BenchResult> results = new ArrayList<>();
            String title = title(settings);
            try (BenchRun run = host == null ? BenchRun.embedded(settings)
                    : BenchRun.remote(settings, new InetSocketAddress(host, port),
                            new InetSocketAddress(host, port + 1))) {
                for (BenchOp op : operations()) {
                    if (warmup > 0) {
                        BenchSpec first = specFor(op, sizes(op).get(0));
                        run.run("jiwarp", first, queuePairs, Limit.seconds(warmup), null);
                        if (baseline != null) {
                            run.run("tcp", first, queuePairs, Limit.seconds(warmup), null);
                        }
                    }
                    for (int messageSize : sizes(op)) {
                        BenchSpec benchSpec = specFor(op, messageSize);
                        results.add(run.run("jiwarp", benchSpec, queuePairs, limit(), interactive ? line -> {
                            err.print("\r" + line + "   ");
                            err.flush();
                        } : null));
                        if (baseline != null) {
                            results.add(run.run("tcp", benchSpec, queuePairs, limit(), interactive ? line -> {
                                err.print("\r" + line + "   ");
                                err.flush();
                            } : null));
                        }
                        if (interactive) {
                            err.print("\r" + " ".repeat(100) + "\r");
                            err.flush();
                        }
                    }
                }
            }
            if (json) {
                BenchReport.json(out, results, jsonSettings(settings));
            } else if (markdown) {
                BenchReport.markdown(out, title, results);
            } else {
                BenchReport.table(out, title, results);
            }
            return 0;
        } finally {
            connection.mergeCapture(settings.capture());
        }
    }

    private void validate() {
        CommandLine line = spec.commandLine();
        if (server && host != null) {
            throw new CommandLine.ParameterException(line, "--server takes no HOST");
        }
        if (baseline != null && !baseline.equals("tcp")) {
            throw new CommandLine.ParameterException(line, "--baseline takes only 'tcp', not '" + baseline + "'");
        }
        if (size != null && (size < 1 || size > 1 << 30)) {
            throw new CommandLine.ParameterException(line, "-s must be 1 to 1 GiB, not " + size);
        }
        if (size != null && allSizes) {
            throw new CommandLine.ParameterException(line, "-s and -a exclude each other");
        }
        if (iterations != null && duration != null) {
            throw new CommandLine.ParameterException(line, "-n and -D exclude each other");
        }
        if (iterations != null && iterations < 1 || duration != null && duration <= 0) {
            throw new CommandLine.ParameterException(line, "-n and -D must be positive");
        }
        if (queuePairs < 1 || queuePairs > 100_000) {
            throw new CommandLine.ParameterException(line, "-q must be 1 to 100000, not " + queuePairs);
        }
        if (txDepth != null && (txDepth < 1 || txDepth > 65536) || cqMod < 1) {
            throw new CommandLine.ParameterException(line, "-t must be 1 to 65536 and -Q positive");
        }
        if (threads != null && threads < 1) {
            throw new CommandLine.ParameterException(line, "--threads must be positive");
        }
        connection.validate(line);
        ConnectionOptions.checkPort(line, "-p", port, server);
        if (server && port == 65535) {
            throw new CommandLine.ParameterException(line, "-p must leave room for the TCP baseline on PORT+1");
        }
        if (json && markdown) {
            throw new CommandLine.ParameterException(line, "--json and --markdown exclude each other");
        }
        if (warmup < 0) {
            throw new CommandLine.ParameterException(line, "--warmup must not be negative");
        }
        if (ops.isEmpty()) {
            throw new CommandLine.ParameterException(line, "--op needs at least one operation");
        }
        if (immediate && !ops.contains(BenchOp.SEND)) {
            throw new CommandLine.ParameterException(line, "--imm goes with --op send");
        }
        boolean onlyEightOctets = ops.stream().allMatch(op -> op.atomic() || op == BenchOp.SEND && immediate);
        if (onlyEightOctets && (allSizes || size != null && size != 8)) {
            throw new CommandLine.ParameterException(line, "atomics and Immediate Data move 8 octets: leave out -s "
                    + "and -a");
        }
        if (latency && ops.contains(BenchOp.WRITE) && queuePairs > 1) {
            throw new CommandLine.ParameterException(line, "write latency runs one queue pair (it polls memory)");
        }
    }

    private org.jiwarp.mpa.MpaSettings mpaSettings() {
        org.jiwarp.mpa.MpaSettings.Builder mpa = connection.mpa(RnicOptions.defaults().mpa());
        // 64 KiB FPDUs (as Linux siw with segmentation offload) unless --emss sized them above.
        return (connection.emss != null ? mpa : mpa.largeFpdus(true)).build();
    }

    /** The operations in order, {@code atomic} as fetch-and-add then compare-and-swap. */
    private List<BenchOp> operations() {
        List<BenchOp> list = new ArrayList<>();
        for (BenchOp op : ops) {
            if (op == BenchOp.SEND && immediate) {
                list.add(BenchOp.IMMEDIATE);
            } else if (op == BenchOp.ATOMIC) {
                list.add(BenchOp.FETCH_ADD);
                list.add(BenchOp.COMPARE_SWAP);
            } else {
                list.add(op);
            }
        }
        return list;
    }

    /** The sizes an operation runs at: 8 octets for an atomic, else as -s and -a say. */
    private List<Integer> sizes(BenchOp op) {
        return op.eightOctets() ? List.of(8) : sizes();
    }

    private List<Integer> sizes() {
        List<Integer> sizes = new ArrayList<>();
        if (allSizes) {
            for (int s = 2; s <= 8 << 20; s <<= 1) {
                sizes.add(s);
            }
        } else {
            sizes.add(size != null ? size : latency ? 8 : 65536);
        }
        return sizes;
    }

    private BenchSpec specFor(BenchOp op, int messageSize) {
        int depth = txDepth != null ? txDepth : latency ? 1 : 128;
        return new BenchSpec(op, latency ? BenchMode.LAT : BenchMode.BW, messageSize, depth, Math.min(cqMod, depth),
                0, 0);
    }

    private Limit limit() {
        if (duration != null) {
            return Limit.seconds(duration);
        }
        return Limit.iterations(iterations != null ? iterations : latency ? 1000 : 5000);
    }

    /** The settings of the run as JSON fields; {@code null} where a setting does not apply. */
    private Map<String, Object> jsonSettings(BenchRun.Settings settings) {
        Map<String, Object> mpa = new LinkedHashMap<>();
        mpa.put("revision", connection.mpaRevision);
        mpa.put("crc", connection.crc);
        mpa.put("markers", connection.markers);
        mpa.put("peerToPeer", connection.peerToPeer);
        mpa.put("emss", connection.emss);
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("mode", latency ? "latency" : "bandwidth");
        map.put("queuePairs", queuePairs);
        map.put("txDepth", txDepth != null ? txDepth : latency ? 1 : 128);
        map.put("cqMod", latency ? null : cqMod);
        map.put("iterationsPerQueuePair", limit().timed() ? null : iterations != null ? iterations : latency ? 1000 : 5000);
        map.put("durationSeconds", duration);
        map.put("warmupSeconds", warmup);
        map.put("mpa", mpa);
        map.put("transport", connection.transport.name().toLowerCase(Locale.ROOT));
        map.put("threads", settings.threads());
        map.put("host", host);
        map.put("baseline", baseline);
        return map;
    }

    private String title(BenchRun.Settings settings) {
        return String.format(Locale.ROOT, "jiwarp bench: %s, %d QP%s, tx depth %s, %s, %s FPDUs, %s%s",
                latency ? "latency" : "bandwidth", queuePairs, queuePairs == 1 ? "" : "s",
                txDepth != null ? txDepth : latency ? 1 : 128, connection.describe(),
                connection.emss != null ? "EMSS " + connection.emss : "64 KiB", host == null ? "loopback, one process" : "to " + host,
                limit().timed() ? ", " + duration + " s" : "");
    }
}
