package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.mpa.MarkerPolicy;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * Runs catalogue cases against jiwarp targets, each with the same frame around it:
 *
 * <ol>
 *   <li>fresh regions on the target's arena, and a server queue pair prepared for the case;</li>
 *   <li>healthy traffic on another queue pair of the same RNIC for the whole case;</li>
 *   <li>the raw connection, MPA setup as the case says, the case's action and outcome;</li>
 *   <li>the healthy traffic checked, one more healthy round trip;</li>
 *   <li>the server queue pair down, every receive it had completed exactly once;</li>
 *   <li>every FPDU jiwarp sent well formed (CRC, markers);</li>
 *   <li>the arena unchanged outside what the case may write.</li>
 * </ol>
 */
final class CaseRunner implements AutoCloseable {

    private JiwarpTarget plain;
    private JiwarpTarget markers;
    private Rnic p2pInitiator;

    /** The target the default cases run against. */
    synchronized JiwarpTarget plain() {
        if (plain == null) {
            plain = new JiwarpTarget(JiwarpTarget.plainSettings());
        }
        return plain;
    }

    /** A target that asks its peers for markers (RFC 5044 section 7.1.1, M in the Reply). */
    synchronized JiwarpTarget markers() {
        if (markers == null) {
            markers = new JiwarpTarget(JiwarpTarget.plainSettings().toBuilder().markers(MarkerPolicy.REQUEST).build());
        }
        return markers;
    }

    /** An initiating RNIC that asks for peer-to-peer mode with a Write RTR (RFC 6581 section 9.2). */
    synchronized Rnic p2pInitiator() {
        if (p2pInitiator == null) {
            p2pInitiator = Rnic.open(RnicOptions.defaults().threads(1).mpa(MpaSettings.builder()
                    .replyTimeout(JiwarpTarget.REPLY_TIMEOUT).peerToPeer(true).rtrOffers(EnumSet.of(RtrType.WRITE))
                    .build()));
        }
        return p2pInitiator;
    }

    void run(AdversarialCase c) throws Exception {
        switch (c.kind()) {
            case INITIATOR:
                runInitiator(c);
                break;
            default:
                runResponder(c);
                break;
        }
    }

    private void runResponder(AdversarialCase c) throws Exception {
        JiwarpTarget target = c.spec().markersTarget() ? markers() : plain();
        HealthyPair healthy = target.healthy();
        CaseContext ctx = new CaseContext(c, target);
        try (JiwarpTarget.Regions regions = target.newRegions()) {
            ctx.regions = regions;
            ctx.served = target.expect(ctx.token(), regions, c.spec().receives(), c.spec().hold());
            HealthyPair.Traffic traffic = healthy.startTraffic();
            try {
                Socket socket = new Socket();
                if (c.spec().receiveBuffer() > 0) {
                    socket.setReceiveBufferSize(c.spec().receiveBuffer());
                }
                socket.connect(target.address(), 5000);
                ctx.peer = new RawConnection(socket);
                if (c.kind() == AdversarialCase.Kind.OPERATION && !c.spec().manual()) {
                    ctx.handshake(null, null);
                }
                c.action().run(ctx);
                c.outcome().verify(ctx);
                traffic.stopAndCheck();
            } finally {
                if (ctx.peer != null) {
                    ctx.peer.close();
                }
                target.forget(ctx.served);
            }
            healthy.roundTrip();
            checkReceivesCompletedOnce(ctx);
            assertEquals(List.of(), ctx.peer.problems(), "what jiwarp sent");
            target.checkArena(c.allowedWrites().apply(regions));
        }
    }

    /**
     * Once the queue pair is down, each receive it had completed exactly once: taken by the case
     * ({@link CaseContext#awaitReceive}, which checks its status), or else in flush or error, never
     * with a message the case did not look at.
     */
    private static void checkReceivesCompletedOnce(CaseContext ctx) throws Exception {
        if (!ctx.served.established.isDone() || ctx.served.established.isCompletedExceptionally()) {
            return; // never connected: the receives stay with the idle queue pair
        }
        ctx.served.qp.closeFuture().get(Outcome.WAIT_MILLIS, TimeUnit.MILLISECONDS);
        Map<Long, Integer> seen = new HashMap<>();
        for (long id : ctx.receivesTaken) {
            seen.merge(id, 1, Integer::sum);
        }
        List<String> delivered = new java.util.ArrayList<>();
        for (WorkCompletion wc = ctx.served.cq.take(0, TimeUnit.MILLISECONDS); wc != null;
                wc = ctx.served.cq.take(0, TimeUnit.MILLISECONDS)) {
            if (wc.opcode() == WcOpcode.RECEIVE || wc.opcode() == WcOpcode.RECEIVE_IMMEDIATE_DATA) {
                seen.merge(wc.workRequestId(), 1, Integer::sum);
                // A receive the case did not take was never given a message: flushed (or failed), not SUCCESS.
                if (wc.status() == WcStatus.SUCCESS) {
                    delivered.add(wc.toString());
                }
            }
        }
        assertEquals(List.of(), delivered, "receives completed with a message the case did not expect");
        Map<Long, Integer> expected = new HashMap<>();
        for (int i = 0; i < ctx.testCase.spec().receives(); i++) {
            expected.put(JiwarpTarget.FIRST_RECEIVE_ID + i, 1);
        }
        assertEquals(expected, seen, "every receive completes exactly once");
    }

    private void runInitiator(AdversarialCase c) throws Exception {
        JiwarpTarget target = plain();
        HealthyPair healthy = target.healthy();
        CaseContext ctx = new CaseContext(c, target);
        boolean p2p = c.spec().p2p() != null;
        Rnic initiator = p2p ? p2pInitiator() : target.clientRnic;
        HealthyPair.Traffic traffic = healthy.startTraffic();
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(10_000);
            ctx.clientCq = initiator.createCq(64);
            ctx.clientQp = initiator.createQp(new QpConfig(p2p ? initiator.allocatePd() : healthy.clientPd, ctx.clientCq,
                    ctx.clientCq).ird(JiwarpTarget.IRD).ord(JiwarpTarget.ORD));
            ctx.connect = initiator.connect(ctx.clientQp, (InetSocketAddress) server.getLocalSocketAddress(),
                    ctx.token().getBytes(StandardCharsets.US_ASCII));
            ctx.peer = new RawConnection(server.accept());
            ctx.mpaFrame = ctx.peer.readMpaFrame(Outcome.WAIT_MILLIS);
            c.action().run(ctx);
            c.outcome().verify(ctx);
            traffic.stopAndCheck();
        } finally {
            if (ctx.peer != null) {
                ctx.peer.close();
            }
        }
        healthy.roundTrip();
        if (ctx.peer != null) {
            assertEquals(List.of(), ctx.peer.problems(), "what jiwarp sent");
        }
        target.checkArena(List.of());
    }

    @Override
    public synchronized void close() {
        for (AutoCloseable closeable : new AutoCloseable[] {plain, markers, p2pInitiator}) {
            if (closeable != null) {
                try {
                    closeable.close();
                } catch (Exception ignored) {
                    // closing everything anyway
                }
            }
        }
    }
}
