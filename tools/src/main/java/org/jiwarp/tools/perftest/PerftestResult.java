package org.jiwarp.tools.perftest;

import org.jiwarp.wire.perftest.PingpongDest;

/**
 * What one perftest run did at this end.
 *
 * @param parameters  the run's parameters
 * @param server      whether this end was the server
 * @param peerVersion the perftest version the peer announced
 * @param local       what this end advertised in the key handshakes
 * @param remote      what the peer advertised
 * @param operations  operations this end completed: Writes, Reads or Sends posted and completed by
 *                    a client, Sends received by an ib_send_bw server, Writes both ways in
 *                    ib_write_lat (this end's own); 0 for an ib_write_bw or ib_read_bw server,
 *                    which only watches
 * @param completions work completions this end took for them (fewer with CQ moderation)
 * @param bandwidth   the bandwidth report this end printed (for an ib_write_bw or ib_read_bw
 *                    server: the client's, as perftest prints it); {@code null} for latency
 * @param latencies   the latency report; {@code null} for bandwidth
 * @param checks      what this end verified beyond the completions, in words
 * @param dataDigest  CRC-32C of the message slots this end's data ended up in (see the package
 *                    javadoc), or -1 where this end cannot know them
 */
public record PerftestResult(PerftestParameters parameters, boolean server, String peerVersion, PingpongDest local,
        PingpongDest remote, long operations, long completions, BwReport bandwidth, LatencyReport latencies,
        String checks, long dataDigest) {
}
