package org.jiwarp.conformance.siw;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A Linux soft-iWARP (siw) peer: Debian 12's kernel with siw, booted under QEMU from the
 * {@link SiwPeerImage}, with rdma-core's tools (rping, perftest's ib_* programs, {@code rdma}) to
 * run in it. Boot once, run many commands, close.
 *
 * <pre>
 *   host (this JVM)                         guest 10.0.2.15, device siw0 on eth0
 *   127.0.0.1:hostPort(7174)  --hostfwd-->  :7174   (rping -s listens here)
 *   127.0.0.1:&lt;your server&gt;  &lt;-- 10.0.2.2    (rping -c -a 10.0.2.2 reaches the host)
 *   pcap()  &lt;-- filter-dump of every frame on the guest's NIC
 *   run()/start()  --virtio-serial port-->  /bin/sh in the guest (acknowledged, resent if lost)
 * </pre>
 *
 * <p>QEMU's user network puts the host at 10.0.2.2 for the guest and forwards chosen host ports
 * (on 127.0.0.1) to guest ports; by default the rping and perftest ports, each to a free host port
 * ({@link #hostPort(int)}). Traffic between the guest and the host is recorded to {@link #pcap()},
 * which tshark reads. Traffic the guest sends itself (rping client and server both in the guest)
 * stays on its loopback and is not recorded.
 *
 * <p>Commands run under busybox {@code sh} in {@code /tmp} as root, one {@link #run} at a time;
 * {@link #start} puts a server in the background so the host can act meanwhile. Acceleration is
 * KVM where {@code /dev/kvm} works and TCG otherwise: {@link Accel#AUTO} tries KVM, and when the
 * kernel does not even print its banner remembers that for this host (in the image's cache
 * directory) and boots under TCG, which takes about 8-10 seconds.
 *
 * <p>The guest kernel is shared by everything run in it: a kernel BUG (such as a bad CRC on a P2P
 * RTR frame, see the project's iWARP notes) leaves it unusable; close it and boot a new one.
 */
public final class SiwPeer implements AutoCloseable {

    /** The guest's address on QEMU's user network; siw0 sits on its eth0. */
    public static final String GUEST_ADDRESS = "10.0.2.15";
    /** The host as the guest sees it: a jiwarp server on the host is reached at this address. */
    public static final String HOST_ADDRESS = "10.0.2.2";
    /** The RDMA device name in the guest. */
    public static final String DEVICE = "siw0";
    /** rping's default port. */
    public static final int RPING_PORT = 7174;
    /** perftest's default port. */
    public static final int PERFTEST_PORT = 18515;

    /** How the guest's CPU runs. */
    public enum Accel {
        /** KVM if {@code /dev/kvm} is usable and has not failed on this host before, else TCG. */
        AUTO,
        KVM,
        TCG
    }

    private static final Duration KVM_PROBE = Duration.ofSeconds(15);
    private static final Duration ANSWER_GRACE = Duration.ofSeconds(20);
    /** How long the guest gives one look at a background command's state ({@link Background#await}). */
    private static final Duration POLL_LIMIT = Duration.ofSeconds(5);
    private static final String KVM_VERDICT_FILE = "kvm-unusable";

    private final Process qemu;
    private final GuestChannel channel;
    private final Map<Integer, Integer> hostPorts;
    private final Path workDirectory;
    private final Path socketDirectory;
    private final Path pcap;
    private final Path consoleLog;
    private final Path qemuLog;
    private final Accel accel;
    private final Duration bootTime;
    private final Thread shutdownHook;

    private SiwPeer(Launch launch, Duration bootTime) {
        this.qemu = launch.process;
        this.channel = launch.channel;
        this.hostPorts = Collections.unmodifiableMap(launch.hostPorts);
        this.workDirectory = launch.workDirectory;
        this.socketDirectory = launch.socketDirectory;
        this.pcap = launch.pcap;
        this.consoleLog = launch.consoleLog;
        this.qemuLog = launch.qemuLog;
        this.accel = launch.accel;
        this.bootTime = bootTime;
        this.shutdownHook = launch.shutdownHook;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Boots a peer with the defaults: rping and perftest ports forwarded, 512 MiB, one vCPU. */
    public static SiwPeer boot() {
        return builder().boot();
    }

    // ----------------------------------------------------------------------------------------
    // Commands

    /**
     * Runs a shell command in the guest and waits for it. When {@code timeout} passes, the guest
     * kills the command and everything it started, and the result says {@link ExecResult#timedOut()}.
     *
     * @throws SiwPeerException when the guest does not answer (it crashed or hangs)
     */
    public ExecResult run(String command, Duration timeout) {
        long start = System.nanoTime();
        try {
            GuestChannel.Answer answer = channel.exec(command, timeout, ANSWER_GRACE);
            return new ExecResult(command, answer.exitCode(), answer.timedOut(), answer.output(),
                    Duration.ofNanos(System.nanoTime() - start));
        } catch (IOException e) {
            throw failure("`" + command + "` got no answer: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SiwPeerException("interrupted while running `" + command + "`", e);
        }
    }

    /** {@link #run(String, Duration)} with one minute. */
    public ExecResult run(String command) {
        return run(command, Duration.ofMinutes(1));
    }

    /**
     * Starts a shell command in the guest's background (a server such as {@code rping -s} or
     * {@code ib_write_bw}) and returns at once; {@link Background#await} collects its output and
     * exit status. A server needs a moment to listen: {@link #awaitListening} waits for that.
     */
    public Background start(String command) {
        try {
            return new Background(command, channel.spawn(command, ANSWER_GRACE));
        } catch (IOException e) {
            throw failure("`" + command + "` did not start: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SiwPeerException("interrupted while starting `" + command + "`", e);
        }
    }

    /** Waits until something in the guest listens on TCP {@code guestPort} (siw's listeners are kernel TCP sockets). */
    public void awaitListening(int guestPort, Duration timeout) {
        String hex = String.format(Locale.ROOT, "%04X", guestPort);
        ExecResult result = run("while ! cat /proc/net/tcp /proc/net/tcp6 | grep -q ':" + hex
                + " [0-9A-F]*:0000 0A'; do sleep 0.05; done", timeout);
        if (!result.succeeded()) {
            throw failure("nothing listens on guest port " + guestPort + " after " + timeout.toMillis() + " ms", null);
        }
    }

    /**
     * What the guest's kernel says of its tasks, asked through QEMU's monitor so that it works when
     * the guest's command channel no longer answers: Alt-SysRq-W (tasks in uninterruptible sleep),
     * Alt-SysRq-L (what the CPU runs) and Alt-SysRq-T (every task's state and stack), of which only
     * the tasks that are not kernel threads are kept (the command loop's shell and what it started).
     * The console lines, or a sentence saying why there are none.
     */
    public String blockedTasks() {
        long before = readQuietly(consoleLog).length();
        try (SocketChannel monitor = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            monitor.connect(UnixDomainSocketAddress.of(socketDirectory.resolve("mon.sock")));
            for (String key : new String[] {"w", "l", "t"}) {
                monitor.write(ByteBuffer.wrap(("sendkey alt-sysrq-" + key + "\n").getBytes(StandardCharsets.US_ASCII)));
                Thread.sleep(key.equals("t") ? 5000 : 1500);
            }
        } catch (IOException e) {
            return "QEMU's monitor did not answer: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        String console = readQuietly(consoleLog);
        String dump = console.length() > before ? console.substring((int) before) : "";
        return dump.isBlank() ? "the guest's kernel printed nothing on Alt-SysRq-W/L/T" : withoutKernelThreads(dump);
    }

    /**
     * Leaves out of a SysRq dump the blocks of kernel threads (a {@code task:} line with ppid 2, or
     * kthreadd itself): what is left is the system's own lines and the user tasks with their stacks.
     */
    static String withoutKernelThreads(String dump) {
        StringBuilder kept = new StringBuilder();
        boolean skipping = false;
        for (String line : dump.split("\n", -1)) {
            int task = line.indexOf("task:");
            if (task >= 0) {
                skipping = line.contains(" ppid:2 ") || line.contains(" pid:2 ");
            } else if (line.contains("sysrq:")) {
                skipping = false;
            }
            if (!skipping) {
                kept.append(line).append('\n');
            }
        }
        return kept.toString();
    }

    /** The guest kernel log. */
    public String dmesg() {
        return run("dmesg", Duration.ofSeconds(30)).orThrow().output();
    }

    /** What the guest's setup (modules, network, {@code rdma link add}) printed. */
    public String setupLog() {
        return run("cat /tmp/jw/setup.log", Duration.ofSeconds(30)).orThrow().output();
    }

    /** Everything the guest printed on its console (ttyS0) so far: kernel messages and the setup. */
    public String console() {
        return readQuietly(consoleLog);
    }

    // ----------------------------------------------------------------------------------------
    // What the host sees

    /** The host port on 127.0.0.1 that reaches {@code guestPort} in the guest. */
    public int hostPort(int guestPort) {
        Integer port = hostPorts.get(guestPort);
        if (port == null) {
            throw new IllegalArgumentException("guest port " + guestPort + " is not forwarded; forwarded: " + hostPorts.keySet());
        }
        return port;
    }

    /** Guest port to host port, for every forward. */
    public Map<Integer, Integer> forwardedPorts() {
        return hostPorts;
    }

    /** The pcap that QEMU's filter-dump writes: every frame between the guest's NIC and the host. */
    public Path pcap() {
        return pcap;
    }

    /**
     * Stops recording the guest's traffic for good: QEMU drops the capture's filter and closes
     * {@link #pcap()}, which then holds everything up to this moment. For a run whose bulk
     * transfers would make the capture too long to compare, after the part worth comparing.
     *
     * @throws SiwPeerException when QEMU's monitor does not take the command
     */
    public void stopPcap() {
        String answer;
        try (SocketChannel monitor = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            monitor.connect(UnixDomainSocketAddress.of(socketDirectory.resolve("mon.sock")));
            monitor.write(ByteBuffer.wrap("object_del dump0\ninfo version\n".getBytes(StandardCharsets.US_ASCII)));
            // The monitor echoes and answers in order: once the version is there, object_del has been answered.
            StringBuilder said = new StringBuilder();
            ByteBuffer buffer = ByteBuffer.allocate(4096);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            monitor.configureBlocking(false);
            while (!said.toString().matches("(?s).*info version.*\\n\\d+\\.\\d+\\.\\d+.*\\n.*")) {
                if (System.nanoTime() - deadline > 0) {
                    throw failure("QEMU's monitor did not answer object_del within 10 s: " + said, null);
                }
                buffer.clear();
                if (monitor.read(buffer) > 0) {
                    said.append(new String(buffer.array(), 0, buffer.position(), StandardCharsets.ISO_8859_1));
                } else {
                    Thread.sleep(20);
                }
            }
            answer = said.toString();
        } catch (IOException e) {
            throw failure("QEMU's monitor did not take object_del: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SiwPeerException("interrupted while stopping the capture", e);
        }
        String reply = answer.substring(answer.indexOf("object_del dump0"), answer.indexOf("info version"));
        if (reply.toLowerCase(Locale.ROOT).contains("error") || reply.contains("not found")) {
            throw failure("QEMU did not stop the capture: " + reply.strip(), null);
        }
    }

    /** Where the console log, QEMU's log and (by default) the pcap are kept; not deleted on close. */
    public Path workDirectory() {
        return workDirectory;
    }

    /** From starting QEMU to the guest's READY line. */
    public Duration bootTime() {
        return bootTime;
    }

    /** KVM or TCG, as the guest actually runs. */
    public Accel accel() {
        return accel;
    }

    /** Whether QEMU still runs and the command channel is in step. */
    public boolean isAlive() {
        return qemu.isAlive() && !channel.isBroken();
    }

    /**
     * What the command channel to this guest sent and had to send again so far: requests, copies
     * resent and why, the slowest acknowledgement. {@link #close()} prints it.
     */
    public String channelReport() {
        return channel.stats().toString();
    }

    /** The command channel itself, for its own tests. */
    GuestChannel channel() {
        return channel;
    }

    /** {@link #channelReport()} over every guest this JVM booted. */
    public static String channelTotals() {
        return GuestChannel.totals().toString();
    }

    /** Closes the channel and stops QEMU; prints {@link #channelReport()} and {@link #channelTotals()}. */
    @Override
    public void close() {
        System.out.println("siw-peer " + workDirectory.getFileName() + ": command channel: " + channelReport()
                + "\nsiw-peer: command channels of this JVM so far: " + channelTotals());
        channel.close();
        stop(qemu);
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
        deleteQuietly(socketDirectory.resolve("cmd.sock"));
        deleteQuietly(socketDirectory.resolve("mon.sock"));
        deleteQuietly(socketDirectory);
    }

    private SiwPeerException failure(String what, Throwable cause) {
        return new SiwPeerException(what + (qemu.isAlive() ? "" : " (QEMU exited " + qemu.exitValue() + ")")
                + "\n" + diagnostics(consoleLog, qemuLog), cause);
    }

    // ----------------------------------------------------------------------------------------

    /**
     * A command running in the guest's background. Closing it kills it if it still runs, so a
     * server does not outlive its test: use try-with-resources.
     */
    public final class Background implements AutoCloseable {

        private final String command;
        private final GuestChannel.Spawned spawned;
        private final long startNanos = System.nanoTime();
        private ExecResult result;

        private Background(String command, GuestChannel.Spawned spawned) {
            this.command = command;
            this.spawned = spawned;
        }

        /** Its process group in the guest. */
        public int pid() {
            return spawned.pid();
        }

        public boolean isDone() {
            return result != null || poll().startsWith("done ");
        }

        /** Its output so far. */
        public String output() {
            return result != null ? result.output() : run("cat " + file("out"), Duration.ofSeconds(30)).output();
        }

        /**
         * Waits for it to end and returns its exit status and output. When {@code timeout} passes
         * first, kills it (and all it started) and returns what it printed, marked timed out.
         */
        public synchronized ExecResult await(Duration timeout) {
            if (result != null) {
                return result;
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            long pause = 20;
            while (true) {
                String state = poll();
                if (state.startsWith("done ")) {
                    return finish(state, false);
                }
                if (System.nanoTime() - deadline > 0) {
                    kill();
                    String after = pollUntilDone(Duration.ofSeconds(10));
                    return finish(after, true);
                }
                sleep(pause);
                pause = Math.min(250, pause * 2);
            }
        }

        /** Kills it and everything it started (SIGKILL to its process group). */
        public void kill() {
            run("kill -9 -" + spawned.pid() + " 2>/dev/null; true", Duration.ofSeconds(30));
        }

        @Override
        public void close() {
            if (result == null && isAlive()) {
                kill();
            }
        }

        /**
         * One look at the command's state. The script is a test and a {@code cat}: five seconds
         * is ample even in a busy emulated guest (a script cut short reads as still running), and a
         * guest that stops answering is found 25 s later rather than 50 ({@link GuestHang}).
         */
        private String poll() {
            String f = "/tmp/jw/" + spawned.id();
            ExecResult state = run("if [ -e " + f + ".rc ]; then echo \"done $(cat " + f + ".rc)\"; cat " + f
                    + ".out; else echo running; fi", POLL_LIMIT);
            return state.output();
        }

        private String pollUntilDone(Duration limit) {
            long deadline = System.nanoTime() + limit.toNanos();
            String state = poll();
            while (!state.startsWith("done ") && System.nanoTime() - deadline < 0) {
                sleep(100);
                state = poll();
            }
            return state;
        }

        private ExecResult finish(String state, boolean timedOut) {
            Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
            if (!state.startsWith("done ")) {
                return new ExecResult(command, -1, true, output(), elapsed);
            }
            int newline = state.indexOf('\n');
            String first = newline < 0 ? state : state.substring(0, newline);
            String output = newline < 0 ? "" : state.substring(newline + 1);
            result = new ExecResult(command, Integer.parseInt(first.substring(5).trim()), timedOut, output, elapsed);
            run("rm -f " + file("sh") + " " + file("out") + " " + file("rc") + " " + file("pid"), Duration.ofSeconds(30));
            return result;
        }

        private String file(String suffix) {
            return "/tmp/jw/" + spawned.id() + "." + suffix;
        }

        @Override
        public String toString() {
            return "`" + command + "` (pid " + spawned.pid() + ")";
        }
    }

    // ----------------------------------------------------------------------------------------

    /** Options for booting a peer; {@link #boot()} starts it. */
    public static final class Builder {

        private final Map<Integer, Integer> forwards = new LinkedHashMap<>();
        private SiwPeerImage image;
        private Path workDirectory;
        private Path pcap;
        private int memoryMb = 512;
        private int cpus = 1;
        private Accel accel;
        private Duration bootTimeout = Duration.ofMinutes(2);
        private String kernelArguments = "";
        private List<String> privateLink = List.of();

        private Builder() {
        }

        /**
         * A second NIC, the guest's eth1, on a link of its own to one other guest: QEMU's socket
         * network, the first guest listening on 127.0.0.1:{@code port} and the second (booted after
         * it) connecting there, so the two guests reach each other and nothing else. The guest
         * gives eth1 no address; a test does that. Every frame on the link is recorded to
         * {@code pcap} when it is not {@code null}.
         *
         * @param mac eth1's MAC address, which must differ between the two guests
         */
        public Builder privateLink(boolean listen, int port, String mac, Path pcap) {
            List<String> link = new ArrayList<>(List.of(
                    "-netdev", "socket,id=link1," + (listen ? "listen" : "connect") + "=127.0.0.1:" + port,
                    "-device", "virtio-net-pci,netdev=link1,mac=" + mac));
            if (pcap != null) {
                link.addAll(List.of("-object", "filter-dump,id=dump1,netdev=link1,file=" + qemuPath(pcap.toAbsolutePath())));
            }
            this.privateLink = List.copyOf(link);
            return this;
        }

        /** Forwards a free host port to {@code guestPort}. Without any forward: {@link #RPING_PORT} and {@link #PERFTEST_PORT}. */
        public Builder forward(int guestPort) {
            return forward(0, guestPort);
        }

        /** Forwards 127.0.0.1:{@code hostPort} (0 = a free one) to {@code guestPort}. */
        public Builder forward(int hostPort, int guestPort) {
            forwards.put(guestPort, hostPort);
            return this;
        }

        /** The image to boot; default {@link SiwPeerImage#ensureBuilt()}. */
        public Builder image(SiwPeerImage image) {
            this.image = image;
            return this;
        }

        /** Where logs and the pcap go; default a new temporary directory. */
        public Builder workDirectory(Path directory) {
            this.workDirectory = directory;
            return this;
        }

        /** Where the capture goes; default {@code siw-peer.pcap} in the work directory. */
        public Builder pcap(Path pcap) {
            this.pcap = pcap;
            return this;
        }

        public Builder memoryMb(int memoryMb) {
            this.memoryMb = memoryMb;
            return this;
        }

        public Builder cpus(int cpus) {
            this.cpus = cpus;
            return this;
        }

        /** Default: {@code -Djiwarp.siw.accel} or {@code $JIWARP_SIW_ACCEL} (auto, kvm, tcg), else AUTO. */
        public Builder accel(Accel accel) {
            this.accel = accel;
            return this;
        }

        /** How long the guest may take to come up; default two minutes (TCG on a busy machine). */
        public Builder bootTimeout(Duration bootTimeout) {
            this.bootTimeout = bootTimeout;
            return this;
        }

        /** Added to the guest kernel's command line. */
        public Builder kernelArguments(String arguments) {
            this.kernelArguments = arguments;
            return this;
        }

        /**
         * Boots the peer and waits for its READY line.
         *
         * @throws SiwPeerException when it does not come up in time or its setup failed; the
         *     message holds the guest console and QEMU's log
         */
        public SiwPeer boot() {
            SiwPeerImage bootImage = image != null ? image : SiwPeerImage.ensureBuilt();
            Accel wanted = accel != null ? accel : configuredAccel();
            try {
                Path work = workDirectory != null ? Files.createDirectories(workDirectory)
                        : Files.createTempDirectory("jiwarp-siw-peer-");
                if (wanted == Accel.AUTO) {
                    if (kvmUsable(bootImage)) {
                        try {
                            return bootWith(bootImage, work, Accel.KVM, true);
                        } catch (KvmUnusable e) {
                            rememberKvmUnusable(bootImage, e.getMessage());
                        }
                    }
                    wanted = Accel.TCG;
                }
                return bootWith(bootImage, work, wanted, false);
            } catch (IOException e) {
                throw new SiwPeerException("cannot prepare the siw peer: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SiwPeerException("interrupted while booting the siw peer", e);
            }
        }

        private SiwPeer bootWith(SiwPeerImage bootImage, Path work, Accel mode, boolean probing)
                throws IOException, InterruptedException {
            for (int attempt = 1; ; attempt++) {
                Launch launch = Launch.start(this, bootImage, work, mode);
                try {
                    return launch.awaitReady(bootTimeout, probing);
                } catch (PortTaken e) {
                    if (attempt == 3) {
                        throw new SiwPeerException("QEMU could not forward the ports " + launch.hostPorts + ":\n"
                                + diagnostics(launch.consoleLog, launch.qemuLog));
                    }
                }
            }
        }
    }

    /** One QEMU process on its way up. */
    private static final class Launch {

        final Process process;
        final Map<Integer, Integer> hostPorts;
        final Path workDirectory;
        final Path socketDirectory;
        final Path pcap;
        final Path consoleLog;
        final Path qemuLog;
        final Accel accel;
        final long startNanos;
        final Thread shutdownHook;
        GuestChannel channel;

        private Launch(Process process, Map<Integer, Integer> hostPorts, Path workDirectory, Path socketDirectory,
                Path pcap, Path consoleLog, Path qemuLog, Accel accel, long startNanos) {
            this.process = process;
            this.hostPorts = hostPorts;
            this.workDirectory = workDirectory;
            this.socketDirectory = socketDirectory;
            this.pcap = pcap;
            this.consoleLog = consoleLog;
            this.qemuLog = qemuLog;
            this.accel = accel;
            this.startNanos = startNanos;
            this.shutdownHook = new Thread(() -> process.destroyForcibly(), "siw-peer-shutdown");
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        }

        static Launch start(Builder b, SiwPeerImage image, Path work, Accel accel) throws IOException {
            Map<Integer, Integer> ports = new LinkedHashMap<>();
            Map<Integer, Integer> wanted = b.forwards.isEmpty()
                    ? Map.of(RPING_PORT, 0, PERFTEST_PORT, 0) : b.forwards;
            for (Map.Entry<Integer, Integer> e : new TreeMap<>(wanted).entrySet()) {
                ports.put(e.getKey(), e.getValue() != 0 ? e.getValue() : freePort());
            }
            // Unix socket paths are limited to 107 bytes: keep this one short, apart from the work directory.
            Path sockets = Files.createTempDirectory("siw-");
            Path socket = sockets.resolve("cmd.sock");
            Path console = work.resolve("console.log");
            Path qemuLog = work.resolve("qemu.log");
            Path pcap = b.pcap != null ? b.pcap.toAbsolutePath() : work.resolve("siw-peer.pcap");
            Files.deleteIfExists(console);
            Files.deleteIfExists(pcap);

            StringBuilder netdev = new StringBuilder("user,id=net0");
            ports.forEach((guest, host) -> netdev.append(",hostfwd=tcp:127.0.0.1:").append(host).append("-:").append(guest));
            List<String> cmd = new ArrayList<>(List.of(qemuBinary(), "-name", "jiwarp-siw-peer",
                    "-nodefaults", "-nographic", "-no-reboot",
                    "-m", b.memoryMb + "M", "-smp", Integer.toString(b.cpus)));
            if (accel == Accel.KVM) {
                cmd.addAll(List.of("-accel", "kvm", "-cpu", "host"));
            } else {
                cmd.addAll(List.of("-accel", "tcg", "-cpu", "max"));
            }
            cmd.addAll(List.of(
                    "-kernel", image.kernel().toString(),
                    "-initrd", image.initrd().toString(),
                    // sysrq_always_enabled: blockedTasks() asks the kernel for its blocked tasks with Alt-SysRq-W.
                    "-append", ("console=ttyS0 panic=-1 sysrq_always_enabled " + b.kernelArguments).trim(),
                    "-serial", "file:" + qemuPath(console),
                    // The command channel: a virtio-serial port, which moves whole buffers (the
                    // second UART it replaced trickled each request in a byte at a time).
                    "-chardev", "socket,id=jwcmd,path=" + qemuPath(socket) + ",server=on,wait=on",
                    "-device", "virtio-serial-pci,id=jwser",
                    "-device", "virtserialport,bus=jwser.0,chardev=jwcmd,name=" + GuestChannel.PORT_NAME,
                    "-monitor", "unix:" + qemuPath(sockets.resolve("mon.sock")) + ",server=on,wait=off",
                    "-netdev", netdev.toString(),
                    "-device", "virtio-net-pci,netdev=net0",
                    "-object", "filter-dump,id=dump0,netdev=net0,file=" + qemuPath(pcap)));
            cmd.addAll(b.privateLink);
            Files.writeString(qemuLog, String.join(" ", cmd) + "\n\n");
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(qemuLog.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            long start = System.nanoTime();
            Process process = pb.start();
            return new Launch(process, ports, work, sockets, pcap, console, qemuLog, accel, start);
        }

        SiwPeer awaitReady(Duration bootTimeout, boolean probingKvm) throws IOException, InterruptedException {
            long deadline = startNanos + bootTimeout.toNanos();
            try {
                // QEMU creates the socket, then waits for us before it starts the guest.
                while ((channel = GuestChannel.tryConnect(socketDirectory.resolve("cmd.sock"))) == null) {
                    if (!process.isAlive()) {
                        throw exited(probingKvm);
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new SiwPeerException("QEMU did not open its command socket in " + bootTimeout.toSeconds()
                                + " s\n" + diagnostics(consoleLog, qemuLog));
                    }
                    Thread.sleep(20);
                }
                if (probingKvm) {
                    // Under working KVM the kernel prints its banner within a second or two.
                    long probeEnd = System.nanoTime() + KVM_PROBE.toNanos();
                    while (!readQuietly(consoleLog).contains("Linux version")) {
                        if (!process.isAlive()) {
                            throw exited(true);
                        }
                        if (System.nanoTime() - probeEnd > 0) {
                            throw new KvmUnusable("no kernel banner after " + KVM_PROBE.toSeconds() + " s under KVM");
                        }
                        Thread.sleep(50);
                    }
                }
                int failed = channel.awaitReady(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                if (failed < 0) {
                    throw new SiwPeerException("the siw peer did not come up within " + bootTimeout.toSeconds() + " s ("
                            + accel + ")\n" + diagnostics(consoleLog, qemuLog));
                }
                Duration bootTime = Duration.ofNanos(System.nanoTime() - startNanos);
                SiwPeer peer = new SiwPeer(this, bootTime);
                if (failed > 0) {
                    String setup = peer.run("cat /tmp/jw/setup.log", Duration.ofSeconds(30)).output();
                    peer.close();
                    throw new SiwPeerException(failed + " setup step(s) failed in the siw peer:\n" + setup
                            + "\n" + diagnostics(consoleLog, qemuLog));
                }
                return peer;
            } catch (IOException e) {
                if (!process.isAlive() || process.waitFor(2, TimeUnit.SECONDS)) {
                    throw exited(probingKvm);
                }
                abandon();
                throw new SiwPeerException("lost the siw peer during boot: " + e.getMessage() + "\n"
                        + diagnostics(consoleLog, qemuLog), e);
            } catch (RuntimeException | InterruptedException e) {
                abandon();
                throw e;
            }
        }

        private RuntimeException exited(boolean probingKvm) {
            abandon();
            String log = readQuietly(qemuLog);
            String said = log.substring(Math.min(log.length(), log.indexOf("\n\n") + 2)); // after our command line
            if (said.toLowerCase(Locale.ROOT).contains("host forwarding rule")) {
                return new PortTaken();
            }
            if (probingKvm) {
                return new KvmUnusable("QEMU exited under KVM: " + lastLines(said, 2).replace('\n', ' '));
            }
            return new SiwPeerException("QEMU exited during boot (" + accel + ")\n" + diagnostics(consoleLog, qemuLog));
        }

        private void abandon() {
            if (channel != null) {
                channel.close();
            }
            stop(process);
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // shutting down
            }
            deleteQuietly(socketDirectory.resolve("cmd.sock"));
            deleteQuietly(socketDirectory);
        }
    }

    /** KVM is there but does not run this guest (nested virtualisation without long mode, say). */
    private static final class KvmUnusable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        KvmUnusable(String message) {
            super(message, null, false, false);
        }
    }

    /** A host port we picked was taken before QEMU bound it. */
    private static final class PortTaken extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PortTaken() {
            super(null, null, false, false);
        }
    }

    // ----------------------------------------------------------------------------------------

    private static Accel configuredAccel() {
        String value = System.getProperty("jiwarp.siw.accel");
        if (value == null || value.isBlank()) {
            value = System.getenv("JIWARP_SIW_ACCEL");
        }
        if (value == null || value.isBlank()) {
            return Accel.AUTO;
        }
        return Accel.valueOf(value.trim().toUpperCase(Locale.ROOT));
    }

    private static boolean kvmUsable(SiwPeerImage image) {
        Path kvm = Path.of("/dev/kvm");
        if (!Files.isReadable(kvm) || !Files.isWritable(kvm)) {
            return false;
        }
        String verdicts = readQuietly(image.directory().resolve(KVM_VERDICT_FILE));
        return !verdicts.lines().anyMatch(line -> line.startsWith(hostKey() + " "));
    }

    private static void rememberKvmUnusable(SiwPeerImage image, String why) {
        try {
            Files.writeString(image.directory().resolve(KVM_VERDICT_FILE), hostKey() + " " + why + "\n",
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            // next time we probe again
        }
    }

    /** The host kernel, which decides whether (nested) KVM works. */
    private static String hostKey() {
        return System.getProperty("os.version", "?").replace(' ', '_');
    }

    private static String qemuBinary() {
        Path qemu = SiwPeerImage.onPath("qemu-system-x86_64");
        if (qemu == null) {
            throw new SiwPeerException("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)");
        }
        return qemu.toString();
    }

    /** QEMU option values escape a comma by doubling it. */
    private static String qemuPath(Path path) {
        return path.toAbsolutePath().toString().replace(",", ",,");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static String diagnostics(Path consoleLog, Path qemuLog) {
        return "--- guest console (" + consoleLog + "), last 60 lines ---\n" + lastLines(readQuietly(consoleLog), 60)
                + "\n--- QEMU log (" + qemuLog + ") ---\n" + lastLines(readQuietly(qemuLog), 30);
    }

    private static String lastLines(String text, int count) {
        List<String> lines = text.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    private static String readQuietly(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (IOException | UncheckedIOException e) {
            return "";
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a temporary file; never mind
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SiwPeerException("interrupted", e);
        }
    }
}
