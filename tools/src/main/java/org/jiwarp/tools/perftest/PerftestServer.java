package org.jiwarp.tools.perftest;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.tools.Failures;

/**
 * The server side of a perftest run ({@code ib_write_bw -R} and friends): listens, accepts the
 * control connection and then, on the same port, the test connection from the same host, and runs
 * one test. perftest closes its listener after each accept and opens a new one for the test
 * connection; one listener serves here, closed once the test connection is up.
 */
public final class PerftestServer implements AutoCloseable {

    private final RnicListener listener;
    private final BlockingQueue<ConnectRequest> requests = new LinkedBlockingQueue<>();
    private volatile boolean closed;

    private PerftestServer(Rnic rnic, InetSocketAddress bind) {
        this.listener = rnic.listen(bind, request -> {
            if (closed) {
                request.reject(new byte[0]);
            } else {
                requests.add(request);
            }
        });
    }

    /** Listens on {@code bind} (port 0: any free port). */
    public static PerftestServer listen(Rnic rnic, InetSocketAddress bind) {
        return new PerftestServer(rnic, bind);
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /**
     * Waits for a client and runs one test with it.
     *
     * @param acceptTimeout how long to wait for the client; {@code null} or zero waits for ever
     * @throws PerftestException when the run fails or no client comes
     */
    public PerftestResult serve(Rnic rnic, PerftestParameters parameters, Duration acceptTimeout,
            Consumer<String> out, Consumer<String> log) {
        parameters.validate();
        long timeout = parameters.timeout().toNanos();
        InetAddress[] client = new InetAddress[1];
        PerftestSession.Connections connections = new PerftestSession.Connections() {
            @Override
            public void control(QueuePair qp) {
                ConnectRequest request = next(acceptTimeout == null || acceptTimeout.isZero() ? -1
                        : acceptTimeout.toNanos(), "a client");
                client[0] = host(request.remoteAddress());
                log.accept("client " + Failures.address(request.remoteAddress()) + " connecting: "
                        + Failures.connection(request.parameters()));
                accept(request, qp, timeout, "the control connection");
            }

            @Override
            public PerftestSession.TestQp test(Supplier<PerftestSession.TestQp> factory) {
                long deadline = System.nanoTime() + timeout;
                while (true) {
                    ConnectRequest request = next(Math.max(1, deadline - System.nanoTime()),
                            "the client's test connection");
                    if (client[0] != null && !client[0].equals(host(request.remoteAddress()))) {
                        log.accept("rejecting " + Failures.address(request.remoteAddress()) + ": a test is running with " + client[0]);
                        request.reject(new byte[0]);
                        continue;
                    }
                    PerftestSession.TestQp test = factory.get();
                    if (parameters.latency()) {
                        // ib_write_lat's server writes first, on the connection it accepted: RFC 5044
                        // section 7.1.2 has a responder wait for the initiator's first FPDU, so neither
                        // side would move. siw does not hold back (nor does perftest expect it to).
                        request.holdFirstMessage(false);
                        log.accept("ib_write_lat: the server writes first, so this responder does not wait for "
                                + "the client's first FPDU (RFC 5044 section 7.1.2 relaxed, as siw does)");
                    }
                    try {
                        accept(request, test.qp(), timeout, "the test connection");
                        closeListener();
                        return test;
                    } catch (PerftestException e) {
                        if (System.nanoTime() - deadline > 0) {
                            throw e;
                        }
                        log.accept(e.getMessage() + "; waiting for another attempt");
                    }
                }
            }
        };
        try {
            return new PerftestSession(rnic, parameters, true, connections, out, log).run();
        } finally {
            close();
        }
    }

    private ConnectRequest next(long nanos, String what) {
        try {
            ConnectRequest request = nanos < 0 ? requests.take() : requests.poll(nanos, TimeUnit.NANOSECONDS);
            if (request == null) {
                throw new PerftestException("no connection from " + what + " within "
                        + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms");
            }
            return request;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted while waiting for " + what, e);
        }
    }

    private static void accept(ConnectRequest request, QueuePair qp, long timeout, String what) {
        try {
            request.accept(qp, new byte[0]).get(timeout, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new PerftestException("accepting " + what + " from " + Failures.address(request.remoteAddress()) + " failed: "
                    + Failures.describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            qp.disconnect();
            throw new PerftestException("accepting " + what + " from " + Failures.address(request.remoteAddress()) + " timed out", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted while accepting " + what, e);
        }
    }

    private static InetAddress host(SocketAddress address) {
        return address instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    private void closeListener() {
        if (!closed) {
            closed = true;
            listener.close();
            for (ConnectRequest request = requests.poll(); request != null; request = requests.poll()) {
                request.reject(new byte[0]);
            }
        }
    }

    @Override
    public void close() {
        closeListener();
    }
}
