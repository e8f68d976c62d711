package org.jiwarp.cli.perftest;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags of perftest 4.5's {@code ib_*_bw} and {@code ib_*_lat} ({@code long_options} and the
 * {@code getopt_long} string of {@code perftest_parameters.c}, tag {@code v4.5-0.17}) that
 * {@code jiwarp perftest} does not run, each with the reason. They are real options of the command
 * (hidden from the help), taking a value where perftest's take one: so {@code -x 3 HOST} is the
 * refused {@code -x} and the HOST, never an unknown option followed by a stray HOST.
 *
 * <p>The flags jiwarp runs, or accepts because it always does what they ask, are
 * {@link PerftestCommand}'s own options; {@code -a}, {@code -D}, {@code --run_infinitely},
 * {@code -q} above 1, {@code -H}, {@code -U} and {@code -C} are refused there.
 */
public final class PerftestFlags implements CommandLine.IModelTransformer {

    /**
     * A refused flag.
     *
     * @param names    perftest's names for it (short first)
     * @param argument whether it takes a value
     * @param what     what it does in perftest, a few words
     * @param why      why jiwarp does not do it: the rest of the sentence after "is not implemented
     *                 here: " or after "does not apply here: ", as {@link #applies} says
     * @param applies  whether it could mean something for iWARP ("is not implemented here") or not
     *                 ("does not apply here")
     */
    record Flag(List<String> names, boolean argument, String what, String why, boolean applies) {

        /** The sentence refusing it as given (by {@code given}, one of its names). */
        String sentence(String given) {
            return given + " (" + what + ") " + (applies ? "is not implemented here: " : "does not apply here: ") + why;
        }
    }

    private static final String RAW_ETHERNET = "it belongs to perftest's raw Ethernet tests (raw_ethernet_bw), "
            + "and jiwarp runs RDMA over TCP connections";
    private static final String RATE = "jiwarp's perftest sends as fast as the queue depth allows";
    private static final String MEMORY = "jiwarp registers ordinary direct buffers in its software RNIC";
    private static final String INFINIBAND = "it is an InfiniBand or RoCE path attribute, and iWARP runs over TCP/IP";

