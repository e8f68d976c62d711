package org.jiwarp.conformance.siw;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jiwarp.wire.mpa.Fpdu;

/**
 * A TCP relay in front of a siw listener that lets the initiator's MPA Request, and then its first
 * {@code passFirst} FPDUs, straight through, holds what follows for a moment, and is otherwise a
 * plain byte pipe.
 *
 * <pre>
 *   jiwarp (initiator) --&gt; relay 127.0.0.1:port() --&gt; 127.0.0.1:target (QEMU forward) --&gt; siw
 *   Request --&gt;  at once              &lt;-- Reply, and everything after it, at once
 *   passFirst FPDUs (the RTR in peer-to-peer mode) --&gt; at once
 *   the next FPDU --&gt; after the hold; from then on everything at once
 * </pre>
 *
 * <p>Why: siw 6.1's passive side sends the Reply before its queue pair's receive path takes over
 * the socket; bytes that arrive in between stay unread and the connection hangs (project notes,
 * "siw behaviour"). In peer-to-peer mode siw's connection manager reads the RTR frame itself, but an
 * FPDU that rides in the same TCP segment right behind it is lost the same way, and the hung
 * connection then wedges siw's connection manager for the rest of the boot (no listener answers an
 * MPA Request again). {@code jiwarp ping -c} sends its first Send at once after the Reply, or after
 * the RTR, usually in the same segment; seen here in about one connection in four with MPA
 * revision 1 on a busy host, and now and then in peer-to-peer mode. This relay stands in for the
 * pause a client would have to make.
 */
final class AcceptRaceRelay implements AutoCloseable {

    private final ServerSocket listener;
    private final int target;
    private final Duration hold;
    private final int passFirst;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    /**
     * @param target    the host port that reaches siw's listener
     * @param hold      how long to hold the initiator's bytes
     * @param passFirst FPDUs to let through before the hold: 0, or 1 for a peer-to-peer RTR frame
     */
    AcceptRaceRelay(int target, Duration hold, int passFirst) throws IOException {
        this.target = target;
        this.hold = hold;
        this.passFirst = passFirst;
        this.listener = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        start("siw-relay-accept", this::acceptLoop);
    }

    /** The port the initiator connects to, on 127.0.0.1. */
    int port() {
        return listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                Upstream upstream = new Upstream(passFirst);
                start("siw-relay-up", () -> pipe(client, server, upstream, true));
                start("siw-relay-down", () -> pipe(server, client, upstream, false));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /**
     * The initiator's direction: where its stream is relative to the hold. Its FPDUs carry no
     * markers (siw refuses them), so each is {@link Fpdu#length(int)} of its ULPDU_LENGTH field.
     */
    private static final class Upstream {
        volatile boolean replied;
        boolean held;
        int fpdusToPass;
        /** Octets left of the FPDU being passed, or -1 before its length field is complete. */
        int fpduLeft = -1;
        int lengthField;
        int lengthOctets;

        Upstream(int passFirst) {
            this.fpdusToPass = passFirst;
        }

        /** How many of the {@code n} octets at {@code from} go out before the hold (all: no hold now). */
        int beforeHold(byte[] data, int from, int n) {
            if (!replied || held) {
                return n;
            }
            int at = from;
            int end = from + n;
            while (fpdusToPass > 0 && at < end) {
                if (fpduLeft < 0) {
                    lengthField = lengthField << 8 | data[at++] & 0xFF;
                    if (++lengthOctets == Fpdu.HEADER_LENGTH) {
                        fpduLeft = Fpdu.length(lengthField) - Fpdu.HEADER_LENGTH;
                    }
                    continue;
                }
                int take = Math.min(fpduLeft, end - at);
                at += take;
                fpduLeft -= take;
                if (fpduLeft == 0) {
                    fpdusToPass--;
                    fpduLeft = -1;
                    lengthField = 0;
                    lengthOctets = 0;
                }
            }
            return fpdusToPass == 0 ? at - from : n;
        }
    }

    /**
     * Copies {@code from} to {@code to}. Upstream (initiator to siw) it applies the hold; downstream
     * its first octets are the Reply, after which the initiator may send FPDUs.
     */
    private void pipe(Socket from, Socket to, Upstream upstream, boolean up) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (!up) {
                    upstream.replied = true;
                    out.write(buffer, 0, n);
                    out.flush();
                    continue;
                }
                int first = upstream.beforeHold(buffer, 0, n);
                out.write(buffer, 0, first);
                out.flush();
                if (upstream.replied && !upstream.held && upstream.fpdusToPass == 0) {
                    upstream.held = true;
                    Thread.sleep(hold.toMillis());
                    out.write(buffer, first, n - first);
                    out.flush();
                }
            }
            to.shutdownOutput();
        } catch (IOException e) {
            closeQuietly(to);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(to);
        }
    }

    private static void start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
    }
}
