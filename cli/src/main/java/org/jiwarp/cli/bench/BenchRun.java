package org.jiwarp.cli.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;

/**
 * The processes of a benchmark: the client side (an {@code Rnic} and a TCP baseline client) and,
 * when embedded, the server side too (a second {@code Rnic} with a {@link BenchServer}, and the TCP
 * baseline server), each side with its own event loops.
 */
public final class BenchRun implements AutoCloseable {

    /**
     * @param capture where the client's connections are recorded (one file each), or {@code null}
     */
    public record Settings(MpaSettings mpa, RnicOptions.Transport transport, int threads, Path capture) {

        RnicOptions rnicOptions(boolean capturing) {
            // A bench client opens all its queue pairs at once (-q 1000): admit them all to setup.
            RnicOptions options = RnicOptions.defaults().mpa(mpa).transport(transport).threads(threads)
                    .maxSetups(100_000);
            return capturing && capture != null ? options.capture(capture) : options;
        }
    }

    private final Rnic clientRnic;
    private final JiwarpClient jiwarp;
    private final TcpBaseline.Client tcp;
    private final Servers servers;

    private BenchRun(Settings settings, InetSocketAddress jiwarpServer, InetSocketAddress tcpServer, Servers servers) {
        this.servers = servers;
        this.clientRnic = Rnic.open(settings.rnicOptions(true));
        this.jiwarp = new JiwarpClient(clientRnic, jiwarpServer);
        this.tcp = new TcpBaseline.Client(settings.threads(), TcpBaseline.epoll(clientRnic.transport()), tcpServer);
    }

    /** Server and client in this process, over loopback. */
    public static BenchRun embedded(Settings settings) {
        Servers servers = serve(settings, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), message -> { });
        try {
            return new BenchRun(settings, servers.jiwarpAddress(), servers.tcpAddress(), servers);
        } catch (RuntimeException e) {
            servers.close();
            throw e;
        }
    }

    /** A client of a {@code jiwarp bench --server} elsewhere. */
    public static BenchRun remote(Settings settings, InetSocketAddress jiwarpServer, InetSocketAddress tcpServer) {
        return new BenchRun(settings, jiwarpServer, tcpServer, null);
    }

    /** The server side: jiwarp on {@code bind}, the TCP baseline on the next port (or any, for port 0). */
    public static Servers serve(Settings settings, InetSocketAddress bind, Consumer<String> log) {
        return new Servers(settings, bind, log);
    }

    /** Runs one spec on {@code stack} ("jiwarp" or "tcp"). */
    public BenchResult run(String stack, BenchSpec spec, int connections, Limit limit, Consumer<String> progress)
            throws Exception {
        return Bench.run(stack.equals("tcp") ? tcp : jiwarp, spec, connections, limit, progress);
    }

    @Override
    public void close() {
        try {
            tcp.close();
            clientRnic.close();
        } finally {
            if (servers != null) {
                servers.close();
            }
        }
    }

    /** What {@code jiwarp bench --server} runs. */
    public static final class Servers implements AutoCloseable {
        private final Rnic rnic;
        private final BenchServer jiwarp;
        private final TcpBaseline.Server tcp;

        Servers(Settings settings, InetSocketAddress bind, Consumer<String> log) {
            this.rnic = Rnic.open(settings.rnicOptions(false));
            try {
                this.jiwarp = new BenchServer(rnic, bind, log);
                InetSocketAddress tcpBind = new InetSocketAddress(bind.getAddress(),
                        bind.getPort() == 0 ? 0 : bind.getPort() + 1);
                this.tcp = new TcpBaseline.Server(settings.threads(), TcpBaseline.epoll(rnic.transport()), tcpBind);
            } catch (RuntimeException e) {
                rnic.close();
                throw e;
            }
        }

        public InetSocketAddress jiwarpAddress() {
            return jiwarp.localAddress();
        }

        public InetSocketAddress tcpAddress() {
            return tcp.localAddress();
        }

        @Override
        public void close() {
            try {
                jiwarp.close();
                tcp.close();
            } finally {
                rnic.close();
            }
        }
    }
}
