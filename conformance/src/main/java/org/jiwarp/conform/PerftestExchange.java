package org.jiwarp.conform;

import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.perftest.PerftestWire;
import org.jiwarp.wire.perftest.PingpongDest;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * jiwarp conform's end of perftest's {@code -R} exchange (see {@code org.jiwarp.cli.perftest}'s
 * package description): the control connection carries the version, the system data, the MTU and
 * the handshakes of {@code struct pingpong_dest}; the test connection is the one the cases abuse.
 * The target's key handshake names its data buffer's receive half ({@code vaddr}, {@code rkey});
 * the region perftest registered is both halves:
 *
 * <pre>
 *   base = vaddr - BUFF_SIZE          vaddr                      base + 2 x INC(BUFF_SIZE)
 *   | send half                        | receive half              |
 * </pre>
 *
 * where BUFF_SIZE is the larger of the message size ({@code -s}, which the exchange does not carry:
 * {@code --size}) and the larger page size of the two ends, and INC rounds up to the larger cache
 * line. The case runs while the target waits for the next handshake (a perftest server before its
 * client's run ends; a perftest client after its run), so nothing else crosses the test connection.
 */
final class PerftestExchange {

    /** The Tagged Offset and STag this end advertises (never registered: the target's own run may address them). */
    private static final int OWN_RKEY = Session.PEER_SINK_STAG;
    private static final long OWN_VADDR = Session.PEER_SINK_TO;
    /** perftest's key handshakes: "keys", "remote keys", "after RTR". */
    private static final int KEY_HANDSHAKES = 3;
    /** A perftest client's run on the test connection is over when it has been quiet this long. */
    private static final long QUIET_MILLIS = 300;
    /**
     * perftest's client retries its test connection 10 times, 100 ms apart; this end is more patient,
     * with either connection.
     */
    private static final int CONNECTION_ATTEMPTS = 20;
    private static final long CONNECTION_RETRY_MILLIS = 200;
    /** Write and Read probes move this many octets. */
    static final int PROBE_SIZE = 8;

    private PerftestExchange() {
    }

    /** Opens the connection after the control connection: the runner connects or accepts it. */
    @FunctionalInterface
    interface NextConnection {
        Socket open() throws Exception;
    }

    /**
     * Plays perftest's exchange from MPA setup on {@code controlSocket} to the last key handshake
     * and returns the test connection's session, its region learned.
     */
    static Session open(Role role, Program program, int messageSize, boolean crc, Socket controlSocket,
            NextConnection next, long timeoutMillis, long firstFpduPauseMillis) throws Exception {
        boolean client = role == Role.TARGET_LISTENS;
        Session control = new Session(role, controlSocket, timeoutMillis, firstFpduPauseMillis);
        Session test = null;
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    setUp(control, crc);
                    break;
                } catch (Session.SetupRefused | java.io.IOException e) {
                    // A perftest server that is between runs (behind a NAT that accepts for it) closes at once.
                    control.close();
                    if (role != Role.TARGET_LISTENS || attempt == CONNECTION_ATTEMPTS) {
                        throw e;
                    }
                    Thread.sleep(CONNECTION_RETRY_MILLIS);
                    Socket again = next.open();
                    if (again == null) {
                        throw new Session.SetupRefused("the target's perftest server did not come back");
                    }
                    control = new Session(role, again, timeoutMillis, firstFpduPauseMillis);
                }
            }
            byte[] version = exchange(control, PerftestWire.version(PerftestWire.VERSION), PerftestWire.VERSION_LENGTH,
                    "perftest's version");
            int page = Math.max(PerftestWire.PAGE_SIZE, PerftestWire.int32(exchange(control,
                    PerftestWire.int32(PerftestWire.PAGE_SIZE), PerftestWire.INT_LENGTH, "perftest's cycle buffer")));
            int cacheLine = Math.max(PerftestWire.CACHE_LINE_SIZE, PerftestWire.int32(exchange(control,
                    PerftestWire.int32(PerftestWire.CACHE_LINE_SIZE), PerftestWire.INT_LENGTH,
                    "perftest's cache line size")));
            exchange(control, PerftestWire.mtu(PerftestWire.IBV_MTU_4096), PerftestWire.MTU_LENGTH, "perftest's MTU");
            handshake(control, PingpongDest.zero(), "perftest's first handshake");
            for (int attempt = 1; test == null; attempt++) {
                Socket testSocket = next.open();
                if (testSocket == null) {
                    throw new Session.SetupRefused("the target's perftest (version " + PerftestWire.cString(version)
                            + ") did not open its test connection");
                }
                Session opened = new Session(role, testSocket, timeoutMillis, firstFpduPauseMillis);
                try {
                    setUp(opened, crc);
                    test = opened;
                } catch (Session.SetupRefused | java.io.IOException e) {
                    // Like perftest's client, retry while the server's new listener is not up yet (behind a
                    // NAT that accepts for it, such as QEMU's user network, the connection closes at once).
                    opened.close();
                    if (role != Role.TARGET_LISTENS || attempt == CONNECTION_ATTEMPTS) {
                        throw e;
                    }
                    Thread.sleep(CONNECTION_RETRY_MILLIS);
                }
            }
            test.program = program;
            test.control = control;
            handshake(control, PingpongDest.zero(), "perftest's handshake after the test connection");
            PingpongDest theirs = null;
            for (int i = 0; i < KEY_HANDSHAKES; i++) {
                theirs = handshake(control, new PingpongDest(0, 1, 1, 0, OWN_RKEY, OWN_VADDR, new byte[16], 0, 0),
                        "perftest's key handshake");
            }
            int buffSize = Math.max(messageSize, page);
            int half = (buffSize + cacheLine - 1) / cacheLine * cacheLine;
            test.stag = theirs.rkey();
            test.to = theirs.vaddr() - buffSize;
            test.length = 2L * half;
            test.exactLength = true;
            test.regionKnown = true;
            if (!client) {
                awaitClientsRun(test);
            }
            test.permit();
            return test;
        } catch (Exception | Error e) {
            if (test != null) {
                test.close();
            } else {
                control.close();
            }
            throw e;
        }
    }

    /** MPA setup as perftest does it: no private data, IRD = ORD = 1 so that this end's Reads are within the IRD. */
    private static void setUp(Session s, boolean crc) throws Exception {
        if (s.role == Role.TARGET_LISTENS) {
            s.initiate(MpaBytes.request(crc, false, Session.IRD_ORD, new byte[0]));
            return;
        }
        if (s.readRequest() == null) {
            throw new Session.SetupRefused("the target closed the connection before its MPA Request");
        }
        // As perftest's server does: the initiator's IRD and ORD back (ib_read_bw's out_reads), at least 1 so that
        // this end's Reads are within the target's IRD; a smaller ORD stalls siw's ib_read_bw client, whose own
        // Reads then fill its ORD and hold up the Read Responses it owes.
        MpaBytes.Frame reply = !s.targetFrame.enhanced() ? s.reply(crc) : MpaBytes.reply(crc ? MpaFrames.CRC_FLAG : 0,
                MpaBytes.Words.of(Math.max(1, s.targetFrame.ord()), Math.max(1, s.targetFrame.ird())), new byte[0]);
        s.peer.write(reply.bytes());
        s.peer.startFullOperation(s.targetFrame.crc() || crc, s.targetFrame.marker(), false);
    }

    /**
     * One of perftest's lock-step exchanges on the control connection: the client sends first.
     * Returns the target's message, which must be {@code expected} octets long.
     */
    private static byte[] exchange(Session control, byte[] mine, int expected, String what) throws Exception {
        if (control.role == Role.TARGET_LISTENS) {
            send(control, mine);
            return receive(control, expected, what);
        }
        byte[] theirs = receive(control, expected, what);
        send(control, mine);
        return theirs;
    }

    private static PingpongDest handshake(Session control, PingpongDest mine, String what) throws Exception {
        return PingpongDest.decode(exchange(control, mine.encode(), PingpongDest.LENGTH, what));
    }

    private static void send(Session control, byte[] message) throws Exception {
        byte[] send = Ulpdus.send(control.nextSendMsn++, message.length);
        System.arraycopy(message, 0, send, DdpHeaders.UNTAGGED_HEADER_LENGTH, message.length);
        control.sendGood(send);
    }

    private static byte[] receive(Session control, int expected, String what) throws Exception {
        byte[] send = control.awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND), what);
        control.permit();
        int length = send.length - DdpHeaders.UNTAGGED_HEADER_LENGTH;
        if (length != expected) {
            throw new Session.SetupRefused("the target sent " + length + " octets for " + what + ", where perftest "
                    + "sends " + expected + ": is it running perftest with -R?");
        }
        return java.util.Arrays.copyOfRange(send, DdpHeaders.UNTAGGED_HEADER_LENGTH, send.length);
    }

    /**
     * The target is perftest's client: its run (Writes, or Read Requests that this end leaves
     * unanswered) comes first on the test connection, as RFC 5044 section 7.1.2 wants of an
     * initiator; the case starts once it is over.
     */
    private static void awaitClientsRun(Session test) throws Exception {
        test.awaitNew(u -> true, "the perftest client's first operation on the test connection");
        int seen;
        do {
            seen = test.peer.received().size();
            Thread.sleep(QUIET_MILLIS);
        } while (test.peer.received().size() != seen && !test.peer.awaitClosed(0));
    }

    /**
     * Shows the target still carries on: a Read of the region's first octets gets its Response
     * (ib_read_bw); a Write one past the region's end (ib_write_bw, whose region takes no Read)
     * gets a Terminate that carries that Write's header, so the Terminate answers the probe and not
     * what came before it.
     */
    static void probe(Session s, Session.Splitter split) throws Exception {
        if (s.program.remoteRead()) {
            long before = s.peer.readResponseOctets();
            s.write(split, s.peer.frame(Ulpdus.readRequest(s.nextReadMsn++, Session.PEER_SINK_STAG,
                    Session.PEER_SINK_TO, PROBE_SIZE, s.stag, s.to)));
            s.awaitNew(u -> Ulpdus.isTagged(u, RdmapOpcode.RDMA_READ_RESPONSE), "a Read Response to a Read of the "
                    + "region's first " + PROBE_SIZE + " octets");
            if (s.peer.readResponseOctets() - before != PROBE_SIZE) {
                throw new Session.CaseFailure("the Read Response carries " + (s.peer.readResponseOctets() - before)
                        + " octets; the Read asked for " + PROBE_SIZE);
            }
            s.permit();
            return;
        }
        byte[] write = Ulpdus.write(s.stag, s.to + s.length - PROBE_SIZE + 1, PROBE_SIZE);
        s.write(split, s.peer.frame(write));
        byte[] terminate = s.awaitNew(Ulpdus::isTerminate, "a Terminate for a Write one octet past the region's end, "
                + "sent to show the stream is still processing");
        byte[] header = java.util.Arrays.copyOf(write, DdpHeaders.TAGGED_HEADER_LENGTH);
        if (!contains(terminate, header)) {
            throw new Session.CaseFailure("the Terminate does not carry the DDP header of the Write sent after the "
                    + "case: it answers what came before; it " + Observation.of(s).describe());
        }
        throw new ProbeTerminated();
    }

    /** Segments of one tagged message of {@code total} octets from {@code to}, {@code each} octets at most. */
    static List<byte[]> writeSegments(int stag, long to, long total, int each) {
        List<byte[]> segments = new ArrayList<>();
        long done = 0;
        do {
            int n = (int) Math.min(each, total - done);
            boolean last = done + n == total;
            segments.add(Ulpdus.tagged(last ? Ulpdus.TAGGED_LAST : Ulpdus.TAGGED_MORE,
                    Ulpdus.rdmap(RdmapOpcode.RDMA_WRITE), stag, to + done, n));
            done += n;
        } while (done < total);
        return segments;
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** The Write probe drew its Terminate, as it should: the stream was still up. */
    static final class ProbeTerminated extends Exception {
        ProbeTerminated() {
            super(null, null, false, false);
        }
    }
}
