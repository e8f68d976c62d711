package org.jiwarp.conformance.adversarial;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.RawConnection;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.conformance.fuzz.FuzzInput;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.RemoteTerminate;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes the RNIC receive path end to end: after a correct MPA handshake over loopback, the raw peer
 * sends fuzzed DDP/RDMAP segments (as valid FPDUs, so that they get past MPA) to a real jiwarp queue
 * pair whose protection domain holds the adversarial catalogue's regions, then a fence (a
 * zero-length Read), then FIN.
 *
 * <p>Invariants, per input: jiwarp either answers the fence or sends a Terminate; it never drops the
 * connection without one unless the peer sent a Terminate itself (an exception outside the
 * DDP/RDMAP error path would do that); a local catastrophic error only for a segment shorter than
 * its header; it sends only Read Responses and at most one Terminate, last, in well-formed FPDUs;
 * each posted receive completes exactly once; no octet of registered or guard memory changes
 * outside what a remote peer may write (the remote-write regions and the posted receive buffers);
 * and the RNIC's other connection keeps working. CI replays the seeds under
 * {@code RnicReceiveFuzzTestInputs/segments/}; see FUZZING.md for the input layout and how to fuzz.
 */
class RnicReceiveFuzzTest {

    private static final int RECEIVES = 4;
    private static final int MAX_OPS = 24;
    private static final int FENCE_STAG = 0x0FE1_CE01;
    private static final long FENCE_TO = 0xF00D;
    private static final long WAIT_MILLIS = 5000;
    private static final AtomicLong INPUTS = new AtomicLong();
    private static final Set<TerminateError> CATASTROPHIC = EnumSet.of(TerminateError.DDP_LOCAL_CATASTROPHIC,
            TerminateError.RDMAP_LOCAL_CATASTROPHIC, TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM,
            TerminateError.RDMAP_CATASTROPHIC_GLOBAL, TerminateError.LLP_LOCAL_CATASTROPHIC);
    private static JiwarpTarget target;

    private static synchronized JiwarpTarget target() {
        if (target == null) {
            target = new JiwarpTarget(JiwarpTarget.plainSettings());
        }
        return target;
    }

    @AfterAll
    static synchronized void close() {
        if (target != null) {
            target.close();
            target = null;
        }
    }

    /**
     * Input: an options octet (bit 0: ask for CRCs), then up to 24 operations, each an opcode octet
     * whose low 3 bits pick the segment (Write, Send family, Read Request, Read Response,
     * Terminate, raw untagged header, raw tagged header, raw octets), whose bits 3-6 are flags and
     * whose bit 7 flips one octet of the segment, followed by that segment's fields.
     */
    @FuzzTest(maxDuration = "20s")
    void segments(byte[] bytes) throws Exception {
        // Jazzer's SSRF detector refuses connections unless allowed: here only loopback ones.
        try (SilentCloseable loopbackOnly = BugDetectors.allowNetworkConnections(
                (host, port) -> host.equals("localhost") || host.startsWith("127."))) {
            run(bytes);
        }
    }

