package org.jiwarp.conform;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;

/**
 * One case's connection to the target, with what rping's exchange taught about it: jiwarp conform
 * plays the other end of rping (client when the target listens, server when it connects), sets up
 * MPA, and learns one of the target's registered buffers from the exchange.
 *
 * <pre>
 *   target listens (rping -s)                  target connects (rping -c)
 *   Send {source TO, STag, 64}   --&gt;           &lt;--  Send {start_buf TO, STag, size}
 *       &lt;--  Read Request (sink = rdma_buf)    Read Request of start_buf   --&gt;
 *   Read Response                 --&gt;              &lt;--  Read Response
 *       &lt;--  Send ("go ahead")
 * </pre>
 *
 * <p>The learned buffer is the target's rdma_buf (its length unknown, at least 64 octets) or the
 * client's start_buf (its length advertised); rping registers both for remote read and write.
 */
final class Session implements AutoCloseable {

    /** rping's {@code struct rping_rdma_info}: TO (64), STag (32), size (32). */
    static final int INFO_LENGTH = 16;
    /** rping's default ping size, the Read the target is asked to issue. */
    static final int PING_SIZE = 64;
    /** The STag and TO this end advertises as the source of the target's Read (never registered anywhere). */
    static final int PEER_SOURCE_STAG = 0x00BE_EF01;
    static final long PEER_SOURCE_TO = 0x5000_0000L;
    /** What this end names as the sink of its own Reads. */
    static final int PEER_SINK_STAG = 0x00C0_DE01;
    static final long PEER_SINK_TO = 0x7000_0000L;
    /** An STag no target has registered: index 0xFFFF42 is far beyond any STag table. */
    static final int UNKNOWN_STAG = 0xFFFF_4201;
    /** rping's IRD and ORD. */
    static final int IRD_ORD = 1;

    final Role role;
    final long timeoutMillis;
    /** A pause between the target's Reply and the first FPDU (Linux siw's accept race). */
    final long firstFpduPauseMillis;
    final RawConnection peer;
    /** The tool whose exchange this session plays; perftest's test connection when not rping. */
    Program program = Program.RPING;
    /** perftest: the control connection, held (its next handshake unanswered) while the case runs. */
    Session control;
    /** The target's MPA frame: its Reply (target listens) or its Request (target connects). */
    MpaBytes.Parsed targetFrame;
    /** The ULPDU a Terminate must carry. */
    byte[] offending;
    /** Index into {@link RawConnection#received()} from which the target's traffic is judged. */
    int mark;
    /** The Read Response octets received up to {@link #mark}. */
    long readResponseOctetsAtMark;
    /** The learned buffer: STag, base TO, length; {@code exactLength} when the target advertised it. */
    int stag;
    long to;
    long length;
    boolean exactLength;
    boolean regionKnown;
    long nextSendMsn = 1;
    long nextReadMsn = 1;
    /** Target listens: the target's Read Request of this end's advertised buffer. */
    private byte[] targetRead;
    private boolean responded;
    /** Opens another connection to the target (connects, or accepts the target's next), or {@code null}. */
    private Opener opener;

    Session(Role role, Socket socket, long timeoutMillis, long firstFpduPauseMillis) throws IOException {
        this.role = role;
        this.timeoutMillis = timeoutMillis;
        this.firstFpduPauseMillis = firstFpduPauseMillis;
        this.peer = new RawConnection(socket);
    }

    /** How the runner opens a connection to the target: it connects, or accepts the target's next. */
    @FunctionalInterface
    interface Opener {
        /** The connection, or {@code null} when the target did not accept or connect in time. */
        Socket open() throws Exception;
    }

    Session opener(Opener another) {
        this.opener = another;
        return this;
    }

    /**
     * A session on another connection to the target (a second one while this one is held, or the
     * next when the target connects again), not set up yet; the caller closes it.
     *
     * @throws SetupRefused when the target does not accept (or make) the connection
     */
    Session another() throws Exception {
        Socket socket = opener == null ? null : opener.open();
        if (socket == null) {
            throw new SetupRefused(role == Role.TARGET_LISTENS ? "the target did not accept another connection"
                    : "the target did not connect again");
        }
        return new Session(role, socket, timeoutMillis, firstFpduPauseMillis).opener(opener);
    }

