package org.jiwarp.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.CrcPolicy;
import org.jiwarp.mpa.MarkerPolicy;
import org.jiwarp.mpa.MpaConnectRequest;
import org.jiwarp.mpa.MpaEstablishedEvent;
import org.jiwarp.mpa.MpaException;
import org.jiwarp.mpa.MpaInitiatorHandler;
import org.jiwarp.mpa.MpaParameters;
import org.jiwarp.mpa.MpaRejectedException;
import org.jiwarp.mpa.MpaResponderHandler;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.mpa.RtrType;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Fuzzes MPA connection setup (RFC 5044 section 7.1, RFC 6581) on an {@link EmbeddedChannel}: the
 * responder handler with any initiator octets and any application decision, and the initiator
 * handler with any responder octets, under fuzzed settings, TCP segmentation and timer expiry.
 *
 * <p>Invariants: only {@link MpaException}s come up; a setup that fails closes the connection;
 * at most one {@link MpaEstablishedEvent}; every frame jiwarp sends is a well-formed Request or
 * Reply (right key, reserved bits zero, private data within the limit, R exactly when it rejects,
 * the RFC 6581 words when enhanced) agreeing with the parameters it announces, followed only by
 * well-formed FPDUs; no leak. CI replays the seeds under {@code MpaSetupFuzzTestInputs/}; see
 * FUZZING.md.
 *
 * <p>Input: settings (4 octets, see {@link #settings}), a decision octet (bits 0-1: accept, accept
 * with IRD/ORD, reject, never decide; bit 2: let the setup timers expire; bit 3: close at the end;
 * bit 4: reply private data three times as long), the reply private data length, a segmentation
 * seed, then the peer's octets: a mode octet whose bit 0 asks for a frame built from fields (flags,
 * revision, private data length as sent or fuzzed, IRD/ORD words) and the rest raw.
 */
class MpaSetupFuzzTest {

