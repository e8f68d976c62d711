package org.jiwarp.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rpcrdma.AuthSys;
import org.jiwarp.rpcrdma.RpcRdmaClient;
import org.jiwarp.rpcrdma.TcpRpcClient;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;

/**
 * NFSv3 over RPC-over-RDMA against NFSv3 over TCP on one jiwarp server, in steady state: the
 * server is a separate {@code jiwarp nfs serve} process of a fresh temporary directory on loopback
 * (as a user runs it, and so the client's and the server's heaps, collectors and compilers do not
 * share one JVM); the client is this JVM, kept warm across every pass. It warms both transports
 * (one unreported WRITE and READ of the whole file each, the READ checked against what was
 * written), then runs {@code passes} passes, each a sequential WRITE (FILE_SYNC) of the file and a
 * sequential READ of it, over RDMA and then over TCP, with 1 MiB rsize and wsize and {@code window}
 * calls in flight. Prints per operation and transport the median and range of MB/s, and the median
 * and range of the passes' RDMA/TCP ratios.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.jiwarp.benchmarks.NfsTransports \
 *     [--jar cli/target/jiwarp.jar] [--mib 1024] [--passes 3] [--window 4] [--server-opts "-Xmx1g"]
 *     [--emss 65483]
 * </pre>
 *
 * <p>{@code --emss} sizes both ends' FPDUs for that TCP MSS (RFC 5044 section 5.2; loopback's is
 * 65483), as {@code jiwarp nfs serve --emss} and {@code jiwarp nfs --emss} do; without it both
 * frame for Ethernet's 1460.
 */
public final class NfsTransports {

    private static final int IO_SIZE = 1 << 20;
    private static final Pattern SERVING = Pattern.compile(
            "over RDMA on [^:]+:(\\d+), over TCP on [^:]+:(\\d+), MOUNT on TCP [^:]+:(\\d+)");

