package org.jiwarp.rnic;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Objects;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;

/**
 * How an {@link Rnic} runs: its event loop threads and transport, the MPA settings its connections
 * use (IRD/ORD come from each queue pair), how many STags it can hold, and whether its connections
 * are captured to pcap files.
 */
public final class RnicOptions {

    /** The socket transport. */
    public enum Transport {
        /** Native epoll when the platform has it, else NIO. */
        AUTO,
        NIO,
        EPOLL
    }

    private int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
    private Transport transport = Transport.AUTO;
    private MpaSettings mpa = MpaSettings.builder().rtrOffers(EnumSet.of(RtrType.WRITE, RtrType.READ)).build();
    private int maxStags = 1 << 16;
    private int maxSetups = 256;
    private Path capture;

    public static RnicOptions defaults() {
        return new RnicOptions();
    }

    public RnicOptions threads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        this.threads = threads;
        return this;
    }

    public RnicOptions transport(Transport transport) {
        this.transport = Objects.requireNonNull(transport);
        return this;
    }

    /** The MPA settings for every connection (a queue pair's IRD and ORD replace the ones here). */
    public RnicOptions mpa(MpaSettings mpa) {
        this.mpa = Objects.requireNonNull(mpa);
        return this;
    }

    public RnicOptions maxStags(int maxStags) {
        this.maxStags = maxStags;
        return this;
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
        this.maxSetups = maxSetups;
        return this;
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
        this.capture = directory;
        return this;
    }

    public int threads() {
        return threads;
    }

    public Transport transport() {
        return transport;
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
