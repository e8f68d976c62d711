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
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The host end of the command line that {@code siw-peer/guest-init.sh} serves on the guest's second
 * serial port (ttyS1), which QEMU connects to a Unix socket. One request at a time; see the script
 * for the protocol:
 *
 * <pre>
 *   host:  X &lt;id&gt; &lt;seconds&gt; &lt;base64 script&gt;      guest: @@JW &lt;id&gt; BEGIN@@, base64 output, @@JW &lt;id&gt; END &lt;rc&gt; &lt;timed out&gt;@@
 *   host:  B &lt;id&gt; 0 &lt;base64 script&gt;              guest: @@JW &lt;id&gt; STARTED &lt;pid&gt;@@
 *   guest, once after setup:                      @@JW READY &lt;failed setup steps&gt;@@
 * </pre>
 *
 * A reader thread turns the byte stream into lines; callers take them from a queue. A request
 * whose answer does not come in time leaves the line out of step, so the channel then refuses
 * further requests.
 */
final class GuestChannel implements AutoCloseable {

    private static final Pattern READY = Pattern.compile("@@JW READY (\\d+)@@");
    private static final Pattern END = Pattern.compile("@@JW (\\S+) END (\\d+) ([01])@@");
    private static final Pattern STARTED = Pattern.compile("@@JW (\\S+) STARTED (\\d+)@@");
    private static final Pattern ERROR = Pattern.compile("@@JW (\\S+) ERROR (.*)@@");
    /** Marks the end of the stream in the line queue. */
    private static final String EOF = "\u0000EOF";

    private final SocketChannel socket;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final AtomicLong ids = new AtomicLong();
    private volatile String brokenBecause;

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
                throw new IOException("the guest's command line closed during boot");
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
     * waits that long plus {@code grace} for the answer.
     */
    synchronized Answer exec(String script, Duration limit, Duration grace) throws IOException, InterruptedException {
        String id = "x" + ids.incrementAndGet();
        long seconds = Math.max(1, (limit.toMillis() + 999) / 1000);
        send("X " + id + " " + seconds + " " + encode(script));
        long deadline = System.nanoTime() + limit.plus(grace).toNanos();
        StringBuilder base64 = new StringBuilder();
        boolean inBlock = false;
        while (true) {
            String line = take(deadline, id);
            if (line.equals("@@JW " + id + " BEGIN@@")) {
                inBlock = true;
                base64.setLength(0);
                continue;
            }
            Matcher end = END.matcher(line);
            if (end.matches() && end.group(1).equals(id)) {
                String output = new String(Base64.getMimeDecoder().decode(base64.toString()), StandardCharsets.UTF_8);
                return new Answer(Integer.parseInt(end.group(2)), end.group(3).equals("1"), output);
            }
            checkError(line, id);
            if (inBlock && !line.startsWith("@@JW ")) {
                base64.append(line);
            }
            // Anything else is the late answer to an earlier request, or noise: skip it.
        }
    }

    /** Starts a script in the background; returns its process group id. */
    synchronized Spawned spawn(String script, Duration timeout) throws IOException, InterruptedException {
        String id = "b" + ids.incrementAndGet();
        send("B " + id + " 0 " + encode(script));
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = take(deadline, id);
            Matcher m = STARTED.matcher(line);
            if (m.matches() && m.group(1).equals(id)) {
                return new Spawned(id, Integer.parseInt(m.group(2)));
            }
            checkError(line, id);
        }
    }

    /** A background script: its id names its files {@code /tmp/jw/<id>.out} and {@code .rc}. */
    record Spawned(String id, int pid) {
    }

    boolean isBroken() {
        return brokenBecause != null;
    }

    private void send(String line) throws IOException {
        if (brokenBecause != null) {
            throw new IOException("the guest's command line is out of step: " + brokenBecause);
        }
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII));
        while (bytes.hasRemaining()) {
            socket.write(bytes);
        }
    }

    private String take(long deadline, String id) throws IOException, InterruptedException {
        String line = lines.poll(remaining(deadline), TimeUnit.NANOSECONDS);
        if (line == null) {
            brokenBecause = "no answer to request " + id + " in time";
            throw new IOException(brokenBecause);
        }
        if (line == EOF) {
            lines.add(EOF); // stays closed for the next caller too
            brokenBecause = "the line closed (QEMU exited?)";
            throw new IOException(brokenBecause);
        }
        return line;
    }

    private static void checkError(String line, String id) throws IOException {
        Matcher m = ERROR.matcher(line);
        if (m.matches() && m.group(1).equals(id)) {
            throw new IOException("the guest refused request " + id + ": " + m.group(2));
        }
    }

    private static String encode(String script) {
        return Base64.getEncoder().encodeToString(script.getBytes(StandardCharsets.UTF_8));
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
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
}
