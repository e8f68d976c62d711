package org.jiwarp.conformance.soak;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Reads one direction of a proxied connection as its sender framed it, counts the messages it
 * carries, and damages it once where {@link FaultyProxy.Plan} says: the first FPDU, from the
 * {@code after}-th on, that the fault can hit. What goes on down the pipeline (to
 * {@link Resegmenter}) is the stream with the damage in it, each piece once every FPDU it holds
 * is whole, so that the damage is decided with the whole FPDU in hand.
 *
 * <pre>
 *   the stream:  | MPA Request or Reply (20 + private data) | FPDU | FPDU | ...   (no markers)
 *   an FPDU:     | ULPDU_LENGTH (2) | DDP/RDMAP header (14 tagged, 18 untagged) | payload | pad (0-3) | CRC (4) |
 * </pre>
 *
 * <p>One instance per direction of a connection, on that connection's event loop.
 */
final class FaultInjector extends ByteToMessageDecoder {

    /** What to do to the stream, and where in an FPDU. */
    enum Fault {
        /** Nothing (the stream is still re-segmented and delayed, as every stream is). */
        NONE,
        /** Flip one bit of one octet anywhere in an FPDU: length, headers, payload, pad or CRC. */
        FLIP,
        /** Flip one bit of the ULPDU_LENGTH field (RFC 5044 section 4.1). */
        FLIP_LENGTH,
        /** Flip one of the two DDP version bits (RFC 5041 section 4.1: DV is 1). */
        FLIP_DDP_VERSION,
        /** Flip one of the two RDMAP version bits (RFC 5040 section 4.1: RV is 1). */
        FLIP_RDMAP_VERSION,
        /** Flip one bit of a payload octet of a Send, an RDMA Write or a Read Response (64 octets or more). */
        FLIP_PAYLOAD,
        /** Flip one bit of the CRC field or of a pad octet. */
        FLIP_CRC_OR_PAD,
        /** Remove 1 to 16 octets from within an FPDU. */
        DROP,
        /** Remove one whole FPDU of an RDMA Write, one that is not the Write's last (L clear). */
        DROP_WRITE_SEGMENT,
        /** Close both legs of the connection after the first part of an FPDU has gone through. */
        CUT
    }

    /** Sent down the pipeline after the last octets a {@link Fault#CUT} lets through. */
    static final Object CUT_HERE = new Object() {
        @Override
        public String toString() {
            return "CUT_HERE";
        }
    };

    /** Messages whose last FPDU (L set) the sender has sent whole so far, by kind; written on one event loop. */
    static final class Ledger {
        private volatile long fpdus;
        private volatile long sends;
        private volatile long readRequests;
        private volatile long writes;
        private volatile long readResponses;

        Counts counts() {
            return new Counts(fpdus, sends, readRequests, writes, readResponses);
        }

        private void count(ByteBuf in, int fpdu) {
            int ddp = fpdu + Fpdu.HEADER_LENGTH;
            fpdus++;
            if (!DdpHeaders.last(in, ddp)) {
                return;
            }
            RdmapOpcode opcode = RdmapHeaders.opcode(in, ddp);
            if (DdpHeaders.tagged(in, ddp)) {
                if (opcode == RdmapOpcode.RDMA_WRITE) {
                    writes++;
                } else if (opcode == RdmapOpcode.RDMA_READ_RESPONSE) {
                    readResponses++;
                }
            } else if (DdpHeaders.qn(in, ddp) == DdpHeaders.QN_SEND) {
                sends++;
            } else if (DdpHeaders.qn(in, ddp) == DdpHeaders.QN_READ_REQUEST) {
                readRequests++;
            }
        }
    }

    /** A {@link Ledger}'s figures at one moment. */
    record Counts(long fpdus, long sends, long readRequests, long writes, long readResponses) {
    }

