package org.jiwarp.conform;

import static org.jiwarp.conform.Expect.carriesOn;
import static org.jiwarp.conform.Expect.terminate;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_AND_READ_REQUEST;
import static org.jiwarp.conform.peer.TerminateCheck.Carried.DDP_HEADER;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_TAGGED_TO_WRAP;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER;
import static org.jiwarp.wire.rdmap.TerminateError.DDP_UNTAGGED_INVALID_MSN_RANGE;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_INVALID_STAG;
import static org.jiwarp.wire.rdmap.TerminateError.RDMAP_TO_WRAP;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jiwarp.conform.peer.Ulpdus;

/**
 * The cases of the {@link Group#PERFTEST} group: the region perftest {@code -R} registered, whose
 * STag, address and length its exchange gives ({@link PerftestExchange}). ib_write_bw registers it
 * for remote write only, ib_read_bw for remote read and (iWARP) remote write; neither posts a
 * receive on the test connection.
 */
final class PerftestCases {

    /** A Write or Read of the whole region travels in segments of this many octets. */
    static final int SEGMENT = 8192;

    private static final Set<Program> BOTH = EnumSet.of(Program.IB_WRITE_BW, Program.IB_READ_BW);
    private static final Set<Program> READ = EnumSet.of(Program.IB_READ_BW);
    private static final Set<Program> WRITE = EnumSet.of(Program.IB_WRITE_BW);
    private static final int P = PerftestExchange.PROBE_SIZE;

    private PerftestCases() {
    }

    private static ConformCase c(String name, Role role, Set<Program> programs, String section,
            ConformCase.Action action, Expect expect) {
        return new ConformCase(name, Group.PERFTEST, role, programs, section, ConformCase.Setup.CRC, action, expect);
    }

