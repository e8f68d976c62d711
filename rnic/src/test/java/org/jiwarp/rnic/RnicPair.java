package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;

/**
 * Two {@link Rnic}s over real loopback TCP, one queue pair each, connected: the "server" accepted,
 * the "client" connected. Both ends register a region of {@code regionSize} octets with every
 * access, and post {@code receives} receives of {@code receiveSize} octets each before connecting.
 *
 * <p>In {@code rnic}'s test-jar, for {@code conformance-tests} too.
 */
public final class RnicPair implements AutoCloseable {

    public final Rnic serverRnic;
    public final Rnic clientRnic;
    public final ProtectionDomain serverPd;
    public final ProtectionDomain clientPd;
    public final CompletionQueue serverCq;
    public final CompletionQueue clientCq;
    public final QueuePair server;
    public final QueuePair client;
    public final MemoryRegion serverRegion;
    public final MemoryRegion clientRegion;
    public final RnicListener listener;

    public RnicPair(MpaSettings mpa, int regionSize, QpConfigurer configure) throws Exception {
        this(RnicOptions.defaults().threads(1).mpa(mpa), regionSize, configure);
    }

    /** Both ends opened with {@code options} (one event loop thread each in the usual case). */
    public RnicPair(RnicOptions options, int regionSize, QpConfigurer configure) throws Exception {
        serverRnic = Rnic.open(options);
        clientRnic = Rnic.open(options);
        serverPd = serverRnic.allocatePd();
        clientPd = clientRnic.allocatePd();
        serverCq = serverRnic.createCq(1 << 16);
        clientCq = clientRnic.createCq(1 << 16);
        server = serverRnic.createQp(configure.apply(new QpConfig(serverPd, serverCq, serverCq), true));
        client = clientRnic.createQp(configure.apply(new QpConfig(clientPd, clientCq, clientCq), false));
        serverRegion = serverPd.register(ByteBuffer.allocateDirect(regionSize), Access.ALL);
        clientRegion = clientPd.register(ByteBuffer.allocateDirect(regionSize), Access.ALL);
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                request -> request.accept(server, new byte[] {'o', 'k'}).whenComplete((qp, error) -> {
                    if (error != null) {
                        accepted.completeExceptionally(error);
                    } else {
                        accepted.complete(qp);
                    }
                }));
        clientRnic.connect(client, listener.localAddress(), new byte[] {'h', 'i'}).get(10, TimeUnit.SECONDS);
        assertNotNull(accepted.get(10, TimeUnit.SECONDS));
    }

    /** Adjusts each side's QP configuration ({@code server} true for the accepting side). */
    @FunctionalInterface
    public interface QpConfigurer {
        QpConfig apply(QpConfig config, boolean server);
    }

    @Override
    public void close() {
        listener.close();
        clientRnic.close();
        serverRnic.close();
    }
}
