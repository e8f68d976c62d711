package org.jiwarp.capture.decode;

import static org.jiwarp.capture.decode.WiresharkFormat.dec;
import static org.jiwarp.capture.decode.WiresharkFormat.hex32;
import static org.jiwarp.capture.decode.WiresharkFormat.hex64;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * Decodes the RPC-over-RDMA version 1 transport header (RFC 8166 sections 4.2 and 4.3) that a Send
 * carries into Wireshark's {@code rpcordma.*} fields, after the DDP/RDMAP decode of a whole
 * capture.
 *
 * <p>Which Sends carry one is decided as Wireshark 4.0 decides it, by content: a Send or Send with
 * Invalidate (a Send with Solicited Event is not looked at) whose message, reassembled from its
 * DDP segments by MSN and message offset, holds a header of a known procedure; an RDMA_MSG (or
 * RDMA_MSGP) header must hold whole chunk lists followed by an RPC message with the same xid.
 * Headers of a version other than 1 are recognised but show no field. The connection's RFC 8797
 * private data is not required: captures that start mid-connection have none, and tshark does not
 * use it either. The fields go on the PDU carrying the message's last segment; of several messages
 * ending in one frame tshark shows the first only ({@link DecodedPdu#rpcRdmaUnshown()}).
 *
 * <p>This reads the header in place rather than through {@code rpcrdma}'s codec: the capture module
 * sits below the RNIC and must not depend on it, and a decoder that shows what is on the wire
 * (including what the codec would reject) is a different job from the requester's.
 */
public final class RpcRdmaFields {

    /** Every {@code rpcordma.*} field this writes, in Wireshark's dissection order. */
    public static final List<String> NAMES = List.of("rpcordma.xid", "rpcordma.version", "rpcordma.flow_control",
            "rpcordma.msg_type", "rpcordma.rdma_align", "rpcordma.rdma_thresh", "rpcordma.reads_count",
            "rpcordma.position", "rpcordma.writes_count", "rpcordma.segment_count", "rpcordma.reply_count",
            "rpcordma.rdma_handle", "rpcordma.rdma_length", "rpcordma.rdma_offset", "rpcordma.errcode",
            "rpcordma.vers_low", "rpcordma.vers_high");

    static final int RDMA_MSG = 0;
    static final int RDMA_NOMSG = 1;
    static final int RDMA_MSGP = 2;
    static final int RDMA_DONE = 3;
    static final int RDMA_ERROR = 4;
    static final int ERR_VERS = 1;
    private static final List<String> PROCEDURES = List.of("RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE",
            "RDMA_ERROR");

    private static final int FIXED_LENGTH = 16;
    private static final int READ_SEGMENT_LENGTH = 20;
    private static final int SEGMENT_LENGTH = 16;

    /** Send messages gathered so far, by conversation, sender and MSN. */
    private final Map<String, ByteArrayOutputStream> partial = new HashMap<>();
    private int lastShownFrame = -1;

    /** A decoder of the RPC-over-RDMA headers of one capture's PDUs, given in capture order. */
    RpcRdmaFields() {
    }

    /** Adds the header fields to the PDUs (in capture order) whose Send messages carry one. */
    static void decode(List<DecodedPdu> pdus) {
        RpcRdmaFields fields = new RpcRdmaFields();
        for (DecodedPdu pdu : pdus) {
            fields.add(pdu);
        }
    }

    /**
     * Adds the header fields to {@code pdu} when its Send message, gathered from this and earlier
     * PDUs, carries one. Memory: the Send messages still being gathered.
     */
    void add(DecodedPdu pdu) {
        byte[] ulpdu = pdu.octets();
        if (pdu.kind() != DecodedPdu.Kind.FPDU || ulpdu.length < DdpHeaders.UNTAGGED_HEADER_LENGTH) {
            return;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(ulpdu);
        RdmapOpcode opcode = RdmapOpcode.valueOf(RdmapHeaders.opcodeCode(buf, 0));
        if (DdpHeaders.tagged(buf, 0) || (opcode != RdmapOpcode.SEND && opcode != RdmapOpcode.SEND_WITH_INVALIDATE)) {
            return;
        }
        boolean last = DdpHeaders.last(buf, 0);
        long offset = DdpHeaders.mo(buf, 0);
        String message = pdu.conversation() + " " + pdu.source() + " " + DdpHeaders.msn(buf, 0);
        int payload = DdpHeaders.UNTAGGED_HEADER_LENGTH;
        byte[] whole;
        if (offset == 0 && last) {
            whole = Arrays.copyOfRange(ulpdu, payload, ulpdu.length);
        } else {
            ByteArrayOutputStream sofar = offset == 0 ? new ByteArrayOutputStream() : partial.get(message);
            if (sofar == null || sofar.size() != offset) {
                partial.remove(message);
                return;
            }
            sofar.write(ulpdu, payload, ulpdu.length - payload);
            if (!last) {
                partial.put(message, sofar);
                return;
            }
            partial.remove(message);
            whole = sofar.toByteArray();
        }
        if (isRpcOverRdma(whole)) {
            header(Unpooled.wrappedBuffer(whole), pdu);
            // Wireshark 4.0 shows the first RPC-over-RDMA message of a frame, no later one.
            pdu.rpcRdmaUnshown(pdu.frameNumber() == lastShownFrame);
            lastShownFrame = pdu.frameNumber();
        }
    }

    /** Wireshark's test: a known procedure; for RDMA_MSG/MSGP whole chunk lists and the RPC xid. */
    static boolean isRpcOverRdma(byte[] message) {
        if (message.length < FIXED_LENGTH) {
            return false;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(message);
        long procedure = buf.getUnsignedInt(12);
        if (procedure == RDMA_NOMSG || procedure == RDMA_DONE || procedure == RDMA_ERROR) {
            return true;
        }
        if (procedure != RDMA_MSG && procedure != RDMA_MSGP) {
            return false;
        }
        int lists = FIXED_LENGTH + (procedure == RDMA_MSGP ? 8 : 0);
        if (message.length < lists + 12) {
            return false;
        }
        int end = chunkListsEnd(buf, lists);
        return end > 0 && end + 4 <= message.length && buf.getInt(end) == buf.getInt(0);
    }

    /** Where the Read list, Write list and Reply chunk starting at {@code at} end, or -1 past the end. */
    private static int chunkListsEnd(ByteBuf buf, int at) {
        int limit = buf.capacity();
        at = listEnd(buf, at, entry -> entry + READ_SEGMENT_LENGTH);
        at = at < 0 ? -1 : listEnd(buf, at, entry -> segmentsEnd(buf, entry, limit));
        if (at < 0 || at + 4 > limit) {
            return -1;
        }
        boolean reply = buf.getInt(at) != 0;
        at += 4;
        return reply ? segmentsEnd(buf, at, limit) : at;
    }

    /** Where an XDR optional-data list ends (each entry a 1 then the entry, a 0 last), or -1 past the end. */
    private static int listEnd(ByteBuf buf, int at, IntUnaryOperator entryEnd) {
        while (at >= 0 && at + 4 <= buf.capacity()) {
            if (buf.getInt(at) == 0) {
                return at + 4;
            }
            at = entryEnd.applyAsInt(at + 4);
        }
        return -1;
    }

    private static int segmentsEnd(ByteBuf buf, int at, int limit) {
        if (at + 4 > limit) {
            return -1;
        }
        long end = at + 4 + buf.getUnsignedInt(at) * SEGMENT_LENGTH;
        return end > limit ? -1 : (int) end;
    }

    private static void header(ByteBuf buf, DecodedPdu pdu) {
        if (buf.getInt(4) != 1) {
            return;
        }
        pdu.append("rpcordma.xid", hex32(buf.getInt(0)));
        pdu.append("rpcordma.version", dec(buf.getUnsignedInt(4)));
        pdu.append("rpcordma.flow_control", dec(buf.getUnsignedInt(8)));
        long procedure = buf.getUnsignedInt(12);
        pdu.append("rpcordma.msg_type", dec(procedure));
        pdu.summary(pdu.summary() + String.format(" RPCoRDMA %s XID 0x%x", procedure < PROCEDURES.size()
                ? PROCEDURES.get((int) procedure) : "Unknown (" + procedure + ")", buf.getInt(0)));
        int at = FIXED_LENGTH;
        if (procedure == RDMA_MSGP) {
            pdu.append("rpcordma.rdma_align", dec(buf.getUnsignedInt(at)));
            pdu.append("rpcordma.rdma_thresh", dec(buf.getUnsignedInt(at + 4)));
            at += 8;
        }
        if (procedure == RDMA_MSG || procedure == RDMA_NOMSG || procedure == RDMA_MSGP) {
            chunkLists(buf, at, pdu);
        } else if (procedure == RDMA_ERROR && buf.capacity() >= at + 4) {
            long error = buf.getUnsignedInt(at);
            pdu.append("rpcordma.errcode", dec(error));
            if (error == ERR_VERS && buf.capacity() >= at + 12) {
                pdu.append("rpcordma.vers_low", dec(buf.getUnsignedInt(at + 4)));
                pdu.append("rpcordma.vers_high", dec(buf.getUnsignedInt(at + 8)));
            }
        }
    }

    /** The three lists as Wireshark shows them: each list's count, then its entries' fields. */
    private static void chunkLists(ByteBuf buf, int at, DecodedPdu pdu) {
        int end = chunkListsEnd(buf, at);
        if (end < 0) {
            pdu.problem("RPC-over-RDMA chunk lists run past the end of the Send");
            return;
        }
        int reads = 0;
        for (int i = at; buf.getInt(i) != 0; i += 4 + READ_SEGMENT_LENGTH) {
            reads++;
        }
        pdu.append("rpcordma.reads_count", dec(reads));
        while (buf.getInt(at) != 0) {
            pdu.append("rpcordma.position", dec(buf.getUnsignedInt(at + 4)));
            segment(buf, at + 8, pdu);
            at += 4 + READ_SEGMENT_LENGTH;
        }
        at += 4;
        int writes = 0;
        for (int i = at; buf.getInt(i) != 0; i = segmentsEnd(buf, i + 4, buf.capacity())) {
            writes++;
        }
        pdu.append("rpcordma.writes_count", dec(writes));
        while (buf.getInt(at) != 0) {
            at = chunk(buf, at + 4, pdu);
        }
        at += 4;
        boolean reply = buf.getInt(at) != 0;
        pdu.append("rpcordma.reply_count", dec(reply ? 1 : 0));
        if (reply) {
            chunk(buf, at + 4, pdu);
        }
    }

    /** A Write or Reply chunk: its segment count, then each segment; returns where it ends. */
    private static int chunk(ByteBuf buf, int at, DecodedPdu pdu) {
        long count = buf.getUnsignedInt(at);
        pdu.append("rpcordma.segment_count", dec(count));
        at += 4;
        for (long i = 0; i < count; i++) {
            segment(buf, at, pdu);
            at += SEGMENT_LENGTH;
        }
        return at;
    }

    private static void segment(ByteBuf buf, int at, DecodedPdu pdu) {
        pdu.append("rpcordma.rdma_handle", hex32(buf.getInt(at)));
        pdu.append("rpcordma.rdma_length", dec(buf.getUnsignedInt(at + 4)));
        pdu.append("rpcordma.rdma_offset", hex64(buf.getLong(at + 8)));
    }
}
