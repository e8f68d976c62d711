package org.jiwarp.tools;

import java.net.ConnectException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaRejectedException;
import org.jiwarp.rnic.ConnectionParameters;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * What the {@code jiwarp} command prints about a failure, an address or a connection: words a
 * user of rping or perftest reads, never a Java class name ({@code --debug} adds the stack trace).
 */
public final class Failures {

    private Failures() {
    }

    /**
     * One phrase, starting in lower case, saying what went wrong: the unknown host, the refused
     * connection, the MPA reject with the peer's private data, the Terminate by its RFC name.
     */
    public static String describe(Throwable failure) {
        Throwable t = unwrap(failure);
        if (t instanceof UnknownHostException) {
            return "unknown host " + t.getMessage();
        }
        if (t instanceof MpaRejectedException rejected) {
            String why = privateDataText(rejected.privateData());
            return "the peer rejected the connection (MPA Reply with the Reject bit set)"
                    + (why.isEmpty() ? "" : ", saying '" + why + "'");
        }
        if (t instanceof MpaException mpa) {
            return withTerminate(message(mpa), mpa.error());
        }
        if (t instanceof TerminateException terminate) {
            return withTerminate(message(terminate), terminate.error());
        }
        if (t instanceof NoSuchFileException) {
            return "no such file or directory: " + t.getMessage();
        }
        if (t instanceof AccessDeniedException) {
            return "permission denied: " + t.getMessage();
        }
        if (t instanceof FileAlreadyExistsException) {
            return "a file is in the way: " + t.getMessage();
        }
        if (t instanceof ConnectException || t instanceof NoRouteToHostException
                || t instanceof io.netty.channel.ConnectTimeoutException
                || t instanceof io.netty.channel.unix.Errors.NativeIoException) {
            return connectionFailure(t);
        }
        return message(t);
    }

    /** The Java exception in full, for {@code --debug}. */
    public static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** {@code 192.0.2.1:7174}, {@code [2001:db8::1]:7174}, or {@code port 7174 on all addresses}. */
    public static String address(InetSocketAddress address) {
        if (address.getAddress() != null && address.getAddress().isAnyLocalAddress()) {
            return "port " + address.getPort() + " on all addresses";
        }
        String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
        return (address.getAddress() instanceof Inet6Address ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    /** As {@link #address(InetSocketAddress)} for a TCP address; anything else as it prints itself. */
    public static String address(java.net.SocketAddress address) {
        return address instanceof InetSocketAddress inet ? address(inet) : String.valueOf(address);
    }

    /** What MPA set up, in words: {@code MPA rev 2, CRC, markers from the peer, IRD 1 / ORD 1}. */
    public static String connection(ConnectionParameters mpa) {
        StringBuilder text = new StringBuilder("MPA rev ").append(mpa.revision());
        text.append(mpa.crc() ? ", CRC" : ", no CRC");
        if (mpa.markersToPeer() && mpa.markersFromPeer()) {
            text.append(", markers both ways");
        } else if (mpa.markersToPeer()) {
            text.append(", markers to the peer");
        } else if (mpa.markersFromPeer()) {
            text.append(", markers from the peer");
        }
        if (mpa.enhanced()) {
            text.append(", IRD ").append(mpa.ird()).append(" / ORD ").append(mpa.ord());
        }
        if (mpa.peerToPeer()) {
            text.append(", peer-to-peer (").append(mpa.rtr()).append(" RTR)");
        }
        return text.toString();
    }

    /** A failed work completion's status, as a sentence fragment. */
    public static String status(WcStatus status) {
        return switch (status) {
            case SUCCESS -> "succeeded";
            case LOCAL_PROTECTION_ERROR -> "failed a local protection check";
            case LOCAL_LENGTH_ERROR -> "did not fit the posted receive buffer";
            case LOCAL_QP_OPERATION_ERROR -> "failed locally (jiwarp sent a Terminate)";
            case REMOTE_ACCESS_ERROR -> "was refused remote access by the peer";
            case REMOTE_OPERATION_ERROR -> "failed at the peer";
            case WORK_REQUEST_FLUSH_ERROR -> "was flushed because the connection ended";
            case FATAL_ERROR -> "failed because the connection was lost";
        };
    }

    /** A work request kind in words: {@code RDMA Write}, {@code Send}, {@code receive}. */
    public static String operation(WcOpcode opcode) {
        return switch (opcode) {
            case SEND -> "Send";
            case RDMA_WRITE -> "RDMA Write";
            case RDMA_READ -> "RDMA Read";
            case RECEIVE -> "receive";
            case IMMEDIATE_DATA -> "Immediate Data";
            case RECEIVE_IMMEDIATE_DATA -> "receive of Immediate Data";
            case ATOMIC_FETCH_ADD -> "atomic fetch-and-add";
            case ATOMIC_SWAP -> "atomic swap";
            case ATOMIC_COMPARE_SWAP -> "atomic compare-and-swap";
        };
    }

    /** A completion that was not the expected success, in words: {@code the RDMA Read was flushed ...}. */
    public static String completion(WorkCompletion wc) {
        return "the " + operation(wc.opcode()) + " (work request " + wc.workRequestId() + ") " + status(wc.status());
    }

    private static String withTerminate(String message, TerminateError error) {
        return error == null ? message : message + " (Terminate: " + error.describe() + ")";
    }

    private static String connectionFailure(Throwable t) {
        // Netty's native transport says "finishConnect(..) failed with error(-111): Connection refused: /1.2.3.4:5".
        String text = t.getMessage() == null ? "connection failed" : t.getMessage();
        text = text.replaceFirst("^.*failed with error\\(-?\\d+\\): ", "");
        int colon = text.lastIndexOf(": ");
        String what = colon < 0 ? text : text.substring(0, colon);
        String where = colon < 0 ? "" : text.substring(colon + 2).replaceFirst("^[^/]*/", "");
        what = what.isEmpty() ? what : Character.toLowerCase(what.charAt(0)) + what.substring(1);
        if (what.equals("connection refused")) {
            return where.isEmpty() ? "connection refused (nothing listening?)"
                    : "connection to " + where + " refused (nothing listening there?)";
        }
        return where.isEmpty() ? what : what + " (" + where + ")";
    }

    private static String message(Throwable t) {
        String message = t.getMessage();
        if (message == null || message.isBlank()) {
            return "internal error (run with --debug to see where)";
        }
        return message;
    }

    /** The printable text of a reject's private data, or "" when there is none or it is not text. */
    private static String privateDataText(byte[] data) {
        int end = data.length;
        while (end > 0 && data[end - 1] == 0) {
            end--;
        }
        for (int i = 0; i < end; i++) {
            if (data[i] < 0x20 || data[i] > 0x7e) {
                return "";
            }
        }
        return new String(data, 0, end, StandardCharsets.US_ASCII);
    }
}