    private static byte[] readOf(Session s, long sourceTo, long size) {
        return Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, size, s.stag, sourceTo);
    }

    static void add(List<ConformCase> e) {
        writes(e);
        reads(e);
        e.add(c("perftest-send-without-a-receive", null, BOTH, "RFC 5041 7.1 (untagged 2: no buffer; 3: MSN range)",
                s -> s.sendOffending(Ulpdus.send(1, 16)),
                terminate(List.of(DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, DDP_UNTAGGED_INVALID_MSN_RANGE),
                        List.of(DDP_HEADER))));
    }

    // RFC 5041 8.3.1 rule 3 (base and bounds), RFC 5041 7.1 (tagged errors): Writes.

    private static void writes(List<ConformCase> e) {
        e.add(c("perftest-write-first-octets", null, BOTH, "RFC 5041 8.3.1 rule 3 (inclusive bounds)",
                s -> s.sendGood(Ulpdus.write(s.stag, s.to, P)),
                carriesOn("a Write of the region's first " + P + " octets is placed silently")));
        e.add(c("perftest-write-last-octets", null, BOTH, "RFC 5041 8.3.1 rule 3 (inclusive bounds)",
                s -> s.sendGood(Ulpdus.write(s.stag, s.to + s.length - P, P)),
                carriesOn("a Write of the region's last " + P + " octets is placed silently")));
        e.add(c("perftest-write-whole-region", null, BOTH, "RFC 5041 8.3.1 rule 3, 5.2 (a message in segments)",
                s -> {
                    for (byte[] segment : PerftestExchange.writeSegments(s.stag, s.to, s.length, SEGMENT)) {
                        s.sendGood(segment);
                    }
                },
                carriesOn("a Write of the whole region, in " + SEGMENT + "-octet segments, is placed silently")));
        e.add(c("perftest-write-one-past-the-end", null, BOTH, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3",
                s -> s.sendOffending(Ulpdus.write(s.stag, s.to + s.length - P + 1, P)),
                terminate(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, DDP_HEADER)));
        e.add(c("perftest-write-starting-at-the-end", null, BOTH, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3",
                s -> s.sendOffending(Ulpdus.write(s.stag, s.to + s.length, 1)),
                terminate(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, DDP_HEADER)));
        e.add(c("perftest-write-before-the-base", null, BOTH, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3",
                s -> s.sendOffending(Ulpdus.write(s.stag, s.to - 1, P)),
                terminate(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, DDP_HEADER)));
        e.add(c("perftest-write-whole-region-plus-one", null, BOTH, "RFC 5041 7.1 (tagged 4), 8.3.1 rule 3, 5.2",
                s -> {
                    List<byte[]> segments = PerftestExchange.writeSegments(s.stag, s.to, s.length + 1, SEGMENT);
                    for (byte[] segment : segments.subList(0, segments.size() - 1)) {
                        s.sendGood(segment);
                    }
                    s.sendOffending(segments.get(segments.size() - 1));
                },
                terminate(DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, DDP_HEADER)));
        e.add(c("perftest-write-to-wraps", null, BOTH, "RFC 5041 7.1 (tagged 5: TO wrap; 4: bounds)",
                s -> s.sendOffending(Ulpdus.write(s.stag, -4L, P)),
                terminate(List.of(DDP_TAGGED_TO_WRAP, DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION), List.of(DDP_HEADER))));
        e.add(c("perftest-write-with-a-wrong-stag-key", null, BOTH, "RFC 5041 7.1 (tagged 1), 8.3.1",
                s -> s.sendOffending(Ulpdus.write(s.stag ^ 0x01, s.to, P)),
                terminate(DDP_TAGGED_INVALID_STAG, DDP_HEADER)));
    }

    // RFC 5040 5.2.1, 5.2.2, 7.2 (Remote Protection Errors): Reads of the region.

    private static void reads(List<ConformCase> e) {
        e.add(c("perftest-read-of-a-write-only-region", Role.TARGET_LISTENS, WRITE,
                "RFC 5040 7.2 (Remote Protection 0x02), 4.8 (R)",
                s -> s.sendOffending(readOf(s, s.to, P)),
                terminate(RDMAP_ACCESS_RIGHTS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(c("perftest-read-first-octets", null, READ, "RFC 5040 5.2.1, 5.2.2",
                s -> s.sendGood(readOf(s, s.to, P)),
                Expect.answersReadInFull("a Read Response of the region's first " + P + " octets", P)));
        e.add(c("perftest-read-last-octets", null, READ, "RFC 5040 5.2.1, 5.2.2 (inclusive bounds)",
                s -> s.sendGood(readOf(s, s.to + s.length - P, P)),
                Expect.answersReadInFull("a Read Response of the region's last " + P + " octets", P)));
        e.add(c("perftest-read-whole-region", null, READ, "RFC 5040 5.2.1, 5.2.2 (a Read of the whole source)",
                s -> s.sendGood(readOf(s, s.to, s.length)),
                Expect.answersReadInFull("Read Responses of the whole region, the last with L set", -1)));
        e.add(c("perftest-read-one-past-the-end", null, READ, "RFC 5040 7.2 (Remote Protection 0x01), 4.8 (R)",
                s -> s.sendOffending(readOf(s, s.to + s.length - P + 1, P)),
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(c("perftest-read-whole-region-plus-one", null, READ, "RFC 5040 7.2 (Remote Protection 0x01), 4.8 (R)",
                s -> s.sendOffending(readOf(s, s.to, s.length + 1)),
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(c("perftest-read-before-the-base", null, READ, "RFC 5040 7.2 (Remote Protection 0x01), 4.8 (R)",
                s -> s.sendOffending(readOf(s, s.to - 1, P)),
                terminate(RDMAP_BASE_OR_BOUNDS_VIOLATION, DDP_AND_READ_REQUEST)));
        e.add(c("perftest-read-to-wraps", null, READ, "RFC 5040 7.2 (Remote Protection 0x04 TO wrap; 0x01)",
                s -> s.sendOffending(readOf(s, -4L, P)),
                terminate(List.of(RDMAP_TO_WRAP, RDMAP_BASE_OR_BOUNDS_VIOLATION), List.of(DDP_AND_READ_REQUEST))));
        e.add(c("perftest-read-with-a-wrong-stag-key", null, READ, "RFC 5040 7.2 (Remote Protection 0x00), 4.8 (R)",
                s -> s.sendOffending(Ulpdus.readRequest(s.nextReadMsn, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, P,
                        s.stag ^ 0x01, s.to)),
                terminate(RDMAP_INVALID_STAG, DDP_AND_READ_REQUEST)));
    }
}