    /**
     * One fault as it was injected.
     *
     * @param connection     the connection's number, in the proxy's accept order
     * @param plan           the fault planned for the connection
     * @param toServer       whether it hit the client-to-server direction
     * @param fpdu           what the FPDU it hit was (its index in the direction, message, flags, lengths)
     * @param opcode         that FPDU's RDMAP opcode
     * @param tagged         whether that FPDU is a tagged DDP segment
     * @param offset         the octet of the FPDU (counted from its ULPDU_LENGTH field) the damage begins at
     * @param bit            the bit flipped (0 is the least significant), or -1
     * @param removed        the octets removed, or 0
     * @param before         the messages of this direction whose last FPDU went by whole before this FPDU
     * @param damagedPayload a flipped payload as it went on, for {@link Fault#FLIP_PAYLOAD}; else {@code null}
     */
    record Injection(int connection, FaultyProxy.Plan plan, boolean toServer, String fpdu, RdmapOpcode opcode,
            boolean tagged, int offset, int bit, int removed, Counts before, byte[] damagedPayload) {

        @Override
        public String toString() {
            return plan.fault() + " " + (toServer ? "client to server" : "server to client") + " at octet " + offset
                    + " of " + fpdu + (bit >= 0 ? ", bit " + bit : "") + (removed > 0 ? ", " + removed + " octets removed"
                    : "") + "; before it " + before;
        }
    }

    private final int connection;
    private final FaultyProxy.Plan plan;
    private final boolean toServer;
    private final Ledger ledger;
    private final Consumer<Injection> injected;
    private final SplittableRandom random;
    private boolean mpaFrameSeen;
    private boolean done;
    private boolean cut;

    /**
     * @param plan     the connection's fault; this instance applies it if it is for its direction
     * @param ledger   where this direction's messages are counted
     * @param injected told of the fault once it has been applied (on the event loop)
     */
    FaultInjector(int connection, FaultyProxy.Plan plan, boolean toServer, Ledger ledger, Consumer<Injection> injected) {
        this.connection = connection;
        this.plan = plan;
        this.toServer = toServer;
        this.ledger = ledger;
        this.injected = injected;
        this.random = new SplittableRandom(plan.seed() * 2 + (toServer ? 0 : 1));
        this.done = plan.fault() == Fault.NONE || plan.toServer() != toServer;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (cut) {
            in.skipBytes(in.readableBytes());
            return;
        }
        int at = in.readerIndex();
        int end = in.writerIndex();
        while (true) {
            if (!mpaFrameSeen) {
                if (end - at < MpaFrames.HEADER_LENGTH || end - at < MpaFrames.frameLength(in, at)) {
                    break;
                }
                at += MpaFrames.frameLength(in, at);
                mpaFrameSeen = true;
                continue;
            }
            if (end - at < Fpdu.HEADER_LENGTH) {
                break;
            }
            int length = Fpdu.length(Fpdu.ulpduLength(in, at));
            if (end - at < length) {
                break;
            }
            if (!done && ledger.fpdus >= plan.after() && hits(in, at, length)) {
                done = true;
                String fpdu = describe(in, at, length);
                Counts before = ledger.counts();
                ledger.count(in, at);
                if (damage(in, at, length, fpdu, before, out)) {
                    return; // cut: nothing after it goes through
                }
                // in's reader index is past the damage now; the FPDU's remaining octets go with the next piece
            } else {
                ledger.count(in, at);
            }
            at += length;
        }
        if (at > in.readerIndex()) {
            out.add(in.readRetainedSlice(at - in.readerIndex()));
        }
    }

    /** Whether the planned fault can hit the FPDU of {@code length} octets at {@code in[at]}. */
    private boolean hits(ByteBuf in, int at, int length) {
        int ddp = at + Fpdu.HEADER_LENGTH;
        RdmapOpcode opcode = RdmapHeaders.opcode(in, ddp);
        return switch (plan.fault()) {
            case FLIP_PAYLOAD -> (opcode == RdmapOpcode.SEND || opcode == RdmapOpcode.RDMA_WRITE
                    || opcode == RdmapOpcode.RDMA_READ_RESPONSE) && payloadLength(in, at) >= 64;
            case DROP_WRITE_SEGMENT -> opcode == RdmapOpcode.RDMA_WRITE && !DdpHeaders.last(in, ddp);
            default -> true;
        };
    }

    private static int payloadLength(ByteBuf in, int at) {
        return Fpdu.ulpduLength(in, at) - DdpHeaders.headerLength(in, at + Fpdu.HEADER_LENGTH);
    }