    private NfsTransports() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        Path jar = Path.of(options.getOrDefault("--jar", "cli/target/jiwarp.jar"));
        long mib = Long.parseLong(options.getOrDefault("--mib", "1024"));
        int passes = Integer.parseInt(options.getOrDefault("--passes", "3"));
        int window = Integer.parseInt(options.getOrDefault("--window", "4"));
        String serverOpts = options.getOrDefault("--server-opts", "");
        String emss = options.get("--emss");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("no " + jar + ": build it first (mvn -q -DskipTests package)");
        }
        long size = mib * IO_SIZE;
        Path export = Files.createTempDirectory("jiwarp-nfs-transports");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (!serverOpts.isBlank()) {
            command.addAll(Arrays.asList(serverOpts.trim().split("\\s+")));
        }
        command.addAll(List.of("-jar", jar.toString(), "nfs", "serve", export.toString(), "--bind", "127.0.0.1",
                "--port", "0", "--tcp-port", "0", "--mount-port", "0"));
        if (emss != null) {
            command.addAll(List.of("--emss", emss));
        }
        Process server = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            int[] ports = ports(server);
            System.err.printf("nfs-transports: serving %s in process %d; %d MiB, %d passes, %d calls in flight%n",
                    export, server.pid(), mib, passes, window);
            RnicOptions rnic = RnicOptions.defaults();
            if (emss != null) {
                rnic = rnic.mpa(rnic.mpa().toBuilder().emss(Integer.parseInt(emss)).build());
            }
            run(rnic, export, ports, size, passes, window);
        } finally {
            server.destroy(); // SIGTERM: the server stops and prints its counts
            if (!server.waitFor(10, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
            try (Stream<Path> files = Files.list(export)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Files.delete(file);
                }
            }
            Files.delete(export);
        }
    }

    private static void run(RnicOptions rnicOptions, Path export, int[] ports, long size, int passes, int window)
            throws Exception {
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        ByteBuf pattern = PooledByteBufAllocator.DEFAULT.directBuffer(IO_SIZE);
        byte[] random = new byte[IO_SIZE];
        new SplittableRandom(24).nextBytes(random);
        pattern.writeBytes(random);
        ExecutorService callers = Executors.newFixedThreadPool(window);
        ThreadLocal<ByteBuf> sinks = ThreadLocal.withInitial(() -> PooledByteBufAllocator.DEFAULT.heapBuffer(IO_SIZE));
        try (Rnic rnic = Rnic.open(rnicOptions)) {
            byte[] root = Nfs3Client.mountHandle(new InetSocketAddress("127.0.0.1", ports[2]), export.toString(),
                    AuthSys.root("nfs-transports"));
            try (Nfs3Client rdma = Nfs3Client.connect(rnic, new InetSocketAddress("127.0.0.1", ports[0]), root,
                    IO_SIZE, IO_SIZE, RpcRdmaClient.Options.defaults());
                    Nfs3Client tcp = Nfs3Client.connect(TcpRpcClient.connect(new InetSocketAddress("127.0.0.1",
                            ports[1])), root, IO_SIZE, IO_SIZE)) {
                Map<String, Nfs3Client> transports = new LinkedHashMap<>();
                transports.put("RDMA", rdma);
                transports.put("TCP", tcp);
                for (Map.Entry<String, Nfs3Client> t : transports.entrySet()) {
                    byte[] fh = t.getValue().create(root, "file-" + t.getKey(), 0644);
                    double w = write(t.getValue(), fh, pattern, size, callers, window);
                    double r = read(t.getValue(), fh, size, callers, window, sinks, pattern);
                    System.err.printf("nfs-transports: warm-up %s: WRITE %.0f MB/s, READ %.0f MB/s (checked)%n",
                            t.getKey(), w, r);
                }
                for (int pass = 1; pass <= passes; pass++) {
                    for (Map.Entry<String, Nfs3Client> t : transports.entrySet()) {
                        byte[] fh = t.getValue().lookup(root, "file-" + t.getKey());
                        double w = write(t.getValue(), fh, pattern, size, callers, window);
                        double r = read(t.getValue(), fh, size, callers, window, sinks, null);
                        rates.computeIfAbsent("WRITE " + t.getKey(), k -> new ArrayList<>()).add(w);
                        rates.computeIfAbsent("READ " + t.getKey(), k -> new ArrayList<>()).add(r);
                        System.err.printf("nfs-transports: pass %d %s: WRITE %.0f MB/s, READ %.0f MB/s%n", pass,
                                t.getKey(), w, r);
                    }
                }
            }
        } finally {
            callers.shutdown();
            pattern.release();
        }
        System.out.printf("| %d MiB, 1 MiB rsize/wsize, %d in flight | RDMA MB/s | TCP MB/s | RDMA / TCP |%n",
                size / IO_SIZE, window);
        System.out.println("|---|---:|---:|---:|");
        for (String op : List.of("WRITE", "READ")) {
            List<Double> r = rates.get(op + " RDMA");
            List<Double> t = rates.get(op + " TCP");
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < r.size(); i++) {
                ratios.add(r.get(i) / t.get(i));
            }
            System.out.printf("| sequential %s | %s | %s | %s |%n", op, summary(r, "%.0f"), summary(t, "%.0f"),
                    summary(ratios, "%.2f"));
        }
    }

    /** Sequential WRITEs of {@code pattern} over the file, {@code window} at once; MB/s. */
    private static double write(Nfs3Client nfs, byte[] fh, ByteBuf pattern, long size, ExecutorService callers,
            int window) throws Exception {
        return sequential(size, callers, window, at -> nfs.write(fh, at, pattern.duplicate()));
    }

    /**
     * Sequential READs of the file, {@code window} at once, each into its caller's sink; each
     * compared with {@code expected} unless it is null. MB/s.
     */
    private static double read(Nfs3Client nfs, byte[] fh, long size, ExecutorService callers, int window,
            ThreadLocal<ByteBuf> sinks, ByteBuf expected) throws Exception {
        return sequential(size, callers, window, at -> {
            ByteBuf sink = sinks.get().clear();
            nfs.read(fh, at, IO_SIZE, sink);
            if (sink.readableBytes() != IO_SIZE || expected != null && !sink.equals(expected)) {
                throw new IllegalStateException("the READ at offset " + at + " returned other octets than "
                        + "were written");
            }
        });
    }

    /** One transfer of {@link #IO_SIZE} at an offset. */
    private interface Transfer {
        void at(long offset) throws Exception;
    }

    /** {@code transfer} at every {@link #IO_SIZE} offset of {@code size} in order, {@code window} at once; MB/s. */
    private static double sequential(long size, ExecutorService callers, int window, Transfer transfer)
            throws Exception {
        ArrayDeque<Future<?>> inFlight = new ArrayDeque<>();
        long start = System.nanoTime();
        for (long offset = 0; offset < size; offset += IO_SIZE) {
            long at = offset;
            if (inFlight.size() == window) {
                inFlight.poll().get();
            }
            inFlight.add(callers.submit(() -> {
                transfer.at(at);
                return null;
            }));
        }
        while (!inFlight.isEmpty()) {
            inFlight.poll().get();
        }
        return size / 1e6 / ((System.nanoTime() - start) / 1e9);
    }

    /** The server's three ports from its serving line (RDMA, TCP, MOUNT), read from its stderr. */
    private static int[] ports(Process server) throws IOException {
        BufferedReader err = new BufferedReader(new InputStreamReader(server.getErrorStream(), StandardCharsets.UTF_8));
        for (String line; (line = err.readLine()) != null; ) {
            Matcher m = SERVING.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(() -> {
                    try {
                        for (String more; (more = err.readLine()) != null; ) {
                            System.err.println("server: " + more);
                        }
                    } catch (IOException e) {
                        // the server is gone
                    }
                }, "nfs-transports-server-log");
                drain.setDaemon(true);
                drain.start();
                return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3))};
            }
            System.err.println("server: " + line);
        }
        throw new IOException("the server stopped before it served (exit " + waitQuietly(server) + ")");
    }

    private static int waitQuietly(Process process) {
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String summary(List<Double> values, String format) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Comparator.naturalOrder());
        int n = sorted.size();
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        return String.format(format + " (" + format + "-" + format + ")", median, sorted.get(0), sorted.get(n - 1));
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                throw new IllegalArgumentException("options come as --name value: " + String.join(" ", args));
            }
            options.put(args[i], args[++i]);
        }
        return options;
    }
}
