package org.jiwarp.tools.perftest;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.Rnic;

/**
 * The client side of a perftest run ({@code ib_write_bw -R HOST} and friends): connects the control
 * connection, then the test connection to the same address (retrying, as perftest does, while the
 * server sets up its second listener), and runs.
 */
public final class PerftestClient {

    /** perftest retries a refused test connection every 100 ms. */
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private PerftestClient() {
    }

    /**
     * Runs one test against a perftest server.
     *
     * @param out where the perftest-style report goes, line by line
     * @param log where connection events go
     * @throws PerftestException when the run fails
     */
    public static PerftestResult run(Rnic rnic, InetSocketAddress server, PerftestParameters parameters,
            Consumer<String> out, Consumer<String> log) {
        parameters.validate();
        long timeout = parameters.timeout().toNanos();
        PerftestSession.Connections connections = new PerftestSession.Connections() {
            @Override
            public void control(QueuePair qp) {
                connect(rnic, qp, server, timeout, "the control connection");
            }

            @Override
            public PerftestSession.TestQp test(Supplier<PerftestSession.TestQp> factory) {
                long deadline = System.nanoTime() + timeout;
                int attempts = 0;
                while (true) {
                    PerftestSession.TestQp test = factory.get();
                    attempts++;
                    try {
                        connect(rnic, test.qp(), server, timeout, "the test connection");
                        if (attempts > 1) {
                            log.accept("test connection up after " + attempts + " attempts");
                        }
                        return test;
                    } catch (PerftestException e) {
                        if (System.nanoTime() + RETRY_NANOS - deadline > 0) {
                            throw new PerftestException(e.getMessage() + " (" + attempts + " attempts)", e.getCause());
                        }
                        sleep(RETRY_NANOS);
                    }
                }
            }
        };
        return new PerftestSession(rnic, parameters, false, connections, out, log).run();
    }

    private static void connect(Rnic rnic, QueuePair qp, InetSocketAddress server, long timeout, String what) {
        try {
            rnic.connect(qp, server, new byte[0]).get(timeout, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new PerftestException(what + " to " + org.jiwarp.tools.Failures.address(server) + " failed: "
                    + org.jiwarp.tools.Failures.describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            qp.disconnect();
            throw new PerftestException(what + " to " + server + " timed out", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted while connecting " + what, e);
        }
    }

    private static void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted", e);
        }
    }
}
