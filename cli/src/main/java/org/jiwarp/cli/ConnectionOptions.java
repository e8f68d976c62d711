package org.jiwarp.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MarkerPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.tools.Failures;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * The options every connecting subcommand shares (a picocli mixin): how MPA is set up, which
 * transport carries it and where its traffic is recorded.
 */
public final class ConnectionOptions {

    @Option(names = "--crc", description = "Ask for MPA CRC-32C (RFC 5044 section 7.1: the peer must then use it). "
            + "Without it jiwarp accepts whatever the peer asks for.")
    boolean crc;

    @Option(names = "--markers", description = "Ask for MPA markers (RFC 5044 section 5.6).")
    boolean markers;

    @Option(names = "--mpa-rev", paramLabel = "1|2", description = "MPA revision: 2 (RFC 6581 enhanced setup, "
            + "IRD/ORD exchange; the default) or 1 (RFC 5044).")
    int mpaRevision = 2;

    @Option(names = "--p2p", description = "Peer-to-peer mode (RFC 6581 section 5): the initiator's first FPDU "
            + "is a zero-length ready-to-receive frame (Write or Read RTR). Needs --mpa-rev 2.")
    boolean peerToPeer;

    @Option(names = "--emss", paramLabel = "OCTETS", description = "Size FPDUs for this TCP maximum segment size "
            + "(RFC 5044 section 5.2) instead of Ethernet's 1460 (bench: instead of 64 KiB FPDUs); loopback's is 65483.")
    Integer emss;

    @Option(names = "--pcap", paramLabel = "FILE", description = "Record the iWARP connections' traffic in FILE "
            + "(one FPDU per TCP segment, for Wireshark and jiwarp decode), written also when the run is stopped "
            + "with Ctrl-C.")
    Path pcap;

    /**
     * Whole segments by default: tshark (4.0) and jiwarp decode cannot read an FPDU whose end was
     * cut (tshark shows "MPA FPDU [Packet size limited during capture]", not its DDP and RDMAP
     * headers), so a cut is for when the file's size matters more than its data FPDUs.
     */
    @Option(names = "--snaplen", paramLabel = "OCTETS", description = "With --pcap: keep the headers and this many "
            + "octets of each segment's TCP payload (128 keeps the MPA, DDP and RDMAP headers; default "
            + "${DEFAULT-VALUE}: whole segments). An FPDU that is cut shows in tshark and jiwarp decode as a "
            + "truncated MPA FPDU, without its DDP and RDMAP fields.")
    int snapLength = 0;