    private static void run(byte[] bytes) throws Exception {
        JiwarpTarget target = target();
        HealthyPair healthy = target.healthy();
        FuzzInput in = new FuzzInput(bytes);
        boolean crc = (in.u8() & 1) != 0;
        String token = "fuzz-" + INPUTS.incrementAndGet();
        try (JiwarpTarget.Regions regions = target.newRegions()) {
            JiwarpTarget.Served served = target.expect(token, regions, RECEIVES, false);
            Segments segments = new Segments(regions);
            RawConnection peer = null;
            try {
                Socket socket = new Socket();
                socket.connect(target.address(), 5000);
                peer = new RawConnection(socket);
                handshake(peer, served, crc, token);
                for (int op = 0; op < MAX_OPS && !in.exhausted(); op++) {
                    byte[] ulpdu = segments.next(in);
                    try {
                        peer.send(ulpdu);
                    } catch (IOException closedByJiwarp) {
                        break;
                    }
                }
                fence(peer, segments);
                try {
                    peer.shutdownOutput();
                } catch (IOException alreadyClosed) {
                    // jiwarp closed first
                }
                served.qp.closeFuture().get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
                require(peer.awaitClosed(WAIT_MILLIS), "jiwarp did not close after the peer's FIN");
                checkWhatJiwarpSent(peer, segments);
            } finally {
                if (peer != null) {
                    peer.close();
                }
                target.forget(served);
            }
            checkReceivesCompletedOnce(served);
            target.checkArena(List.of(regions.inWrite(0, JiwarpTarget.WRITE_LENGTH),
                    new JiwarpTarget.Range(JiwarpTarget.WRITE_ONLY_OFFSET, JiwarpTarget.REGION_LENGTH),
                    new JiwarpTarget.Range(JiwarpTarget.SHARED_OFFSET, JiwarpTarget.REGION_LENGTH),
                    regions.inReceive(0, RECEIVES * JiwarpTarget.RECEIVE_SIZE)));
        }
        if (INPUTS.get() % 32 == 1) {
            healthy.roundTrip();
        }
    }

    private static void handshake(RawConnection peer, JiwarpTarget.Served served, boolean crc, String token)
            throws Exception {
        peer.write(MpaBytes.request(crc, false, JiwarpTarget.IRD, token.getBytes(StandardCharsets.US_ASCII)).bytes());
        MpaBytes.Parsed reply = peer.readMpaFrame(WAIT_MILLIS);
        require(!reply.reject(), "jiwarp rejected a good Request");
        peer.startFullOperation(crc || reply.crc(), reply.marker(), false);
        served.awaitEstablished();
    }

    /**
     * A zero-length Read with the next Read Request MSN: everything before it has been handled once
     * its Read Response is back. If instead jiwarp terminated or closed, that must be explained.
     */
    private static void fence(RawConnection peer, Segments segments) throws Exception {
        try {
            // Zero-length, from a valid region: jiwarp checks even a zero-length Read's source STag.
            peer.send(Ulpdus.readRequest(segments.nextMsn[1], FENCE_STAG, FENCE_TO, 0, segments.regions.readOnly.stag(),
                    segments.regions.readOnly.address()));
        } catch (IOException closedByJiwarp) {
            // judged below
        }
        byte[] answer = peer.await(u -> Ulpdus.isTerminate(u) || isFenceResponse(u), WAIT_MILLIS);
        if (answer == null) {
            require(peer.awaitClosed(0), "jiwarp neither answered the fence nor terminated within 5 s: "
                    + peer.describe());
            require(segments.peerTerminated, "jiwarp closed the connection without a Terminate (an exception "
                    + "outside the DDP/RDMAP error path?): " + peer.describe());
        }
    }

    private static boolean isFenceResponse(byte[] ulpdu) {
        if (!Ulpdus.isTagged(ulpdu, RdmapOpcode.RDMA_READ_RESPONSE)) {
            return false;
        }
        ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
        try {
            return DdpHeaders.stag(b, 0) == FENCE_STAG && DdpHeaders.taggedOffset(b, 0) == FENCE_TO;
        } finally {
            b.release();
        }
    }

