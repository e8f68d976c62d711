package org.jiwarp.capture.pcap;

import java.net.InetAddress;

/**
 * One TCP connection found in a capture: both directions of one 4-tuple, from its first captured
 * segment until the 4-tuple is reused by a new SYN (see {@link TcpConversations}).
 *
 * <pre>
 *        client                                     server
 *   clientAddress:clientPort  --clientToServer()-->  serverAddress:serverPort
 *                             &lt;--serverToClient()--
 * </pre>
 *
 * <p>The client is the sender of a SYN without ACK when one was captured (RFC 9293 section 3.5:
 * the active opener), otherwise the receiver of a SYN-ACK when one was captured, otherwise the
 * sender of the first captured segment.
 */
public final class TcpConversation {

    private final int index;
    private final TcpDirection first;
    private final TcpDirection second;
    private boolean firstIsClient;
    private boolean roleFromSyn;
    private boolean roleFromSynAck;

    TcpConversation(int index, TcpSegment segment) {
        this.index = index;
        this.first = new TcpDirection(segment.source(), segment.sourcePort(),
                segment.destination(), segment.destinationPort());
        this.second = new TcpDirection(segment.destination(), segment.destinationPort(),
                segment.source(), segment.sourcePort());
        this.firstIsClient = true;
    }

    void add(TcpSegment segment) {
        directionFrom(segment).add(segment);
        roles(segment);
    }

    /** As {@link #add} without keeping the segment; returns its direction. */
    TcpDirection note(TcpSegment segment) {
        TcpDirection direction = directionFrom(segment);
        direction.note(segment);
        roles(segment);
        return direction;
    }

    private void roles(TcpSegment segment) {
        TcpDirection direction = directionFrom(segment);
        if (segment.syn() && !roleFromSyn) {
            if (!segment.ack()) {
                firstIsClient = direction == first;
                roleFromSyn = true;
            } else if (!roleFromSynAck) {
                firstIsClient = direction != first;
                roleFromSynAck = true;
            }
        }
    }

    /** The direction {@code segment} travels in; it must belong to this conversation's 4-tuple. */
    TcpDirection directionFrom(TcpSegment segment) {
        return segment.sourcePort() == first.sourcePort() && segment.source().equals(first.source())
                && segment.destinationPort() == first.destinationPort()
                ? first : second;
    }

    /** RST seen either way, or FIN seen both ways. */
    boolean closed() {
        return first.rstSeen() || second.rstSeen() || (first.finSeen() && second.finSeen());
    }

    /** The conversation's number, 0, 1, 2, ... in order of first appearance, as tshark's {@code tcp.stream}. */
    public int index() {
        return index;
    }

    /** The client's address. */
    public InetAddress clientAddress() {
        return clientToServer().source();
    }

    /** The client's port. */
    public int clientPort() {
        return clientToServer().sourcePort();
    }

    /** The server's address. */
    public InetAddress serverAddress() {
        return serverToClient().source();
    }

    /** The server's port. */
    public int serverPort() {
        return serverToClient().sourcePort();
    }

    /** What the client sent. */
    public TcpDirection clientToServer() {
        return firstIsClient ? first : second;
    }

    /** What the server sent. */
    public TcpDirection serverToClient() {
        return firstIsClient ? second : first;
    }

    /** The frame of the conversation's first captured segment. */
    public int firstFrame() {
        int a = first.segments().isEmpty() ? Integer.MAX_VALUE : first.segments().get(0).frameNumber();
        int b = second.segments().isEmpty() ? Integer.MAX_VALUE : second.segments().get(0).frameNumber();
        return Math.min(a, b);
    }

    @Override
    public String toString() {
        return "TcpConversation[" + index + ": " + clientAddress().getHostAddress() + ":" + clientPort()
                + " <-> " + serverAddress().getHostAddress() + ":" + serverPort() + "]";
    }
}
