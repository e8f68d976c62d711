package org.jiwarp.conform;

import static org.jiwarp.conform.Expect.holds;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * {@link Group#EXHAUSTION}: peers that hold a target's resources rather than break a field. The
 * RFCs set no bound on what a target may spend on a peer that stops reading or never finishes its
 * MPA Request; the rule here is the one every trusted stack keeps: what one peer holds is bounded,
 * a connection that cannot go on is given up within a bound, and other connections are served
 * meanwhile.
 *
 * <ul>
 *   <li>Read Requests up to the target's IRD for the whole region, through a receive window the
 *       raw peer shrank and never reads: rping goes on over another connection meanwhile (target
 *       listens) and after the raw peer closes (both roles);</li>
 *   <li>a bad CRC sent in the same state: the target gives the connection up within
 *       {@value #GIVE_UP_MILLIS} ms although its Terminate cannot be delivered;</li>
 *   <li>{@value #IDLE_CONNECTIONS} connections that send nothing or half an MPA Request (target
 *       listens): rping is served meanwhile, and the target closes each within
 *       {@value #IDLE_CLOSE_MILLIS} ms;</li>
 *   <li>an MPA Request written one octet a second (target listens): rping is served meanwhile, and
 *       the target closes the connection or completes the setup within {@value #TRICKLE_MILLIS} ms.</li>
 * </ul>
 *
 * <p>The runner's cut-off for a hung case (four times {@code --timeout} and {@code --wait}) grows
 * by {@link #ownBoundMillis} for these cases, so that a bound is never cut short.
 */
final class ExhaustionCases {

    /** How long the raw peer holds Read Responses unread before it closes. */
    static final long HOLD_MILLIS = 5_000;
    /** How long a target may take to give up a connection whose Terminate cannot be delivered. */
    static final long GIVE_UP_MILLIS = 20_000;
    /** Idle connections opened at once (a listener's backlog and setup limit must take them). */
    static final int IDLE_CONNECTIONS = 32;
    /** How long a target may keep a connection that never completes its MPA Request. */
    static final long IDLE_CLOSE_MILLIS = 20_000;
    /** How long a trickled MPA Request may take to be closed or answered (it is 20 octets, one a second). */
    static final long TRICKLE_MILLIS = 25_000;
    /** The smallest receive buffer: the kernel rounds it up to its own minimum. */
    private static final int TINY_RECEIVE_BUFFER = 1;
    /** How often a closed connection is looked for without reading it. */
    private static final long PROBE_EVERY_MILLIS = 250;
    /** The most Read Requests sent at once, whatever IRD the target names (RFC 6581 9.1's 0x3FFF is not a count). */
    private static final int MAX_READS = 128;

    private static final String RESOURCE_RULE = "resource rule (the RFCs set no bound)";

    private ExhaustionCases() {
    }

    /** The time case {@code c} may take on top of the runner's steps: its group's longest bound. */
    static long ownBoundMillis(ConformCase c) {
        return c.group() == Group.EXHAUSTION ? Math.max(TRICKLE_MILLIS, GIVE_UP_MILLIS) : 0;
    }

    static void add(List<ConformCase> e) {
        e.add(c("reads-at-the-ird-never-read", null, "RFC 5040 5.2.1, RFC 6581 9.1 (IRD); " + RESOURCE_RULE,
                ConformCase.Setup.CRC, s -> { },
                holds("Read Requests up to the target's IRD for the whole region, their Responses never read "
                        + "through a receive window shrunk to the minimum for " + HOLD_MILLIS / 1000 + " s: rping's "
                        + "exchange goes on over another connection meanwhile (when the target listens) and after "
                        + "the raw peer closes (the target stays up)", ExhaustionCases::readsNeverRead)));
        e.add(c("bad-crc-while-not-reading", null, "RFC 5044 6, 8 (code 2), RFC 5040 5.4; " + RESOURCE_RULE,
                ConformCase.Setup.CRC, s -> { },
                holds("with Read Responses unread and the receive window shrunk, an FPDU with a bad CRC: the target "
                        + "gives the connection up (closes or resets it) within " + GIVE_UP_MILLIS / 1000 + " s "
                        + "although its Terminate cannot be delivered, and rping's exchange then goes on over a "
                        + "fresh connection", ExhaustionCases::badCrcWhileNotReading)));
        e.add(c("idle-connections-while-serving", Role.TARGET_LISTENS, "RFC 5044 7.1.2 (the Responder waits for the "
                + "Request); " + RESOURCE_RULE, ConformCase.Setup.MANUAL, s -> { },
                holds(IDLE_CONNECTIONS + " TCP connections that send nothing or half an MPA Request and stay idle: "
                        + "rping's exchange is served meanwhile, and the target closes each idle one within "
                        + IDLE_CLOSE_MILLIS / 1000 + " s", ExhaustionCases::idleConnections)));
        e.add(c("mpa-request-one-octet-a-second", Role.TARGET_LISTENS, "RFC 5044 7.1.1, 7.1.2; " + RESOURCE_RULE,
                ConformCase.Setup.MANUAL, s -> { },
                holds("an MPA Request written one octet a second: rping's exchange is served meanwhile, and the "
                        + "target closes that connection, or answers the Request, within " + TRICKLE_MILLIS / 1000
                        + " s", ExhaustionCases::trickledRequest)));
    }

    private static ConformCase c(String name, Role role, String section, ConformCase.Setup setup,
            ConformCase.Action action, Expect expect) {
        return new ConformCase(name, Group.EXHAUSTION, role, EnumSet.of(Program.RPING), section, setup, action, expect);
    }

    /**
     * Shrinks the receive buffer, stops reading and sends Read Requests up to the target's IRD, each
     * of the whole region; returns how many.
     */
    private static int readWithoutReading(Session s) throws Exception {
        s.learnRegion();
        s.peer.socket().setReceiveBufferSize(TINY_RECEIVE_BUFFER);
        s.peer.pauseReading();
        int reads = Math.max(1, Math.min(MAX_READS, s.targetFrame.ird()));
        for (int i = 0; i < reads; i++) {
            s.sendGood(Ulpdus.readRequest(s.nextReadMsn++, Session.PEER_SINK_STAG, Session.PEER_SINK_TO, s.length,
                    s.stag, s.to));
        }
        return reads;
    }

    private static Judgement readsNeverRead(Session s) throws Exception {
        int reads = readWithoutReading(s);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS);
        String meanwhile = null;
        if (s.role == Role.TARGET_LISTENS) {
            meanwhile = s.exchangeOnAnotherConnection();
            if (meanwhile != null) {
                return Judgement.fail("while " + reads + " Read Requests of " + s.length + " octets went unread, "
                        + "another connection failed: " + meanwhile);
            }
        }
        sleepUntil(end);
        s.peer.close();
        String after = s.exchangeOnAnotherConnection();
        if (after != null) {
            return Judgement.fail("after " + reads + " Read Requests of " + s.length + " octets went unread for "
                    + HOLD_MILLIS / 1000 + " s and the connection closed, a fresh connection failed: " + after);
        }
        return Judgement.pass("it served rping " + (s.role == Role.TARGET_LISTENS ? "on another connection while "
                : "on a fresh connection after ") + reads + " Read Request(s) of " + s.length + " octets went unread"
                + (s.role == Role.TARGET_LISTENS ? ", and on a fresh one after the raw peer closed" : ""));
    }

    private static Judgement badCrcWhileNotReading(Session s) throws Exception {
        int reads = readWithoutReading(s);
        byte[] fpdu = s.peer.frame(s.applicationSend(s.nextSendMsn));
        fpdu[fpdu.length - 1] ^= 0x80;
        s.peer.write(fpdu);
        long start = System.nanoTime();
        long gaveUp = awaitGivenUp(s.peer.socket(), GIVE_UP_MILLIS);
        if (gaveUp < 0) {
            return Judgement.fail("the connection is still open " + GIVE_UP_MILLIS / 1000 + " s after the bad CRC ("
                    + reads + " Read Request(s) of " + s.length + " octets unread, the receive window shrunk)");
        }
        String after = s.exchangeOnAnotherConnection();
        String seen = String.format("it gave the connection up %.1f s after the bad CRC (%d Read Request(s) of %d "
                + "octets unread)", (gaveUp - start) / 1e9, reads, s.length);
        return after == null ? Judgement.pass(seen + "; a fresh connection then carried rping's exchange")
                : Judgement.fail(seen + "; then, on a fresh connection: " + after);
    }

    /**
     * Waits, without reading, until the remote end has given the connection up: one octet of
     * urgent data every {@value #PROBE_EVERY_MILLIS} ms, which an application that still holds the
     * connection never reads (its stack keeps urgent data out of the stream), while a connection
     * its application has closed answers with a reset, and a reset one fails the next write.
     *
     * @return {@link System#nanoTime()} when the write failed, or {@code -1} after {@code millis}
     */
    private static long awaitGivenUp(Socket socket, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < deadline) {
            try {
                socket.sendUrgentData(0);
            } catch (IOException e) {
                return System.nanoTime();
            }
            Thread.sleep(PROBE_EVERY_MILLIS);
        }
        return -1;
    }

    private static Judgement idleConnections(Session s) throws Exception {
        SocketAddress target = s.peer.socket().getRemoteSocketAddress();
        byte[] half = java.util.Arrays.copyOf(Session.request(true, false).bytes(), MpaFrames.KEY_LENGTH / 2);
        List<Socket> idle = new ArrayList<>();
        int refused = 0;
        try {
            for (int i = 0; i < IDLE_CONNECTIONS; i++) {
                Socket socket = new Socket();
                try {
                    socket.connect(target, (int) Math.max(1000, s.timeoutMillis));
                    if (i % 2 == 1) {
                        socket.getOutputStream().write(half);
                    }
                    idle.add(socket);
                } catch (IOException e) {
                    refused++; // a full backlog: the target keeps nothing for it
                    socket.close();
                }
            }
            long opened = System.nanoTime();
            try {
                s.setUp(true);
                s.learnRegion();
                s.probe(Session.Splitter.WHOLE);
            } catch (Session.SetupRefused | Session.CaseFailure e) {
                return Judgement.fail("with " + IDLE_CONNECTIONS + " idle connections open, rping's was not served: "
                        + e.getMessage());
            }
            long deadline = opened + TimeUnit.MILLISECONDS.toNanos(IDLE_CLOSE_MILLIS);
            int open = 0;
            int answered = 0;
            for (Socket socket : idle) {
                switch (awaitClose(socket, deadline)) {
                    case OPEN -> open++;
                    case ANSWERED -> answered++;
                    default -> { }
                }
            }
            String served = "it served rping while " + idle.size() + " connections sat idle (half of them with "
                    + "half an MPA Request" + (refused > 0 ? "; it refused " + refused + " more" : "") + ")";
            if (open > 0 || answered > 0) {
                return Judgement.fail(served + ", but " + (open > 0 ? open + " of them were still open after "
                        + IDLE_CLOSE_MILLIS / 1000 + " s" : "") + (open > 0 && answered > 0 ? " and " : "")
                        + (answered > 0 ? answered + " got octets though no Request was complete" : ""));
            }
            return Judgement.pass(served + ", and closed every idle one within " + IDLE_CLOSE_MILLIS / 1000 + " s");
        } finally {
            for (Socket socket : idle) {
                socket.close();
            }
        }
    }

    private enum Idle { CLOSED, ANSWERED, OPEN }

    /** Reads {@code socket} until the remote end closes it, it sends something, or the deadline passes. */
    private static Idle awaitClose(Socket socket, long deadline) {
        try {
            InputStream in = socket.getInputStream();
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                left = 1; // a close that already came is still seen
            }
            socket.setSoTimeout((int) left);
            return in.read() < 0 ? Idle.CLOSED : Idle.ANSWERED;
        } catch (SocketTimeoutException e) {
            return Idle.OPEN;
        } catch (IOException e) {
            return Idle.CLOSED; // reset
        }
    }

    private static Judgement trickledRequest(Session s) throws Exception {
        // A revision 1 Request without private data: 20 octets, so the trickle ends within the bound.
        byte[] request = new MpaBytes.Frame(false, MpaFrames.requestKey(), MpaFrames.CRC_FLAG, 1, null, null,
                new byte[0]).bytes();
        long start = System.nanoTime();
        try (Socket trickle = new Socket()) {
            try {
                trickle.connect(s.peer.socket().getRemoteSocketAddress(), (int) Math.max(1000, s.timeoutMillis));
            } catch (IOException e) {
                return Judgement.fail("the target did not accept the connection to trickle a Request on ("
                        + e.getMessage() + ")");
            }
            trickle.setTcpNoDelay(true);
            Thread writer = new Thread(() -> {
                try {
                    for (byte octet : request) {
                        trickle.getOutputStream().write(octet);
                        Thread.sleep(1000);
                    }
                } catch (IOException | InterruptedException e) {
                    // the target closed it, or the case is over
                }
            }, "conform-trickle");
            writer.setDaemon(true);
            writer.start();
            try {
                try {
                    s.setUp(true);
                    s.learnRegion();
                    s.probe(Session.Splitter.WHOLE);
                } catch (Session.SetupRefused | Session.CaseFailure e) {
                    return Judgement.fail("while an MPA Request trickled in one octet a second, rping's exchange on "
                            + "another connection was not served: " + e.getMessage());
                }
                Idle end = awaitClose(trickle, start + TimeUnit.MILLISECONDS.toNanos(TRICKLE_MILLIS));
                String took = String.format("%.1f s", (System.nanoTime() - start) / 1e9);
                return switch (end) {
                    case CLOSED -> Judgement.pass("it served rping meanwhile and closed the trickling connection after "
                            + took);
                    case ANSWERED -> Judgement.pass("it served rping meanwhile and answered the trickled Request after "
                            + took);
                    default -> Judgement.fail("it served rping meanwhile, but the trickling connection was neither "
                            + "closed nor answered after " + TRICKLE_MILLIS / 1000 + " s");
                };
            } finally {
                writer.interrupt();
            }
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