    /**
     * rping's MPA setup, CRCs asked for when {@code crc}: the Request and its Reply (target listens),
     * or the target's Request, this end's Reply and the target's first Send (target connects).
     */
    void setUp(boolean crc) throws Exception {
        if (role == Role.TARGET_LISTENS) {
            initiate(request(crc, false));
        } else {
            if (readRequest() == null) {
                throw new SetupRefused("the target closed the connection before its MPA Request");
            }
            respond(reply(crc));
        }
    }

    /**
     * rping's exchange on another connection of its own, from MPA setup (with CRCs) to the target's
     * answer to the exchange's next step: {@code null} when the target carried it, else what it did
     * instead, in words.
     */
    String exchangeOnAnotherConnection() throws Exception {
        try (Session other = another()) {
            try {
                other.setUp(true);
                other.learnRegion();
                other.probe(Splitter.WHOLE);
                return null;
            } catch (SetupRefused | CaseFailure e) {
                return e.getMessage();
            } catch (IOException e) {
                return "the connection failed (" + (e.getMessage() == null ? "no reason given" : e.getMessage()) + ")";
            }
        } catch (SetupRefused e) {
            return e.getMessage();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // MPA setup

    /** rping's Request: revision 2, enhanced, IRD = ORD = 1, no private data; CRC and markers as asked. */
    static MpaBytes.Frame request(boolean crc, boolean markers) {
        return MpaBytes.request(crc, markers, IRD_ORD, new byte[0]);
    }

    /**
     * Target listens: sends {@code request}, reads the Reply and enters full operation.
     *
     * @throws SetupRefused when the target closes or rejects instead
     */
    void initiate(MpaBytes.Frame request) throws Exception {
        peer.write(request.bytes());
        try {
            targetFrame = peer.readMpaFrame(timeoutMillis);
        } catch (EOFException e) {
            throw new SetupRefused("the target closed the connection instead of replying to the MPA Request");
        }
        if (targetFrame.reject()) {
            throw new SetupRefused("the target rejected the MPA Request (R set, flags 0x" + Integer.toHexString(
                    targetFrame.flags()) + ")");
        }
        boolean markersWanted = (request.flags() & MpaFrames.MARKER_FLAG) != 0;
        peer.startFullOperation((request.flags() & MpaFrames.CRC_FLAG) != 0 || targetFrame.crc(), targetFrame.marker(),
                markersWanted);
        // Linux siw attaches its receive path only after it sent the Reply: an FPDU right behind it is lost.
        Thread.sleep(firstFpduPauseMillis);
    }

    /** Target connects: reads its Request; {@code null} when it closed first. */
    MpaBytes.Parsed readRequest() throws IOException {
        try {
            targetFrame = peer.readMpaFrame(timeoutMillis);
            return targetFrame;
        } catch (EOFException e) {
            return null;
        }
    }

    /** The Reply rping's server sends to {@link #targetFrame}, asking for CRCs when {@code crc}. */
    MpaBytes.Frame reply(boolean crc) {
        int flags = crc ? MpaFrames.CRC_FLAG : 0;
        if (!targetFrame.enhanced()) {
            return new MpaBytes.Frame(true, MpaFrames.replyKey(), flags, targetFrame.revision(), null, null, new byte[0]);
        }
        return MpaBytes.reply(flags, MpaBytes.Words.of(IRD_ORD, Math.min(IRD_ORD, targetFrame.ird())), new byte[0]);
    }

    /**
     * Target connects: sends {@code reply}, enters full operation and waits for rping's first Send,
     * the advertisement of the client's start_buf (RFC 5044 section 7.1.2: the initiator's FPDU comes first).
     */
    void respond(MpaBytes.Frame reply) throws Exception {
        peer.write(reply.bytes());
        peer.startFullOperation(targetFrame.crc() || (reply.flags() & MpaFrames.CRC_FLAG) != 0, targetFrame.marker(),
                (reply.flags() & MpaFrames.MARKER_FLAG) != 0);
        byte[] send = awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND), "rping's first Send");
        if (send.length != DdpHeaders.UNTAGGED_HEADER_LENGTH + INFO_LENGTH) {
            throw new SetupRefused("the target's first Send is " + (send.length - DdpHeaders.UNTAGGED_HEADER_LENGTH)
                    + " octets, not rping's 16-octet buffer advertisement");
        }
        ByteBuf info = Unpooled.wrappedBuffer(send, DdpHeaders.UNTAGGED_HEADER_LENGTH, INFO_LENGTH);
        to = info.getLong(0);
        stag = info.getInt(8);
        length = info.getUnsignedInt(12);
        exactLength = true;
        regionKnown = true;
        permit();
    }

