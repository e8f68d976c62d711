package org.jiwarp.conformance.siw;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;

/**
 * What the siw suites do when the guest stops answering in the middle of a cell: such a cell gets a
 * fresh guest and one more try, and the suite's matrix says so. A second hang, or a failure while
 * the guest still answers, fails the cell.
 *
 * <p>The hangs this was written for were requests the old serial command loop lost
 * (siw-peer/README.md, "The command channel"); the channel now resends a lost request, so what is
 * left to land here is a guest that acknowledged no copy of a request for 20 s, or acknowledged one
 * and never answered it: a guest that really hangs. The message says which.
 */
public final class GuestHang {

    /** A cell's body. */
    public interface Cell {
        void run() throws Exception;
    }

    private GuestHang() {
    }

    /**
     * Runs {@code body}; if it fails with a {@link SiwPeerException} because {@code peer} died, adds a
     * line naming {@code cell} to {@code matrix}, calls {@code reboot} (which replaces the suite's
     * guest) and runs {@code body} once more.
     */
    public static void retryOnFreshGuest(String cell, SiwPeer peer, List<String> matrix, Runnable reboot, Cell body)
            throws Exception {
        try {
            body.run();
        } catch (SiwPeerException e) {
            if (peer.isAlive()) {
                throw e;
            }
            String what = "guest stopped answering" + switch (tcpAnswers(peer)) {
                case ANSWERS -> " its command channel (TCP still answers)";
                case SILENT -> " (its TCP stack too)";
                case UNKNOWN -> "";
            } + ": " + e.getMessage().lines().filter(l -> !l.isBlank()).findFirst().orElse("");
            System.out.println(cell + ": " + what + "; what the guest's kernel says of its tasks:\n"
                    + peer.blockedTasks() + "\n" + cell + ": booting a fresh guest and trying once more");
            synchronized (matrix) {
                matrix.add(String.format("%-64s %s; fresh guest, one more try:", cell, what));
            }
            reboot.run();
            body.run();
        }
    }

    private enum Tcp { ANSWERS, SILENT, UNKNOWN }

    /**
     * Whether the guest's TCP stack still answers: a connection to the forwarded rping port, where
     * nothing listens, ends at once (RST) from a live guest; from a frozen one the host side stays
     * open.
     */
    private static Tcp tcpAnswers(SiwPeer peer) {
        int port;
        try {
            port = peer.hostPort(SiwPeer.RPING_PORT);
        } catch (IllegalArgumentException e) {
            return Tcp.UNKNOWN;
        }
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(3000);
            return socket.getInputStream().read() < 0 ? Tcp.ANSWERS : Tcp.SILENT;
        } catch (IOException e) {
            return e instanceof SocketTimeoutException ? Tcp.SILENT : Tcp.ANSWERS;
        }
    }
}