    private Thread captureHook;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = TransportChoices.class,
            completionCandidates = TransportChoices.class, description = "Socket transport: native epoll "
            + "where available (auto, the default), or NIO.")
    RnicOptions.Transport transport = RnicOptions.Transport.AUTO;

    /** What {@code --transport} takes. */
    static final class TransportChoices extends OptionChoices<RnicOptions.Transport> {
        TransportChoices() {
            super(RnicOptions.Transport.class, "auto", "epoll", "nio");
        }
    }

    /**
     * Checks these options against each other; a bad combination is a usage error (exit 2) that
     * names the options.
     */
    public void validate(CommandLine line) {
        if (mpaRevision != 1 && mpaRevision != 2) {
            throw new CommandLine.ParameterException(line, "--mpa-rev must be 1 or 2, not " + mpaRevision);
        }
        if (peerToPeer && mpaRevision != 2) {
            throw new CommandLine.ParameterException(line, "--p2p needs --mpa-rev 2 (RFC 6581 peer-to-peer mode "
                    + "is negotiated in the enhanced setup)");
        }
        if (emss != null && (emss < 128 || emss > 65535)) {
            throw new CommandLine.ParameterException(line, "--emss must be 128 to 65535, not " + emss);
        }
        if (snapLength < 0 || snapLength > 262_144) {
            throw new CommandLine.ParameterException(line, "--snaplen must be 0 (whole segments) to 262144, not "
                    + snapLength);
        }
    }

    /** A usage error unless {@code port} is a TCP port: 1 to 65535, or 0 too when {@code zeroAllowed}. */
    public static void checkPort(CommandLine line, String option, int port, boolean zeroAllowed) {
        if (port < (zeroAllowed ? 0 : 1) || port > 65535) {
            throw new CommandLine.ParameterException(line, option + " must be a TCP port, " + (zeroAllowed ? 0 : 1)
                    + " to 65535, not " + port);
        }
    }

    /** The MPA settings these options describe, on top of {@code base}. */
    public MpaSettings.Builder mpa(MpaSettings base) {
        if (mpaRevision != 1 && mpaRevision != 2) {
            throw new IllegalArgumentException("--mpa-rev must be 1 or 2, not " + mpaRevision);
        }
        if (peerToPeer && mpaRevision != 2) {
            throw new IllegalArgumentException("--p2p needs --mpa-rev 2");
        }
        MpaSettings.Builder mpa = base.toBuilder().revision(mpaRevision).enhanced(mpaRevision == 2)
                .crc(crc ? CrcPolicy.REQUIRE : CrcPolicy.ACCEPT)
                .markers(markers ? MarkerPolicy.REQUEST : MarkerPolicy.ACCEPT).peerToPeer(peerToPeer);
        return emss == null ? mpa : mpa.emss(emss);
    }

    /** An RNIC with these options, {@code threads} event loops, capturing into {@code capture} (or not). */
    public RnicOptions rnicOptions(int threads, Path capture) {
        return RnicOptions.defaults().threads(threads).transport(transport)
                .mpa(mpa(RnicOptions.defaults().mpa()).build()).capture(capture);
    }

    public String describe() {
        return "MPA rev " + mpaRevision + (crc ? ", CRC" : "") + (markers ? ", markers" : "")
                + (peerToPeer ? ", peer-to-peer" : "");
    }

    /**
     * A directory for the per-connection captures that {@link #mergeCapture} then joins, or
     * {@code null} without {@code --pcap}. A shutdown hook merges and removes it if the process is
     * stopped (Ctrl-C) before {@link #mergeCapture} runs.
     *
     * @throws IOException when the directory of {@code --pcap FILE} does not exist (it is not created)
     */
    public Path captureDirectory() throws IOException {
        if (pcap == null) {
            return null;
        }
        Path parent = pcap.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new IOException("cannot write --pcap " + pcap + ": the directory " + parent + " does not exist");
        }
        if (Files.isDirectory(pcap)) {
            throw new IOException("cannot write --pcap " + pcap + ": it is a directory");
        }
        Path directory = Files.createTempDirectory("jiwarp-pcap");
        Thread hook = new Thread(() -> mergeOnTheWayOut(directory, System.err), "jiwarp-pcap-merge");
        Runtime.getRuntime().addShutdownHook(hook);
        captureHook = hook;
        return directory;
    }

    /**
     * The shutdown hook's merge (Ctrl-C): a line at once, since merging a large capture takes a
     * while, and one when it is done saying what was written, or what went wrong.
     */
    void mergeOnTheWayOut(Path directory, java.io.PrintStream err) {
        err.println("jiwarp: stopped; merging the capture into " + pcap + " ...");
        err.flush();
        try {
            PcapMerge.Merged merged = joinAndRemove(directory);
            if (merged != null) {
                err.println("jiwarp: wrote " + merged.describe());
            }
        } catch (PcapMerge.DiskFullException e) {
            err.println("jiwarp: " + e.getMessage());
        } catch (IOException e) {
            err.println("jiwarp: could not write " + pcap + " on the way out: " + Failures.describe(e));
        }
        err.flush();
    }

    /** Joins the per-connection captures into {@code --pcap FILE}, in time order, and removes the directory. */
    public void mergeCapture(Path directory) throws IOException {
        if (directory == null) {
            return;
        }
        if (captureHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(captureHook);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running or about to: it does the merge.
                return;
            }
            captureHook = null;
        }
        joinAndRemove(directory);
    }

    /** The merge, or {@code null} when it was done already (by the hook or the command). */
    private synchronized PcapMerge.Merged joinAndRemove(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            return null;
        }
        try {
            return PcapMerge.merge(directory, pcap, snapLength);
        } finally {
            try (Stream<Path> files = Files.walk(directory)) {
                for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
