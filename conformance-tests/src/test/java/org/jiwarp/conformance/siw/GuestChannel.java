package org.jiwarp.conformance.siw;

import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The host end of the command channel that {@code siw-peer/guest-init.sh} serves on the guest's
 * virtio-serial port {@value #PORT_NAME}, which QEMU connects to a Unix socket. One request at a
 * time; see the script for the protocol:
 *
 * <pre>
 *   host:  X &lt;id&gt; &lt;try&gt; &lt;seconds&gt; &lt;md5&gt; &lt;script, escaped&gt;
 *   guest: @@JW &lt;id&gt; ACK &lt;try&gt;@@, @@JW &lt;id&gt; BEGIN@@, base64 output, @@JW &lt;id&gt; END &lt;rc&gt; &lt;timed out&gt; &lt;md5&gt;@@
 *   host:  B &lt;id&gt; &lt;try&gt; 0 &lt;md5&gt; &lt;script, escaped&gt;
 *   guest: @@JW &lt;id&gt; ACK &lt;try&gt;@@, @@JW &lt;id&gt; STARTED &lt;pid&gt;@@
 *   guest: @@JW &lt;id&gt; NAK &lt;try&gt; &lt;why&gt;@@ or @@JW ? NAK &lt;why&gt;@@ (a damaged copy), @@JW &lt;id&gt; DUP &lt;try&gt;@@
 *          (a copy of the request it ran last: the same answer follows again), @@JW &lt;id&gt; STALE &lt;try&gt;@@
 *   guest, once after setup:                      @@JW READY &lt;failed setup steps&gt;@@
 * </pre>
 *
 * <p>A script goes escaped as printf's {@code %b} reads it ({@link #escape}), which the guest's
 * shell decodes without starting a program. A request is never waited out: the guest acknowledges the first intact copy of a request
 * before it runs it, and a copy that is not acknowledged within {@link #FIRST_RESEND} (then twice
 * that, up to {@link #LAST_RESEND_GAP}) or that the guest says it read damaged is sent again. The
 * guest runs a request once, whatever the number of copies, and answers a later copy with the same
 * answer. Each answer carries the md5 of the command's output; an answer that does not match is
 * asked for again the same way. Only a guest that acknowledges no copy within the answer grace, or
 * does not answer a request it acknowledged within the request's limit and that grace, leaves the
 * channel out of step: it then refuses further requests ({@link #isBroken()}).
 *
 * <p>Every resend is logged on standard output and counted ({@link #stats()}, and for the whole
 * JVM {@link #totals()}): the siw suites print the counts when they close their guests.
 *
 * <p>A reader thread turns the byte stream into lines; callers take them from a queue.
 */
final class GuestChannel implements AutoCloseable {

    /** The name of the virtio-serial port, as QEMU's {@code virtserialport} and the guest know it. */
    static final String PORT_NAME = "org.jiwarp.cmd";
    /** How long the first copy of a request may go unacknowledged before it is sent again. */
    static final Duration FIRST_RESEND = Duration.ofSeconds(2);
    /** The longest wait between two copies (each wait doubles the one before). */
    static final Duration LAST_RESEND_GAP = Duration.ofSeconds(8);

    private static final Pattern READY = Pattern.compile("@@JW READY (\\d+)@@");
    private static final Pattern CONTROL = Pattern.compile("@@JW (\\S+) (ACK|DUP|NAK|STALE)(?: (\\d+))?(?: (.*))?@@");
    private static final Pattern END = Pattern.compile("@@JW (\\S+) END (\\d+) ([01]) ([0-9a-f]{32})@@");
    private static final Pattern STARTED = Pattern.compile("@@JW (\\S+) STARTED (\\d+)@@");
    private static final Pattern ERROR = Pattern.compile("@@JW (\\S+) ERROR (.*)@@");
    /** Marks the end of the stream in the line queue. */
    private static final String EOF = "\u0000EOF";

    private static final Stats TOTALS = new Stats();

    private final SocketChannel socket;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final AtomicLong ids = new AtomicLong();
    private final Stats stats = new Stats();
    private volatile String brokenBecause;
    private volatile CopyFault fault = CopyFault.NONE;
    private volatile LineFault lineFault = LineFault.NONE;

    private GuestChannel(SocketChannel socket) {
        this.socket = socket;
        this.reader = new Thread(this::readLines, "siw-peer-channel");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Connects to QEMU's socket; {@code null} while QEMU has not created it yet. */
    static GuestChannel tryConnect(Path socketPath) {
        try {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socketPath));
                return new GuestChannel(channel);
            } catch (IOException e) {
                channel.close();
                return null;
            }
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Waits for the guest's READY line.
     *
     * @return the number of setup steps that failed, or -1 when the line did not come in time
     * @throws IOException when the line closed first (QEMU exited)
     */
    int awaitReady(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(remaining(deadline), TimeUnit.NANOSECONDS);
            if (line == null) {
                return -1;
            }
            if (line == EOF) {
                throw new IOException("the guest's command channel closed during boot");
            }
            Matcher m = READY.matcher(line);
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
        }
    }

    /** The answer to an {@code X} request. */
    record Answer(int exitCode, boolean timedOut, String output) {
    }

    /**
     * Runs a script in the guest. The guest kills its process group after {@code limit}; the host
     * waits that long plus {@code grace} after the guest acknowledged the request, and at most
     * {@code grace} for the acknowledgement.
     */
    synchronized Answer exec(String script, Duration limit, Duration grace) throws IOException, InterruptedException {
        long seconds = Math.max(1, (limit.toMillis() + 999) / 1000);
        XAnswer answer = new XAnswer();
        request('X', "x", seconds, script, limit, grace, answer);
        return answer.answer;
    }

    /** Starts a script in the background; returns its process group id. */
    synchronized Spawned spawn(String script, Duration timeout) throws IOException, InterruptedException {
        BAnswer answer = new BAnswer();
        String id = request('B', "b", 0, script, Duration.ZERO, timeout, answer);
        return new Spawned(id, answer.pid);
    }

    /** A background script: its id names its files {@code /tmp/jw/<id>.out} and {@code .rc}. */
    record Spawned(String id, int pid) {
    }

    boolean isBroken() {
        return brokenBecause != null;
    }

    /** This channel's counts so far. */
    Stats stats() {
        return stats;
    }

    /** The counts of every channel in this JVM so far. */
    static Stats totals() {
        return TOTALS;
    }

    /**
     * Puts faults between this channel and the guest, for tests of the channel itself: every copy
     * of a request passes through {@code out} on its way to the guest, every line of the guest's
     * through {@code in} before the channel reads it.
     */
    void inject(CopyFault out, LineFault in) {
        this.fault = out;
        this.lineFault = in;
    }

    /** What happens to a line from the guest before the channel reads it. */
    @FunctionalInterface
    interface LineFault {
        LineFault NONE = line -> line;

        /** @return the line as the channel is to read it, or {@code null} to drop it */
        String apply(String line);
    }

    /** What happens to a copy of a request on its way to the guest (Aeron's LossGenerator idea). */
    @FunctionalInterface
    interface CopyFault {
        CopyFault NONE = (id, copy, line) -> line;
        /**
         * In a line a fault returns, marks a pause: the copy goes out in pieces with
         * {@link #PAUSE_MILLIS} between them, as a slow line (the old UART) brought it.
         */
        char PAUSE = '\u0001';
        long PAUSE_MILLIS = 15;

        /**
         * @param copy 1 for the first copy of request {@code id}, 2 for the first resend, ...
         * @return the line to send (the same, or a damaged one, maybe with {@link #PAUSE}s), or
         *     {@code null} to drop the copy
         */
        String apply(String id, int copy, String line);
    }

    /** What the guest answers a request with, read line by line. */
    private interface Reply {
        /** Takes a line for this request; true once the answer is complete. */
        boolean accept(String id, String line) throws IOException;

        /** Whether the answer that just completed is damaged, so it must be asked for again. */
        default String damage() {
            return null;
        }
    }

    private static final class XAnswer implements Reply {
        private final StringBuilder base64 = new StringBuilder();
        private boolean inBlock;
        private Answer answer;
        private String damage;

        @Override
        public boolean accept(String id, String line) {
            if (line.equals("@@JW " + id + " BEGIN@@")) {
                inBlock = true;
                base64.setLength(0);
                return false;
            }
            Matcher end = END.matcher(line);
            if (end.matches() && end.group(1).equals(id)) {
                inBlock = false;
                byte[] output;
                try {
                    output = Base64.getMimeDecoder().decode(base64.toString());
                } catch (IllegalArgumentException e) {
                    damage = "its output is not base64 (" + e.getMessage() + ")";
                    return true;
                }
                String md5 = md5(output);
                damage = md5.equals(end.group(4)) ? null : "its output's md5 is " + md5 + ", the guest sent " + end.group(4);
                answer = new Answer(Integer.parseInt(end.group(2)), end.group(3).equals("1"),
                        new String(output, StandardCharsets.UTF_8));
                return true;
            }
            if (inBlock && !line.startsWith("@@JW ")) {
                base64.append(line);
            }
            return false;
        }

        @Override
        public String damage() {
            return damage;
        }
    }

    private static final class BAnswer implements Reply {
        private int pid;

        @Override
        public boolean accept(String id, String line) {
            Matcher m = STARTED.matcher(line);
            if (m.matches() && m.group(1).equals(id)) {
                pid = Integer.parseInt(m.group(2));
                return true;
            }
            return false;
        }
    }

    /**
     * Sends request {@code verb} until the guest acknowledges a copy, then reads its answer into
     * {@code reply}. Returns the request's id.
     */
    private String request(char verb, String prefix, long seconds, String script, Duration limit, Duration grace,
            Reply reply) throws IOException, InterruptedException {
        if (brokenBecause != null) {
            throw new IOException("the guest's command channel is out of step: " + brokenBecause);
        }
        String id = prefix + ids.incrementAndGet();
        byte[] bytes = script.getBytes(StandardCharsets.UTF_8);
        String head = verb + " " + id + " ";
        String tail = " " + seconds + " " + md5(bytes) + " " + escape(bytes);
        stats.requests.increment();
        TOTALS.requests.increment();

        long sent = System.nanoTime();
        long ackDeadline = sent + grace.toNanos();
        long answerDeadline = 0;
        long gap = FIRST_RESEND.toNanos();
        long resendAt = sent + gap;
        int copies = 1;
        int ackedCopy = 0;
        int askedAgainCopy = 0;
        sendCopy(id, copies, head + copies + tail);
        while (true) {
            long wakeAt = ackedCopy > 0 ? answerDeadline : Math.min(resendAt, ackDeadline);
            String line = lines.poll(Math.max(0, wakeAt - System.nanoTime()), TimeUnit.NANOSECONDS);
            long now = System.nanoTime();
            if (line == null) {
                if (ackedCopy > 0 && now - answerDeadline >= 0) {
                    throw broken("request " + id + " was acknowledged (copy " + ackedCopy + " of " + copies
                            + ") but not answered within " + millis(limit.plus(grace).toNanos()) + " ms");
                }
                if (ackedCopy == 0 && now - ackDeadline >= 0) {
                    throw broken("the guest acknowledged none of the " + copies + " copies of request " + id
                            + " in " + millis(now - sent) + " ms");
                }
                if (ackedCopy == 0 && now - resendAt >= 0) {
                    copies++;
                    resend(id, copies, head + copies + tail, "no acknowledgement in " + millis(gap) + " ms");
                    gap = Math.min(gap * 2, LAST_RESEND_GAP.toNanos());
                    resendAt = now + gap;
                }
                continue;
            }
            if (line == EOF) {
                lines.add(EOF); // stays closed for the next caller too
                throw broken("the channel closed (QEMU exited?)");
            }
            line = lineFault.apply(line);
            if (line == null) {
                continue;
            }
            Matcher control = CONTROL.matcher(line);
            if (control.matches()) {
                String about = control.group(1);
                String what = control.group(2);
                int copy = control.group(3) == null ? 0 : Integer.parseInt(control.group(3));
                if (about.equals(id) && what.equals("ACK") && ackedCopy == 0) {
                    ackedCopy = copy;
                    answerDeadline = now + limit.plus(grace).toNanos();
                    long ackNanos = now - sent;
                    stats.ackReceived(ackNanos, copy);
                    TOTALS.ackReceived(ackNanos, copy);
                } else if (about.equals(id) && what.equals("DUP") && copy != askedAgainCopy) {
                    stats.duplicates.increment();
                    TOTALS.duplicates.increment();
                } else if (what.equals("NAK") && ackedCopy == 0 && (about.equals("?") || (about.equals(id) && copy == copies))) {
                    stats.naks.increment();
                    TOTALS.naks.increment();
                    copies++;
                    resend(id, copies, head + copies + tail, "the guest read copy " + (copies - 1) + " damaged: " + line);
                    gap = FIRST_RESEND.toNanos();
                    resendAt = now + gap;
                }
                continue; // anything else is about an earlier request (a late duplicate, say): skip it
            }
            Matcher error = ERROR.matcher(line);
            if (error.matches() && error.group(1).equals(id)) {
                throw new IOException("the guest refused request " + id + ": " + error.group(2));
            }
            if (reply.accept(id, line)) {
                String damage = reply.damage();
                if (damage == null) {
                    return id;
                }
                // The guest keeps the answer: a copy of the request makes it send the answer again.
                stats.repliesAskedAgain.increment();
                TOTALS.repliesAskedAgain.increment();
                copies++;
                askedAgainCopy = copies;
                resend(id, copies, head + copies + tail, "its answer came damaged: " + damage);
            }
        }
    }

    private void resend(String id, int copy, String line, String why) throws IOException {
        stats.resent.increment();
        TOTALS.resent.increment();
        System.out.println("siw-peer channel: sending request " + id + " again (copy " + copy + "): " + why);
        sendCopy(id, copy, line);
    }

    private void sendCopy(String id, int copy, String line) throws IOException {
        String out = fault.apply(id, copy, line);
        if (out == null) {
            return;
        }
        String[] pieces = (out + "\n").split(String.valueOf(CopyFault.PAUSE), -1);
        for (int i = 0; i < pieces.length; i++) {
            if (i > 0) {
                try {
                    Thread.sleep(CopyFault.PAUSE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while sending request " + id, e);
                }
            }
            ByteBuffer bytes = ByteBuffer.wrap(pieces[i].getBytes(StandardCharsets.US_ASCII));
            while (bytes.hasRemaining()) {
                socket.write(bytes);
            }
        }
    }

    private IOException broken(String why) {
        brokenBecause = why;
        return new IOException(why);
    }

    /**
     * The script as one word that {@code printf '%b'} turns back into it: printable ASCII but the
     * space and the backslash as it is, every other octet as {@code \0} and three octal digits.
     */
    static String escape(byte[] bytes) {
        StringBuilder word = new StringBuilder(bytes.length + bytes.length / 4);
        for (byte b : bytes) {
            int octet = b & 0xFF;
            if (octet > ' ' && octet < 0x7F && octet != '\\') {
                word.append((char) octet);
            } else {
                word.append("\\0").append((char) ('0' + (octet >> 6))).append((char) ('0' + ((octet >> 3) & 7)))
                        .append((char) ('0' + (octet & 7)));
            }
        }
        return word.toString();
    }

    static String md5(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private void readLines() {
        StringBuilder line = new StringBuilder();
        try (InputStream in = Channels.newInputStream(socket)) {
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                for (int i = 0; i < n; i++) {
                    char c = (char) (buffer[i] & 0xFF);
                    if (c == '\n') {
                        lines.add(line.toString());
                        line.setLength(0);
                    } else if (c != '\r') {
                        line.append(c);
                    }
                }
            }
        } catch (IOException e) {
            // closed by close(), or QEMU went away: both end the stream
        } finally {
            lines.add(EOF);
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    /**
     * What a channel has sent and had to send again. A copy the guest never acknowledged was lost
     * on the way or read damaged; a duplicate is a copy sent again because the acknowledgement was
     * late, which the guest answered without running the request twice.
     */
    static final class Stats {
        final LongAdder requests = new LongAdder();
        final LongAdder resent = new LongAdder();
        final LongAdder lostCopies = new LongAdder();
        final LongAdder naks = new LongAdder();
        final LongAdder duplicates = new LongAdder();
        final LongAdder repliesAskedAgain = new LongAdder();
        private final AtomicLong slowestAckNanos = new AtomicLong();

        void ackReceived(long nanos, int copy) {
            slowestAckNanos.accumulateAndGet(nanos, Math::max);
            if (copy > 1) {
                lostCopies.add(copy - 1);
            }
        }

        long requests() {
            return requests.sum();
        }

        /** Copies sent again, for any reason. */
        long resent() {
            return resent.sum();
        }

        /** Copies before the one the guest acknowledged: lost, or read damaged. */
        long lostCopies() {
            return lostCopies.sum();
        }

        long naks() {
            return naks.sum();
        }

        long duplicates() {
            return duplicates.sum();
        }

        long repliesAskedAgain() {
            return repliesAskedAgain.sum();
        }

        Duration slowestAck() {
            return Duration.ofNanos(slowestAckNanos.get());
        }

        @Override
        public String toString() {
            return requests() + " requests, " + resent() + " resent (" + lostCopies() + " copies lost, " + naks()
                    + " read damaged, " + duplicates() + " late acknowledgements answered as duplicates), "
                    + repliesAskedAgain() + " answers asked for again; slowest acknowledgement "
                    + slowestAck().toMillis() + " ms";
        }
    }
}
