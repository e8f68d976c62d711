package org.jiwarp.rnic;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;

/**
 * How an {@link Rnic} runs: its event loop threads and transport, the MPA settings its connections
 * use (IRD/ORD come from each queue pair), how many STags it can hold, and whether its connections
 * are captured to pcap files.
 *
 * <p>Immutable: each method named after a setting returns a copy with that setting changed
 * ({@code RnicOptions.defaults().threads(1).capture(dir)}).
 */
public final class RnicOptions {

    /** The socket transport. */
    public enum Transport {
        /** Native epoll when the platform has it, else NIO. */
        AUTO,
        NIO,
        EPOLL
    }

    private final int threads;
    private final Transport transport;
    private final MpaSettings mpa;
    private final int maxStags;
    private final int maxSetups;
    private final Path capture;
    private final Duration closeTimeout;

    /** How long closing a connection may take by default: see {@link #closeTimeout(Duration)}. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(3);

    private RnicOptions(int threads, Transport transport, MpaSettings mpa, int maxStags, int maxSetups, Path capture,
            Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
        this.threads = threads;
        this.transport = transport;
        this.mpa = mpa;
        this.maxStags = maxStags;
        this.maxSetups = maxSetups;
        this.capture = capture;
    }

    public static RnicOptions defaults() {
        return new RnicOptions(Math.max(1, Runtime.getRuntime().availableProcessors()), Transport.AUTO,
                MpaSettings.builder().rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ)).build(), 1 << 16, 256, null, DEFAULT_CLOSE_TIMEOUT);
    }

    public RnicOptions threads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        return new RnicOptions(threads, transport, mpa, maxStags, maxSetups, capture, closeTimeout);
    }

    public RnicOptions transport(Transport transport) {
        return new RnicOptions(threads, Objects.requireNonNull(transport), mpa, maxStags, maxSetups, capture, closeTimeout);
    }

    /** The MPA settings for every connection (a queue pair's IRD and ORD replace the ones here). */
    public RnicOptions mpa(MpaSettings mpa) {
        return new RnicOptions(threads, transport, Objects.requireNonNull(mpa), maxStags, maxSetups, capture, closeTimeout);
    }

    public RnicOptions maxStags(int maxStags) {
        return new RnicOptions(threads, transport, mpa, maxStags, maxSetups, capture, closeTimeout);
    }

    /**
     * The most inbound connections a listener keeps in MPA setup at once (TCP accepted, no MPA
     * Request answered yet). Beyond it, new connections are closed at once and counted
     * ({@link RnicListener#refusedSetups()}): a flood of connections that never finish the handshake
     * costs at most this many pipelines, each of them dropped by the Request timeout.
     */
    public RnicOptions maxSetups(int maxSetups) {
        if (maxSetups < 1) {
            throw new IllegalArgumentException("maxSetups must be positive: " + maxSetups);
        }
        return new RnicOptions(threads, transport, mpa, maxStags, maxSetups, capture, closeTimeout);
    }

    public int maxSetups() {
        return maxSetups;
    }

    /**
     * Captures every connection of the RNIC (debugging; {@code null}, the default, turns it off and
     * installs nothing). Each connection writes {@code <directory>/<local-port>-<remote-port>.pcap}
     * (replacing a file of that name): synthetic Ethernet/IPv4 or IPv6/TCP frames with the real
     * addresses and ports, from a synthesized handshake to a FIN exchange, the MPA Request and Reply
     * and then one FPDU per TCP segment in both directions, so Wireshark decodes it (markers too).
     * Sequence numbers are synthetic: see {@code PcapCapture}. The directory is created if missing.
     */
    public RnicOptions capture(Path directory) {
        return new RnicOptions(threads, transport, mpa, maxStags, maxSetups, directory, closeTimeout);
    }

    /**
     * The most time closing a connection may take (3 s by default): a graceful disconnect waiting for
     * the work issued before it to reach TCP, a Terminate waiting to be written, and the half-close
     * that follows, waiting for the peer's close. A peer that stops reading cannot hold a connection
     * open past it: the connection is then aborted (a TCP reset, which frees what the kernel still
     * holds for it) and the queue pair flushed to ERROR.
     */
    public RnicOptions closeTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("closeTimeout must be positive: " + timeout);
        }
        return new RnicOptions(threads, transport, mpa, maxStags, maxSetups, capture, timeout);
    }

    public Duration closeTimeout() {
        return closeTimeout;
    }

    public int threads() {
        return threads;
    }

    public Transport transport() {
        return transport;
    }

    /**
     * Strict mode, one switch for the RFCs where jiwarp otherwise follows Linux siw: the MPA side
     * ({@link MpaSettings#strictRfc()}: CRCs by default, MULPDU capped, an unenhanced responder
     * closing on an enhanced Request) and the RDMAP side (a peer cannot invalidate a region that
     * serves every queue pair of its domain, RFC 5040 section 8.1.1 rule 7; a local error building
     * an outgoing request is reported to the peer with a Terminate sent instead of it, RFC 5040
     * section 7.1 rule 1). Off by default.
     */
    public RnicOptions strictRfc(boolean strict) {
        return mpa(mpa.toBuilder().strictRfc(strict).build());
    }

    /** Whether {@link #strictRfc(boolean) strict mode} is on. */
    public boolean strictRfc() {
        return mpa.strictRfc();
    }

    public MpaSettings mpa() {
        return mpa;
    }

    public int maxStags() {
        return maxStags;
    }

    /** The capture directory, or {@code null} when capture is off. */
    public Path capture() {
        return capture;
    }
}