    /** Every refused flag; {@link PerftestCommand} adds them as options. */
    static final List<Flag> FLAGS = List.of(
            flag("-d", "--ib-dev", true, "the device", "jiwarp is one software RNIC, with no device to choose", false),
            flag("-i", "--ib-port", true, "the device port", "jiwarp's RNIC has no ports: the connection's IP "
                    + "address picks the way", false),
            flag("-m", "--mtu", true, "the path MTU", "iWARP has no RDMA MTU: TCP sizes the segments and jiwarp "
                    + "sizes its FPDUs to the MSS (the banner's Mtu line is the value perftest exchanges)", false),
            flag("-x", "--gid-index", true, "the GID index", "iWARP has no GIDs, and names the peer by its IP "
                    + "address (HOST)", false),
            flag("-u", "--qp-timeout", true, "the QP's retransmission timeout", "TCP retransmits for iWARP, so there "
                    + "is no QP timeout to set", false),
            flag("-S", "--sl", true, "the service level", INFINIBAND, false),
            flag("-e", "--events", false, "waiting on completion events", "jiwarp's perftest waits on its completion "
                    + "queues one way only", true),
            flag("-X", "--vector", true, "the completion vector", "it goes with -e, which is not implemented", true),
            flag("-I", "--inline_size", true, "inline data", "jiwarp's RNIC has no inline sends: every message is "
                    + "read from its registered buffer (the banner's Max inline data is 0)", true),
            flag("-g", "--mcg", false, "multicast", "multicast is for unreliable datagrams, and iWARP has only "
                    + "reliable connections", false),
            flag("-M", "--MGID", true, "the multicast group", "multicast is for unreliable datagrams, and iWARP has "
                    + "only reliable connections", false),
            flag("-T", "--tos", true, "the type of service", "jiwarp does not set the IP type of service of its "
                    + "connections", true),
            flag("-L", "--hop_limit", true, "the hop limit", INFINIBAND, false),
            flag("-b", "--bidirectional", false, "a bidirectional run", "jiwarp's perftest moves data one way per "
                    + "run; run a second pair of jiwarp perftest ends the other way (another -p)", true),
            flag("-A", "--atomic_type", true, "the atomic operation", "ib_atomic_bw is not among jiwarp's perftest "
                    + "programs; jiwarp bench --op atomic measures RFC 7306 atomics", true),
            flag("-O", "--dualport", false, "two device ports", "jiwarp's RNIC has no ports", false),
            flag("-f", "--margin", true, "the margin of a timed run", "it goes with -D, and runs here are counted by "
                    + "-n", true),
            flag("-B", "--source_mac", true, "the source MAC address", RAW_ETHERNET, false),
            flag("-E", "--dest_mac", true, "the destination MAC address", RAW_ETHERNET, false),
            flag("-J", "--dest_ip", true, "the destination IP address", RAW_ETHERNET + " (give HOST)", false),
            flag("-j", "--source_ip", true, "the source IP address", RAW_ETHERNET, false),
            flag("-K", "--dest_port", true, "the destination UDP port", RAW_ETHERNET + " (the port is -p)", false),
            flag("-k", "--source_port", true, "the source UDP port", RAW_ETHERNET, false),
            flag("-Y", "--ethertype", true, "the Ethertype", RAW_ETHERNET, false),
            flag("-w", "--limit_bw", true, "a bandwidth limit to check", RATE, true),
            flag("-y", "--limit_msgrate", true, "a message rate limit to check", RATE, true),
            flag("-P", "--client", false, "the client role of raw Ethernet tests", "the client is the end given a "
                    + "HOST", false),
            flag("-v", "--mac_fwd", false, "MAC forwarding", RAW_ETHERNET, false),
            flag("-G", "--use_rss", false, "receive side scaling", RAW_ETHERNET, false),
            flag("-W", "--report-counters", true, "the device's hardware counters", "a software RNIC has no "
                    + "hardware counters", false),
            flag(null, "--force-link", true, "the link type", "the link is always Ethernet (TCP/IP)", false),
            flag(null, "--remote_mac", true, "the remote MAC address", RAW_ETHERNET, false),
            flag(null, "--local_mac", true, "the local MAC address", RAW_ETHERNET, false),
            flag(null, "--remote_ip", true, "the remote IP address", RAW_ETHERNET + " (give HOST)", false),
            flag(null, "--local_ip", true, "the local IP address", RAW_ETHERNET, false),
            flag(null, "--remote_port", true, "the remote UDP port", RAW_ETHERNET, false),
            flag(null, "--local_port", true, "the local UDP port", RAW_ETHERNET, false),
            flag(null, "--use-srq", false, "a shared receive queue", "jiwarp's RNIC has no shared receive queues",
                    true),
            flag(null, "--report-both", false, "both directions' reports", "it goes with -b, which is not "
                    + "implemented", true),
            flag(null, "--reversed", false, "traffic from the server to the client", "the client always sends here; "
                    + "swap the two ends' roles instead", true),
            flag(null, "--pkey_index", true, "the partition key", INFINIBAND, false),
            flag(null, "--inline_recv", true, "inline receives", "jiwarp's RNIC has no inline data", true),
            flag(null, "--tcp", false, "TCP headers in raw Ethernet packets", RAW_ETHERNET, false),
            flag(null, "--burst_size", true, "the rate limiter's burst", RATE, true),
            flag(null, "--typical_pkt_size", true, "the rate limiter's packet size", RATE, true),
            flag(null, "--rate_limit", true, "a rate limit", RATE, true),
            flag(null, "--rate_limit_type", true, "the rate limiter", RATE, true),
            flag(null, "--rate_units", true, "the rate limit's units", RATE, true),
            flag(null, "--output", true, "printing one figure only", "jiwarp prints perftest's whole report (and "
                    + "jiwarp bench --json prints figures for machines)", true),
            flag(null, "--cpu_util", false, "the CPU utilisation", "jiwarp does not sample the CPU counters", true),
            flag(null, "--out_json", false, "the report as JSON", "jiwarp bench --json prints figures as JSON", true),
            flag(null, "--out_json_file", true, "the JSON report's file", "jiwarp bench --json prints figures as JSON",
                    true),
            flag(null, "--latency_gap", true, "a pause between latency samples", "jiwarp's ib_write_lat ping-pongs "
                    + "without pauses", true),
            flag(null, "--flow_label", true, "the flow label", INFINIBAND, false),
            flag(null, "--retry_count", true, "the QP's retry count", "TCP retransmits for iWARP, so there is no "
                    + "retry count to set", false),
            flag(null, "--dont_xchg_versions", false, "skipping the version exchange", "jiwarp needs it: both ends "
                    + "check there that they run the same test", true),
            flag(null, "--use_cuda", true, "GPU memory", MEMORY, false),
            flag(null, "--use_cuda_bus_id", true, "GPU memory", MEMORY, false),
            flag(null, "--use_rocm", true, "GPU memory", MEMORY, false),
            flag(null, "--mmap", true, "memory mapped from a file", MEMORY, true),
            flag(null, "--mmap-offset", true, "the offset in the mapped file", MEMORY, true),
            flag(null, "--ipv6", false, "IPv6 GIDs", "iWARP has no GIDs, so give an IPv6 address as HOST "
                    + "or --bind",
                    false),
            flag(null, "--raw_ipv6", false, "IPv6 raw Ethernet packets", RAW_ETHERNET, false),
            flag(null, "--report-per-port", false, "a report per port", "jiwarp's RNIC has no ports", false),
            flag(null, "--odp", false, "on-demand paging", MEMORY + ", always pinned", false),
            flag(null, "--use_hugepages", false, "huge pages", MEMORY, true),
            flag(null, "--use_old_post_send", false, "the old post-send verb", "jiwarp's RNIC has one way to post",
                    false),
            flag(null, "--promiscuous", false, "promiscuous mode", RAW_ETHERNET, false),
            flag(null, "--sniffer", false, "sniffer mode", RAW_ETHERNET + " (jiwarp's --pcap records the traffic)",
                    false),
            flag(null, "--raw_mcast", false, "raw multicast", RAW_ETHERNET, false),
            flag(null, "--mr_per_qp", false, "a memory region per QP", "a run has one test queue pair, so its one "
                    + "region is already the QP's own", false),
            flag(null, "--dlid", true, "the destination LID", INFINIBAND, false),
            flag(null, "--tclass", true, "the traffic class", INFINIBAND, false),
            flag(null, "--wait_destroy", true, "a pause before destroying resources", "jiwarp tears down as soon as "
                    + "the run ends", true),
            flag(null, "--flows", true, "several flows", RAW_ETHERNET, false),
            flag(null, "--flows_burst", true, "the flows' burst", RAW_ETHERNET, false),
            flag(null, "--reply_every", true, "pongs every N pings", "jiwarp's ib_write_lat answers every Write",
                    true),
            flag(null, "--vlan_en", false, "VLAN tags", RAW_ETHERNET, false),
            flag(null, "--vlan_pcp", true, "the VLAN priority", RAW_ETHERNET, false),
            flag(null, "--recv_post_list", true, "receive post lists", "jiwarp's RNIC posts receives one at a time",
                    true),
            flag(null, "--use_cuda_dmabuf", false, "GPU memory", MEMORY, false),
            flag(null, "--use_rocm_dmabuf", false, "GPU memory", MEMORY, false),
            flag(null, "--use-null-mr", false, "the null memory region", MEMORY, false),
            flag(null, "--aes_xts", false, "AES-XTS encryption offload", "jiwarp's RNIC has no crypto offload",
                    false),
            flag(null, "--use_ooo", false, "out-of-order placement", "iWARP places out of order by design (DDP "
                    + "tagged placement); there is nothing to switch on", false));