    /**
     * Applies the fault to the FPDU at {@code in[at]}: everything before it goes on unchanged, then
     * the FPDU damaged. Returns {@code true} for a cut, after which nothing more goes through.
     */
    private boolean damage(ByteBuf in, int at, int length, String fpdu, Counts before, List<Object> out) {
        int ddp = at + Fpdu.HEADER_LENGTH;
        int ulpduLength = Fpdu.ulpduLength(in, at);
        int payloadStart = Fpdu.HEADER_LENGTH + DdpHeaders.headerLength(in, ddp);
        RdmapOpcode opcode = RdmapHeaders.opcode(in, ddp);
        boolean tagged = DdpHeaders.tagged(in, ddp);
        int offset;
        int bit = -1;
        int removed = 0;
        switch (plan.fault()) {
            case FLIP -> offset = random.nextInt(length);
            case FLIP_LENGTH -> offset = random.nextInt(Fpdu.HEADER_LENGTH);
            case FLIP_DDP_VERSION -> {
                offset = Fpdu.HEADER_LENGTH + DdpHeaders.CONTROL_OFFSET;
                bit = random.nextInt(2); // DV is the control byte's low two bits
            }
            case FLIP_RDMAP_VERSION -> {
                offset = Fpdu.HEADER_LENGTH + RdmapHeaders.CONTROL_OFFSET;
                bit = 6 + random.nextInt(2); // RV is the RDMAP control byte's high two bits
            }
            case FLIP_PAYLOAD -> offset = payloadStart + random.nextInt(Fpdu.HEADER_LENGTH + ulpduLength - payloadStart);
            case FLIP_CRC_OR_PAD -> offset = Fpdu.HEADER_LENGTH + ulpduLength
                    + random.nextInt(length - Fpdu.HEADER_LENGTH - ulpduLength);
            case DROP -> {
                offset = random.nextInt(length);
                removed = Math.min(1 + random.nextInt(16), length - offset);
            }
            case DROP_WRITE_SEGMENT -> {
                offset = 0;
                removed = length;
            }
            case CUT -> offset = 1 + random.nextInt(length - 1);
            default -> throw new IllegalStateException(plan.fault().toString());
        }
        byte[] damagedPayload = null;
        if (removed == 0 && plan.fault() != Fault.CUT) {
            if (bit < 0) {
                bit = random.nextInt(8);
            }
            in.setByte(at + offset, in.getByte(at + offset) ^ 1 << bit);
            if (plan.fault() == Fault.FLIP_PAYLOAD) {
                damagedPayload = ByteBufUtil.getBytes(in, at + payloadStart, Fpdu.HEADER_LENGTH + ulpduLength - payloadStart);
            }
        }
        Injection injection = new Injection(connection, plan, toServer, fpdu, opcode, tagged, offset, bit, removed,
                before, damagedPayload);
        if (plan.fault() == Fault.CUT) {
            out.add(in.readRetainedSlice(at + offset - in.readerIndex()));
            out.add(CUT_HERE);
            in.skipBytes(in.readableBytes());
            cut = true;
        } else if (removed > 0) {
            if (at + offset > in.readerIndex()) {
                out.add(in.readRetainedSlice(at + offset - in.readerIndex()));
            }
            in.skipBytes(removed);
        }
        injected.accept(injection);
        return cut;
    }

    /** "FPDU 17 (RDMA Write, tagged, L=0, ULPDU 1454, 1460 octets)". */
    private String describe(ByteBuf in, int at, int length) {
        int ddp = at + Fpdu.HEADER_LENGTH;
        RdmapOpcode opcode = RdmapHeaders.opcode(in, ddp);
        return "FPDU " + ledger.fpdus + " (" + (opcode == null ? "opcode " + RdmapHeaders.opcodeCode(in, ddp)
                : opcode.displayName()) + (DdpHeaders.tagged(in, ddp) ? ", tagged" : ", untagged QN "
                + DdpHeaders.qn(in, ddp) + " MSN " + DdpHeaders.msn(in, ddp) + " MO " + DdpHeaders.mo(in, ddp))
                + ", L=" + (DdpHeaders.last(in, ddp) ? 1 : 0) + ", ULPDU " + Fpdu.ulpduLength(in, at) + ", " + length
                + " octets)";
    }
}