    // ---------------------------------------------------------------------------------------------
    // rping's exchange

    /** The 16-octet Send rping's application expects next from this end, with MSN {@code msn}. */
    byte[] applicationSend(long msn) {
        byte[] send = Ulpdus.send(msn, INFO_LENGTH);
        if (role == Role.TARGET_LISTENS) {
            ByteBuf info = Unpooled.wrappedBuffer(send, DdpHeaders.UNTAGGED_HEADER_LENGTH, INFO_LENGTH);
            info.setLong(0, PEER_SOURCE_TO);
            info.setInt(8, PEER_SOURCE_STAG);
            info.setInt(12, PING_SIZE);
        }
        return send;
    }

    /**
     * Waits for what the target does after a good {@link #applicationSend}: rping's server issues a
     * Read Request for the advertised buffer (its sink is the buffer this end learns); rping's client
     * advertises its next buffer by Send.
     */
    void awaitApplicationReaction() throws Exception {
        if (role == Role.TARGET_LISTENS) {
            targetRead = awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.RDMA_READ_REQUEST, DdpHeaders.QN_READ_REQUEST),
                    "rping's Read Request of the advertised buffer");
            ByteBuf b = Unpooled.wrappedBuffer(targetRead);
            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            if (ReadRequestHeader.sourceStag(b, at) != PEER_SOURCE_STAG
                    || ReadRequestHeader.sourceTaggedOffset(b, at) != PEER_SOURCE_TO
                    || ReadRequestHeader.readSize(b, at) != PING_SIZE) {
                throw new CaseFailure("the target's Read Request does not read the advertised buffer: "
                        + Observation.hex(targetRead));
            }
            if (!regionKnown) {
                stag = ReadRequestHeader.sinkStag(b, at);
                to = ReadRequestHeader.sinkTaggedOffset(b, at);
                length = PING_SIZE;
                regionKnown = true;
            }
        } else {
            awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND), "rping's next Send");
        }
        permit();
    }

    /** Learns the target's buffer (target listens: by advertising one of this end's). */
    void learnRegion() throws Exception {
        if (!regionKnown) {
            peer.send(applicationSend(nextSendMsn++));
            awaitApplicationReaction();
        }
    }

    /**
     * Shows the target still carries on after a case's traffic: the next step of rping's exchange,
     * its first FPDU written in the pieces {@code split} gives, must get the target's answer.
     */
    void probe(Splitter split) throws Exception {
        if (program.perftest()) {
            PerftestExchange.probe(this, split);
        } else if (role == Role.TARGET_LISTENS && targetRead == null) {
            write(split, peer.frame(applicationSend(nextSendMsn++)));
            awaitApplicationReaction();
        } else if (role == Role.TARGET_LISTENS && !responded) {
            ByteBuf b = Unpooled.wrappedBuffer(targetRead);
            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            responded = true;
            write(split, peer.frame(Ulpdus.readResponse(ReadRequestHeader.sinkStag(b, at),
                    ReadRequestHeader.sinkTaggedOffset(b, at), PING_SIZE, true)));
            awaitNew(u -> Ulpdus.isUntagged(u, RdmapOpcode.SEND, DdpHeaders.QN_SEND), "rping's go-ahead Send after "
                    + "its Read completed");
            permit();
        } else if (role == Role.TARGET_LISTENS) {
            write(split, peer.frame(applicationSend(nextSendMsn++)));
            awaitNew(u -> Ulpdus.isTagged(u, RdmapOpcode.RDMA_WRITE), "rping's RDMA Write of the advertised buffer");
            permit();
        } else {
            long size = Math.min(length, PING_SIZE);
            write(split, peer.frame(Ulpdus.readRequest(nextReadMsn++, PEER_SINK_STAG, PEER_SINK_TO, size, stag, to)));
            byte[] response = awaitNew(u -> Ulpdus.isTagged(u, RdmapOpcode.RDMA_READ_RESPONSE),
                    "a Read Response to a Read of the advertised start_buf");
            if (response.length != DdpHeaders.TAGGED_HEADER_LENGTH + size) {
                throw new CaseFailure("the Read Response carries " + (response.length - DdpHeaders.TAGGED_HEADER_LENGTH)
                        + " octets; the Read asked for " + size);
            }
            permit();
        }
    }

    /** Writes FPDU octets in the pieces {@code split} gives, each in its own TCP segment. */
    void write(Splitter split, byte[] fpdu) throws Exception {
        List<byte[]> pieces = split.split(fpdu);
        for (int i = 0; i < pieces.size(); i++) {
            peer.write(pieces.get(i));
            if (i < pieces.size() - 1) {
                Thread.sleep(2); // TCP_NODELAY is on: each piece leaves as its own segment
            }
        }
    }

    /** Frames and sends the ULPDU a Terminate must carry. */
    void sendOffending(byte[] ulpdu) throws IOException {
        offending = ulpdu;
        peer.send(ulpdu);
    }

    /** Frames and sends a ULPDU that must cause no error. */
    void sendGood(byte[] ulpdu) throws IOException {
        peer.send(ulpdu);
    }

    /** Everything the target sent so far counts as permitted traffic. */
    void permit() {
        mark = peer.received().size();
        readResponseOctetsAtMark = peer.readResponseOctets();
    }

    /** The first ULPDU after {@link #mark} that matches; fails the case after the timeout or a close. */
    byte[] awaitNew(Predicate<byte[]> match, String what) throws Exception {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            // The close first (see Observation.of): a match that came just before it is still found.
            boolean closed = peer.awaitClosed(0);
            for (byte[] ulpdu : sinceMark()) {
                if (match.test(ulpdu)) {
                    return ulpdu;
                }
            }
            if (closed || System.nanoTime() > deadline) {
                throw new CaseFailure("no " + what + (closed ? "; the target " : " within "
                        + timeoutMillis + " ms; the target ") + Observation.of(this).describe());
            }
            Thread.sleep(2);
        }
    }

    /** ULPDUs received since {@link #mark}. */
    List<byte[]> sinceMark() {
        List<byte[]> all = peer.received();
        return new ArrayList<>(all.subList(Math.min(mark, all.size()), all.size()));
    }

    @Override
    public void close() {
        peer.close();
        if (control != null) {
            control.close();
        }
    }

    /** Cuts an FPDU into the pieces written as separate TCP segments. */
    @FunctionalInterface
    interface Splitter {
        Splitter WHOLE = List::of;

        List<byte[]> split(byte[] fpdu);

        /** Two pieces, cut {@code at} octets in. */
        static Splitter at(int at) {
            return fpdu -> List.of(java.util.Arrays.copyOf(fpdu, at), java.util.Arrays.copyOfRange(fpdu, at, fpdu.length));
        }

        /** One octet per segment. */
        static Splitter everyOctet() {
            return fpdu -> {
                List<byte[]> pieces = new ArrayList<>();
                for (byte b : fpdu) {
                    pieces.add(new byte[] {b});
                }
                return pieces;
            };
        }
    }

    /** MPA setup did not reach full operation. */
    static final class SetupRefused extends Exception {
        SetupRefused(String message) {
            super(message);
        }
    }

    /** The target did not do what the case needs to go on (a probe got no answer). */
    static final class CaseFailure extends Exception {
        CaseFailure(String message) {
            super(message);
        }
    }
}