    @FuzzTest(maxDuration = "20s")
    void responder(byte[] bytes) {
        FuzzInput in = new FuzzInput(bytes);
        MpaSettings settings = settings(in);
        int decision = in.u8();
        int replyDataLength = in.u8() * ((decision & 16) != 0 ? 3 : 1);
        int cutSeed = in.u8();
        byte[] peer = peerOctets(in, false);
        List<MpaConnectRequest> requests = new ArrayList<>();
        MpaResponderHandler handler = new MpaResponderHandler(settings, request -> {
            requests.add(request);
            byte[] data = new byte[replyDataLength];
            switch (decision & 3) {
                case 0:
                    request.accept(data);
                    break;
                case 1:
                    request.accept(data, replyDataLength & 0x1F, replyDataLength >>> 3 & 0x1F);
                    break;
                case 2:
                    request.reject(data);
                    break;
                default:
                    break; // the application never decides
            }
        });
        Up up = new Up();
        MockTicker clock = Ticker.newMockTicker();
        EmbeddedChannel channel = frozenClock(clock, handler, up);
        try {
            feed(channel, clock, peer, cutSeed, decision);
            byte[] out = outbound(channel);
            up.checkTypes();
            if (out.length == 0) {
                require(up.established == null, "established without sending a Reply");
                return;
            }
            Frame reply = Frame.parse(out, true);
            require(reply != null, "jiwarp's first octets are not a whole MPA Reply");
            reply.checkWellFormed(settings);
            require(reply.revision <= settings.revision(), "Reply revision above ours");
            if (up.established != null) {
                MpaParameters p = up.established.parameters();
                require(!reply.reject(), "established after a Reply with R");
                require(!p.initiator(), "responder parameters say initiator");
                require(p.crc() == reply.crc(), "CRC use differs from the Reply's C");
                require(p.markersFromPeer() == reply.marker(), "markers from the peer differ from the Reply's M");
                // The accepting queue pair's own IRD/ORD when it gave them, else the settings'.
                boolean own = (decision & 3) == 1;
                require(p.ird() <= (own ? replyDataLength & 0x1F : settings.ird())
                        && p.ord() <= (own ? replyDataLength >>> 3 & 0x1F : settings.ord()), "IRD/ORD above our own");
                require(p.enhanced() == reply.enhanced(), "enhanced differs from the Reply's S");
                if (reply.enhanced()) {
                    // RFC 6581 section 9.1: IRD at most the initiator's ORD, ORD at most its IRD.
                    Frame request = Frame.parse(peer, false);
                    require(request != null && p.ird() <= request.ord && p.ord() <= request.ird,
                            "IRD/ORD above what the initiator offered");
                    // 0x3FFF is answered with 0x3FFF, the local value unchanged (RFC 6581 section 9.1).
                    require(reply.ird == (request.ord == MpaEnhanced.VALUE_MASK ? MpaEnhanced.VALUE_MASK : p.ird())
                            && reply.ord == (request.ird == MpaEnhanced.VALUE_MASK ? MpaEnhanced.VALUE_MASK : p.ord()),
                            "the Reply's IRD/ORD differ from the parameters");
                    require(p.peerIrd() == request.ird && p.peerOrd() == request.ord, "the initiator's IRD/ORD for the ULP");
                    require(!p.peerToPeer() || reply.rtr.size() == 1 && reply.rtr.contains(p.rtr()),
                            "the Reply names other RTR frames than the one chosen");
                }
                checkFpdus(out, reply.length, p.crc(), p.markersToPeer());
            } else if (!reply.reject()) {
                // A local error answering (Reply private data over the limit): RFC 6581 section 9.3's
                // TERM 2/0/5 as the one FPDU after the Reply, then the close.
                require(hasSetupError(up, TerminateError.LLP_LOCAL_CATASTROPHIC), "a Reply without R but no full "
                        + "operation, and no local error");
                Frame request = Frame.parse(peer, false);
                require(request != null, "a Reply to no Request");
                requireTerm(out, reply.length, reply.crc(), request.marker(), TerminateError.LLP_LOCAL_CATASTROPHIC);
                require(!channel.isOpen(), "a failed setup leaves the connection open");
            } else {
                // No full operation: the only thing sent is a rejection, and the connection ends.
                require(reply.length == out.length, "octets after a rejecting Reply");
                require(!channel.isOpen(), "a rejection leaves the connection open");
            }
            if (!up.setupErrors.isEmpty()) {
                require(!channel.isOpen(), "a failed setup leaves the connection open");
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @FuzzTest(maxDuration = "20s")
    void initiator(byte[] bytes) {
        FuzzInput in = new FuzzInput(bytes);
        MpaSettings settings = settings(in);
        int decision = in.u8();
        int requestDataLength = Math.min(in.u8(),
                settings.privateDataLimit() - (settings.enhanced() ? MpaEnhanced.LENGTH : 0));
        int cutSeed = in.u8();
        byte[] peer = peerOctets(in, true);
        Up up = new Up();
        MockTicker clock = Ticker.newMockTicker();
        EmbeddedChannel channel = frozenClock(clock, new MpaInitiatorHandler(settings, new byte[requestDataLength]), up);
        try {
            feed(channel, clock, peer, cutSeed, decision);
            byte[] out = outbound(channel);
            up.checkTypes();
            Frame request = Frame.parse(out, false);
            require(request != null, "jiwarp's first octets are not a whole MPA Request");
            request.checkWellFormed(settings);
            require(request.revision == settings.revision(), "Request revision");
            require(request.marker() == (settings.markerPolicy() == MarkerPolicy.REQUEST), "Request M");
            require(request.crc() == (settings.crcPolicy() == CrcPolicy.REQUIRE), "Request C");
            require(request.enhanced() == settings.enhanced(), "Request S");
            require(request.privateDataLength == requestDataLength + (settings.enhanced() ? MpaEnhanced.LENGTH : 0),
                    "Request private data length");
            if (settings.enhanced()) {
                require(request.ird == settings.ird() && request.ord == settings.ord(), "Request IRD/ORD");
                require(request.peerToPeer == settings.peerToPeer(), "Request P");
                require(request.rtr.equals(settings.peerToPeer() ? settings.rtrOffers() : EnumSet.noneOf(RtrType.class)),
                        "Request RTR flags");
            }
            if (up.established != null) {
                MpaParameters p = up.established.parameters();
                Frame reply = Frame.parse(peer, true);
                require(reply != null && !reply.reject(), "established without an accepting Reply");
                require(p.initiator(), "initiator parameters say responder");
                require(p.crc() == (reply.crc() || request.crc()), "CRC use (RFC 5044 section 7.1)");
                require(p.markersToPeer() == reply.marker() && p.markersFromPeer() == request.marker(), "markers");
                if (settings.enhanced()) {
                    require(reply.enhanced() && reply.revision == MpaFrames.REVISION_2, "enhanced Request, plain Reply");
                    // RFC 6581 section 9.1: 0x3FFF asks for no automatic negotiation.
                    require(reply.ord == MpaEnhanced.VALUE_MASK || reply.ord <= settings.ird(),
                            "the responder's ORD exceeds our IRD");
                    require(p.ord() == (reply.ird == MpaEnhanced.VALUE_MASK ? settings.ord()
                            : Math.min(settings.ord(), reply.ird)) && p.ird() == settings.ird(), "IRD/ORD");
                    require(!p.peerToPeer() || settings.rtrOffers().contains(p.rtr()), "RTR not offered");
                }
                checkFpdus(out, request.length, p.crc(), p.markersToPeer());
            } else if (hasSetupError(up, TerminateError.LLP_INSUFFICIENT_IRD)
                    || hasSetupError(up, TerminateError.LLP_NO_MATCHING_RTR)) {
                // RFC 6581 sections 9.1 and 9.2: a valid Reply this end cannot go on with is answered
                // with TERM 2/0/6 or 2/0/7, the one FPDU after the Request.
                Frame reply = Frame.parse(peer, true);
                require(reply != null && !reply.reject(), "a TERM without an accepting Reply");
                TerminateError error = ((org.jiwarp.mpa.MpaException) up.setupErrors.get(0)).error();
                requireTerm(out, request.length, reply.crc() || request.crc(), reply.marker(), error);
            } else {
                require(request.length == out.length, "octets after the Request without full operation");
            }
            if (!up.setupErrors.isEmpty() && up.established == null) {
                require(!channel.isOpen(), "a failed setup leaves the connection open");
            }
            for (Throwable t : up.setupErrors) {
                if (t instanceof MpaRejectedException) {
                    Frame reply = Frame.parse(peer, true);
                    require(reply != null && reply.reject(), "rejected without a Reply with R");
                }
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Settings from 4 octets: a = bit 0 revision 1, bit 1 enhanced, bits 2-3 CRC policy, bits 4-5
     * marker policy, bit 6 peer-to-peer, bit 7 a private data limit below 512; b = RTR offers (bits
     * 0-2), then the limit; IRD; ORD.
     */
    private static MpaSettings settings(FuzzInput in) {
        int a = in.u8();
        int b = in.u8();
        int ird = in.u8();
        int ord = in.u8();
        boolean revision1 = (a & 1) != 0;
        boolean enhanced = !revision1 && (a & 2) != 0;
        boolean p2p = enhanced && (a & 64) != 0;
        Set<RtrType> offers = EnumSet.noneOf(RtrType.class);
        RtrType[] types = RtrType.values();
        for (int i = 0; i < types.length; i++) {
            if ((b >>> i & 1) != 0) {
                offers.add(types[i]);
            }
        }
        if (p2p && offers.isEmpty()) {
            offers.add(RtrType.WRITE);
        }
        int limit = (a & 128) != 0 ? MpaEnhanced.LENGTH + (b >>> 3) * 8 : MpaFrames.MAX_PRIVATE_DATA_LENGTH;
        return MpaSettings.builder()
                .revision(revision1 ? MpaFrames.REVISION_1 : MpaFrames.REVISION_2)
                .enhanced(enhanced)
                .crc(CrcPolicy.values()[(a >>> 2 & 3) % 3])
                .markers(MarkerPolicy.values()[(a >>> 4 & 3) % 3])
                .peerToPeer(p2p)
                .rtrOffers(offers)
                .privateDataLimit(limit)
                .ird(ird)
                .ord(ord)
                .requestTimeout(Duration.ofSeconds(5))
                .replyTimeout(Duration.ofSeconds(10))
                .build();
    }

    /** The peer's octets: an MPA frame built from fields (mode bit 0) and raw octets after it. */
    private static byte[] peerOctets(FuzzInput in, boolean reply) {
        int mode = in.u8();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if ((mode & 1) != 0) {
            int flags = in.u8();
            int revision = in.u8();
            int fuzzedLength = in.u16();
            ByteArrayOutputStream data = new ByteArrayOutputStream();
            if ((mode & 2) != 0) {
                data.writeBytes(in.bytes(MpaEnhanced.LENGTH)); // IRD and ORD words
            }
            data.writeBytes(in.bytes(in.u16() % 600));
            byte[] privateData = data.toByteArray();
            out.writeBytes(reply ? MpaFrames.replyKey() : MpaFrames.requestKey());
            out.write(flags);
            out.write(revision);
            int length = (mode & 4) != 0 ? fuzzedLength : privateData.length;
            out.write(length >>> 8);
            out.write(length);
            out.writeBytes(privateData);
        }
        out.writeBytes(in.rest());
        return out.toByteArray();
    }

    /**
     * A channel whose clock moves only when {@link #feed} moves it: the setup timers fire when the
     * input says so, never because an input took long in real time, so a finding replays the same.
     */
    private static EmbeddedChannel frozenClock(MockTicker clock, ChannelHandler... handlers) {
        return EmbeddedChannel.builder().ticker(clock).handlers(handlers).build();
    }

    /** Writes the peer's octets in cuts, runs what the handlers scheduled, maybe lets timers expire. */
    private static void feed(EmbeddedChannel channel, MockTicker clock, byte[] peer, int cutSeed, int decision) {
        int cut = (cutSeed & 0x7F) == 0 ? Integer.MAX_VALUE : cutSeed & 0x7F;
        for (int at = 0; at < peer.length && channel.isOpen(); at += cut) {
            channel.writeInbound(Unpooled.wrappedBuffer(peer, at, Math.min(cut, peer.length - at)));
            channel.runPendingTasks();
        }
        channel.runPendingTasks();
        if ((decision & 4) != 0) {
            clock.advance(11, TimeUnit.SECONDS);
            channel.runScheduledPendingTasks();
        }
        if ((decision & 8) != 0) {
            channel.close();
        }
        channel.runPendingTasks();
    }

    /** Everything the handlers wrote, in order. */
    private static byte[] outbound(EmbeddedChannel channel) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object msg = channel.readOutbound(); msg != null; msg = channel.readOutbound()) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                out.writeBytes(ByteBufUtil.getBytes(buf));
            } finally {
                buf.release();
            }
        }
        return out.toByteArray();
    }

    /** The octets after the setup frame are whole, valid FPDUs. */
    private static void checkFpdus(byte[] out, int from, boolean crc, boolean markers) {
        FpduReader reader = new FpduReader(markers);
        ByteBuf rest = Unpooled.wrappedBuffer(out, from, out.length - from);
        try {
            while (rest.isReadable()) {
                FpduReader.Frame frame = reader.read(rest);
                require(frame != null, "a partial FPDU after the setup frame");
                require(!crc || frame.crcGood(), "an FPDU with a bad CRC");
                require(!markers || frame.markersValid, "an FPDU with a bad marker");
            }
        } finally {
            rest.release();
        }
    }

    private static boolean hasSetupError(Up up, TerminateError error) {
        for (Throwable t : up.setupErrors) {
            if (t instanceof org.jiwarp.mpa.MpaException && ((org.jiwarp.mpa.MpaException) t).error() == error) {
                return true;
            }
        }
        return false;
    }

    /** {@code out} from {@code from} on is exactly one FPDU holding the TERM of {@code error}. */
    private static void requireTerm(byte[] out, int from, boolean crc, boolean markers, TerminateError error) {
        FpduReader reader = new FpduReader(markers);
        ByteBuf rest = Unpooled.wrappedBuffer(out, from, out.length - from);
        try {
            FpduReader.Frame frame = reader.read(rest);
            require(frame != null, "no TERM after the setup frame");
            require(!rest.isReadable(), "octets after the TERM");
            require(!crc || frame.crcGood(), "the TERM's CRC");
            require(org.jiwarp.conform.peer.TerminateCheck.problems(frame.ulpdu, error,
                    org.jiwarp.conform.peer.TerminateCheck.Carried.NOTHING, null).isEmpty(), "the TERM is not "
                    + error.describe() + ": " + org.jiwarp.conform.peer.TerminateCheck.describe(frame.ulpdu));
        } finally {
            rest.release();
        }
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** An MPA Request or Reply as read from octets. */
    private record Frame(int flags, int revision, int privateDataLength, int length, int ird, int ord,
            boolean peerToPeer, Set<RtrType> rtr) {

        static Frame parse(byte[] octets, boolean reply) {
            if (octets.length < MpaFrames.HEADER_LENGTH) {
                return null;
            }
            ByteBuf buf = Unpooled.wrappedBuffer(octets);
            try {
                if (reply ? !MpaFrames.isReply(buf, 0) : !MpaFrames.isRequest(buf, 0)) {
                    return null;
                }
                int length = MpaFrames.privateDataLength(buf, 0);
                if (octets.length < MpaFrames.HEADER_LENGTH + length) {
                    return null;
                }
                int flags = MpaFrames.flags(buf, 0);
                int ird = 0;
                int ord = 0;
                boolean p2p = false;
                Set<RtrType> rtr = EnumSet.noneOf(RtrType.class);
                if ((flags & MpaFrames.ENHANCED_FLAG) != 0 && length >= MpaEnhanced.LENGTH) {
                    int at = MpaFrames.PRIVATE_DATA_OFFSET;
                    ird = MpaEnhanced.ird(buf, at);
                    ord = MpaEnhanced.ord(buf, at);
                    p2p = MpaEnhanced.peerToPeer(buf, at);
                    if (MpaEnhanced.sendRtr(buf, at)) {
                        rtr.add(RtrType.SEND);
                    }
                    if (MpaEnhanced.writeRtr(buf, at)) {
                        rtr.add(RtrType.WRITE);
                    }
                    if (MpaEnhanced.readRtr(buf, at)) {
                        rtr.add(RtrType.READ);
                    }
                }
                return new Frame(flags, MpaFrames.revision(buf, 0), length, MpaFrames.HEADER_LENGTH + length, ird, ord,
                        p2p, rtr);
            } finally {
                buf.release();
            }
        }

        boolean marker() {
            return (flags & MpaFrames.MARKER_FLAG) != 0;
        }

        boolean crc() {
            return (flags & MpaFrames.CRC_FLAG) != 0;
        }

        boolean reject() {
            return (flags & MpaFrames.REJECT_FLAG) != 0;
        }

        boolean enhanced() {
            return (flags & MpaFrames.ENHANCED_FLAG) != 0;
        }

        /** RFC 5044 section 7.1.1, RFC 6581 section 9: what every frame jiwarp sends looks like. */
        void checkWellFormed(MpaSettings settings) {
            require(revision == MpaFrames.REVISION_1 || revision == MpaFrames.REVISION_2, "revision " + revision);
            int reserved = revision == MpaFrames.REVISION_2 ? MpaFrames.RESERVED_MASK : MpaFrames.RESERVED_MASK_RFC5044;
            require((flags & reserved) == 0, "reserved flag bits sent");
            require(privateDataLength <= settings.privateDataLimit(), "private data over the limit");
            require(!enhanced() || privateDataLength >= MpaEnhanced.LENGTH, "enhanced frame without IRD/ORD words");
            require(!enhanced() || settings.enhanced(), "enhanced frame from a plain endpoint");
        }
    }

    /** Records what comes up the pipeline and releases ULPDUs. */
    private static final class Up extends ChannelInboundHandlerAdapter {
        MpaEstablishedEvent established;
        final List<Throwable> setupErrors = new ArrayList<>();
        final List<Throwable> others = new ArrayList<>();
        int establishedEvents;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaEstablishedEvent) {
                established = (MpaEstablishedEvent) evt;
                establishedEvents++;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            io.netty.util.ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(cause instanceof MpaException)) {
                others.add(cause);
            } else if (established == null) {
                setupErrors.add(cause);
            }
        }

        void checkTypes() {
            require(others.isEmpty(), "an exception other than MpaException came up: " + others);
            require(establishedEvents <= 1, "established " + establishedEvents + " times");
        }
    }
}