    private static void checkWhatJiwarpSent(RawConnection peer, Segments segments) {
        require(peer.problems().isEmpty(), "jiwarp sent malformed FPDUs: " + peer.problems());
        List<byte[]> received = peer.received();
        for (int i = 0; i < received.size(); i++) {
            byte[] ulpdu = received.get(i);
            if (Ulpdus.isTerminate(ulpdu)) {
                require(i == received.size() - 1, "the Terminate is not the last message: " + peer.describe());
                ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
                try {
                    TerminateMessages.Received t = TerminateMessages.read(b);
                    require(t != null && t.error() != null, "jiwarp sent a Terminate with an unnamed error");
                    // jiwarp reports a segment shorter than its header as DDP local catastrophic; any
                    // other catastrophic error would be jiwarp failing itself.
                    require(!CATASTROPHIC.contains(t.error()) || t.error() == TerminateError.DDP_LOCAL_CATASTROPHIC
                            && segments.shortSegment, "jiwarp reported " + t.error().describe());
                } finally {
                    b.release();
                }
            } else {
                require(Ulpdus.isTagged(ulpdu, RdmapOpcode.RDMA_READ_RESPONSE),
                        "jiwarp sent something other than a Read Response or a Terminate: " + peer.describe());
            }
        }
    }

    private static void checkReceivesCompletedOnce(JiwarpTarget.Served served) throws InterruptedException {
        Map<Long, Integer> seen = new HashMap<>();
        for (WorkCompletion wc = served.cq.take(0, TimeUnit.MILLISECONDS); wc != null;
                wc = served.cq.take(0, TimeUnit.MILLISECONDS)) {
            require(wc.opcode() == WcOpcode.RECEIVE, "an unexpected completion " + wc);
            seen.merge(wc.workRequestId(), 1, Integer::sum);
        }
        Map<Long, Integer> expected = new HashMap<>();
        for (int i = 0; i < RECEIVES; i++) {
            expected.put(JiwarpTarget.FIRST_RECEIVE_ID + i, 1);
        }
        require(expected.equals(seen), "every receive completes exactly once: " + seen);
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Builds the fuzzed segments, tracking the MSNs of well-formed untagged messages. */
    private static final class Segments {
        private static final RdmapOpcode[] SENDS = {RdmapOpcode.SEND, RdmapOpcode.SEND_WITH_INVALIDATE,
            RdmapOpcode.SEND_WITH_SE, RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE};

        private final JiwarpTarget.Regions regions;
        /** The next MSN of queues 0 and 1 if every message so far was accepted. */
        final long[] nextMsn = {1, 1};
        boolean shortSegment;
        boolean peerTerminated;

        Segments(JiwarpTarget.Regions regions) {
            this.regions = regions;
        }

        byte[] next(FuzzInput in) {
            int op = in.u8();
            int flags = op >>> 3 & 0xF;
            boolean last = (flags & 1) == 0;
            byte[] ulpdu;
            switch (op & 7) {
                case 0: { // RDMA Write
                    long[] target = target(in);
                    ulpdu = Ulpdus.tagged(last ? Ulpdus.TAGGED_LAST : Ulpdus.TAGGED_MORE,
                            Ulpdus.rdmap(RdmapOpcode.RDMA_WRITE), (int) target[0], target[1], in.u16() % 1200);
                    break;
                }
                case 1: { // Send, Send with Invalidate, with SE, with SE and Invalidate
                    RdmapOpcode opcode = SENDS[flags >>> 1 & 3];
                    long msn = (flags & 8) != 0 ? in.u32() : nextMsn[0];
                    long mo = (flags & 8) != 0 ? in.u16() : 0;
                    int stag = (int) target(in)[0];
                    int length = in.u8() % 96;
                    ulpdu = Ulpdus.untagged(last ? Ulpdus.UNTAGGED_LAST : Ulpdus.UNTAGGED_MORE, Ulpdus.rdmap(opcode),
                            stag, DdpHeaders.QN_SEND, msn, mo, length);
                    if (last && msn == nextMsn[0]) {
                        nextMsn[0]++;
                    }
                    break;
                }
                case 2: { // RDMA Read Request
                    long msn = (flags & 8) != 0 ? in.u32() : nextMsn[1];
                    long[] source = target(in);
                    long size = (flags & 4) != 0 ? in.u32() : in.u16() % 9000;
                    ulpdu = Ulpdus.readRequest(last ? Ulpdus.UNTAGGED_LAST : Ulpdus.UNTAGGED_MORE,
                            Ulpdus.rdmap(RdmapOpcode.RDMA_READ_REQUEST), DdpHeaders.QN_READ_REQUEST, msn, 0,
                            (int) in.u32(), in.u64(), size, (int) source[0], source[1]);
                    if (last && msn == nextMsn[1]) {
                        nextMsn[1]++;
                    }
                    break;
                }
                case 3: { // RDMA Read Response (none is outstanding)
                    long[] target = target(in);
                    ulpdu = Ulpdus.readResponse((int) target[0], target[1], in.u16() % 1200, last);
                    break;
                }
                case 4: { // Terminate
                    long qn = (flags & 2) != 0 ? in.u32() : DdpHeaders.QN_TERMINATE;
                    ulpdu = Ulpdus.terminate(last ? Ulpdus.UNTAGGED_LAST : Ulpdus.UNTAGGED_MORE, qn, in.u32(),
                            (flags & 4) != 0 ? in.u16() : 0, (int) in.u32(), in.bytes(in.u8() % 64));
                    break;
                }
                case 5: // an untagged header with every field fuzzed
                    ulpdu = Ulpdus.untagged(in.u8(), in.u8(), (int) in.u32(), in.u32(), in.u32(), in.u32(),
                            in.u8() % 96);
                    break;
                case 6: { // a tagged header with every field fuzzed
                    int control = in.u8();
                    int rdmapControl = in.u8();
                    long[] target = target(in);
                    ulpdu = Ulpdus.tagged(control, rdmapControl, (int) target[0], target[1], in.u8() * 4);
                    break;
                }
                default: // raw octets
                    ulpdu = in.bytes(in.u8());
                    break;
            }
            if ((op & 0x80) != 0 && ulpdu.length > 0) {
                int at = in.u8() % ulpdu.length;
                ulpdu[at] ^= (byte) (in.u8() | 1);
            }
            note(ulpdu);
            return ulpdu;
        }

        /** Records a segment shorter than its header, and any Terminate the peer sends. */
        private void note(byte[] ulpdu) {
            if (ulpdu.length < 2) {
                shortSegment = true;
                return;
            }
            ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
            try {
                if (ulpdu.length < DdpHeaders.headerLength(b, 0)) {
                    shortSegment = true;
                } else if (ulpdu.length >= DdpHeaders.TAGGED_HEADER_LENGTH
                        && (b.getByte(1) & 0x0F) == RdmapOpcode.TERMINATE.code()) {
                    peerTerminated = true;
                }
            } finally {
                b.release();
            }
        }

        /**
         * An STag and Tagged Offset: a selector octet picks one of the case regions (or an unknown or
         * raw STag), a mode octet an offset near its start, near its end, or raw.
         */
        private long[] target(FuzzInput in) {
            int selector = in.u8();
            MemoryRegion[] choices = {regions.write, regions.readOnly, regions.writeOnly, regions.receive,
                regions.foreign, regions.invalidated, regions.shared, regions.sink};
            long stag;
            long base;
            long length = JiwarpTarget.REGION_LENGTH;
            if (selector < choices.length) {
                stag = choices[selector].stag();
                base = choices[selector].address();
                length = choices[selector].length();
            } else if (selector == choices.length) {
                stag = regions.deregisteredStag;
                base = regions.deregisteredAddress;
            } else if (selector == choices.length + 1) {
                stag = AdversarialCatalogue.UNKNOWN_STAG;
                base = 0;
            } else {
                stag = in.u32();
                base = 0;
            }
            int mode = in.u8();
            long offset;
            if (mode < 160) {
                offset = base + in.u16() % 2048 - 64;
            } else if (mode < 240) {
                offset = base + length - in.u16() % 2048;
            } else {
                offset = in.u64();
            }
            return new long[] {stag & 0xFFFF_FFFFL, offset};
        }
    }
}