    private static Flag flag(String shortName, String longName, boolean argument, String what, String why,
            boolean applies) {
        return new Flag(shortName == null ? List.of(longName) : List.of(shortName, longName), argument, what, why,
                applies);
    }

    @Override
    public CommandSpec transform(CommandSpec spec) {
        for (Flag flag : FLAGS) {
            spec.addOption(OptionSpec.builder(flag.names().toArray(String[]::new))
                    .arity(flag.argument() ? "1" : "0")
                    .type(flag.argument() ? String.class : boolean.class)
                    .paramLabel("VALUE")
                    .hidden(true)
                    .description("Refused: " + flag.sentence(flag.names().get(0)) + ".")
                    .build());
        }
        return spec;
    }

    /**
     * The sentence refusing the first of these flags on the command line, or {@code null} when none
     * was given.
     */
    static String refusal(CommandLine.ParseResult parsed) {
        for (String arg : parsed.originalArgs()) {
            String name = arg.contains("=") && arg.startsWith("--") ? arg.substring(0, arg.indexOf('=')) : arg;
            for (Flag flag : FLAGS) {
                if (flag.names().contains(name) && parsed.hasMatchedOption(flag.names().get(0))) {
                    return flag.sentence(name);
                }
            }
        }
        // Given in a form the loop above does not spell out (a cluster of short flags).
        for (Flag flag : FLAGS) {
            if (parsed.hasMatchedOption(flag.names().get(0))) {
                return flag.sentence(flag.names().get(0));
            }
        }
        return null;
    }
}
