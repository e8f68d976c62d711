package org.jiwarp.cli.perftest;

import java.nio.file.Path;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MarkerPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.RnicOptions;
import picocli.CommandLine.Option;

/**
 * How {@code jiwarp perftest} sets up MPA, with the names the other connecting subcommands use
 * ({@code org.jiwarp.cli.ConnectionOptions} is package-private to {@code org.jiwarp.cli}, so this
 * package has its own copy; captures go to a directory, one file per connection).
 */
final class MpaOptions {

    @Option(names = "--crc", description = "Ask for MPA CRC-32C (RFC 5044 section 7.1: the peer must then use it). "
            + "Without it jiwarp accepts whatever the peer asks for.")
    boolean crc;

    @Option(names = "--markers", description = "Ask for MPA markers (RFC 5044 section 5.6; siw refuses them).")
    boolean markers;

    @Option(names = "--mpa-rev", paramLabel = "1|2", description = "MPA revision: 2 (RFC 6581 enhanced setup, "
            + "IRD/ORD exchange; the default) or 1 (RFC 5044).")
    int mpaRevision = 2;

    @Option(names = "--p2p", description = "Client: peer-to-peer mode (RFC 6581 section 5), the first FPDU of each "
            + "connection a zero-length RTR frame. Needs --mpa-rev 2.")
    boolean peerToPeer;

    @Option(names = "--pcap-dir", paramLabel = "DIR", description = "Record each connection's traffic in "
            + "DIR/<local-port>-<remote-port>.pcap (one FPDU per TCP segment, for Wireshark and jiwarp decode).")
    Path pcapDirectory;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", description = "Socket transport: native epoll "
            + "where available (auto, the default), or NIO.")
    RnicOptions.Transport transport = RnicOptions.Transport.AUTO;

    /** The RNIC options these describe. */
    RnicOptions rnicOptions() {
        if (mpaRevision != 1 && mpaRevision != 2) {
            throw new IllegalArgumentException("--mpa-rev must be 1 or 2, not " + mpaRevision);
        }
        if (peerToPeer && mpaRevision != 2) {
            throw new IllegalArgumentException("--p2p needs --mpa-rev 2");
        }
        MpaSettings base = RnicOptions.defaults().mpa();
        MpaSettings mpa = base.toBuilder().revision(mpaRevision).enhanced(mpaRevision == 2)
                .crc(crc ? CrcPolicy.REQUIRE : CrcPolicy.ACCEPT)
                .markers(markers ? MarkerPolicy.REQUEST : MarkerPolicy.ACCEPT).peerToPeer(peerToPeer).build();
        return RnicOptions.defaults().threads(1).transport(transport).mpa(mpa).capture(pcapDirectory);
    }

    String describe() {
        return "MPA rev " + mpaRevision + (crc ? ", CRC" : "") + (markers ? ", markers" : "")
                + (peerToPeer ? ", peer-to-peer" : "");
    }
}
