package org.jiwarp.capture.decode;

import static org.jiwarp.capture.decode.WiresharkFormat.bool;
import static org.jiwarp.capture.decode.WiresharkFormat.bytes;
import static org.jiwarp.capture.decode.WiresharkFormat.dec;
import static org.jiwarp.capture.decode.WiresharkFormat.decUnsigned64;
import static org.jiwarp.capture.decode.WiresharkFormat.hex32;
import static org.jiwarp.capture.decode.WiresharkFormat.hex64;
import static org.jiwarp.capture.decode.WiresharkFormat.hex8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * Decodes the DDP and RDMAP headers of one ULPDU into Wireshark's {@code iwarp_ddp.*} and
 * {@code iwarp_rdma.*} fields, choosing the same fields Wireshark's dissector shows for each
 * opcode and Terminate layer, through the shared accessors of {@code wire.ddp} and
 * {@code wire.rdmap}.
 */
final class DdpRdmapFields {

    private DdpRdmapFields() {
    }

    /** Adds the fields to {@code pdu} and returns a one-line summary. */
    static String decode(byte[] ulpdu, DecodedPdu pdu) {
        ByteBuf buf = Unpooled.wrappedBuffer(ulpdu);
        if (ulpdu.length < 2) {
            pdu.problem("ULPDU of " + ulpdu.length + " octets holds no DDP header");
            return "ULPDU too short for DDP";
        }
        boolean tagged = DdpHeaders.tagged(buf, 0);
        boolean last = DdpHeaders.last(buf, 0);
        int opcodeCode = RdmapHeaders.opcodeCode(buf, 0);
        RdmapOpcode opcode = RdmapOpcode.valueOf(opcodeCode);
        pdu.put("iwarp_ddp.tagged_flag", bool(tagged));
        pdu.put("iwarp_ddp.last_flag", bool(last));
        pdu.put("iwarp_ddp.rsvd", hex8(DdpHeaders.reserved(buf, 0)));
        pdu.put("iwarp_ddp.dv", dec(DdpHeaders.version(buf, 0)));
        int headerLength = tagged ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH;
        if (!tagged && ulpdu.length >= 1 + DdpHeaders.UNTAGGED_RSVD_ULP_LENGTH) {
            pdu.put("iwarp_ddp.rsvdulp", bytes(ulpdu, DdpHeaders.RSVD_ULP_OFFSET, DdpHeaders.UNTAGGED_RSVD_ULP_LENGTH));
        }
        pdu.put("iwarp_rdma.version", dec(RdmapHeaders.version(buf, 0)));
        pdu.put("iwarp_rdma.rsv", hex8(RdmapHeaders.reserved(buf, 0)));
        pdu.put("iwarp_rdma.opcode", hex8(opcodeCode));
        if (DdpHeaders.version(buf, 0) != DdpHeaders.DDP_VERSION) {
            pdu.problem("DDP version " + DdpHeaders.version(buf, 0) + " (RFC 5041 section 4.1 requires 1)");
        }
        if (RdmapHeaders.version(buf, 0) != RdmapHeaders.RDMAP_VERSION) {
            pdu.problem("RDMAP version " + RdmapHeaders.version(buf, 0) + " (RFC 5040 section 4.2 requires 1)");
        }
        String name = opcode == null ? String.format("Reserved opcode 0x%x", opcodeCode) : opcode.displayName();
        StringBuilder summary = new StringBuilder(name);
        summary.append(last ? " [last DDP segment]" : " [more DDP segments]");
        if (ulpdu.length < headerLength) {
            pdu.problem("ULPDU of " + ulpdu.length + " octets is shorter than the " + headerLength
                    + "-octet DDP header");
            return summary.append(" (truncated)").toString();
        }
        if (!tagged) {
            if (opcodeCode == 1 || opcodeCode == 3 || opcodeCode == 5 || opcodeCode == 7) {
                pdu.put("iwarp_rdma.reserved", bytes(ulpdu, RdmapHeaders.INVALIDATE_STAG_OFFSET, 4));
            }
            if (opcode != null && opcode.invalidates()) {
                int stag = RdmapHeaders.invalidateStag(buf, 0);
                pdu.put("iwarp_rdma.inval_stag", Long.toString(stag & 0xFFFFFFFFL));
                summary.append(String.format(" inval_stag=0x%08x", stag));
            }
        }
        if (tagged) {
            int stag = DdpHeaders.stag(buf, 0);
            long to = DdpHeaders.taggedOffset(buf, 0);
            pdu.put("iwarp_ddp.stag", hex32(stag));
            pdu.put("iwarp_ddp.tagged_offset", hex64(to));
            summary.append(String.format(" STag=0x%08x TO=0x%x", stag, to));
        } else {
            long qn = DdpHeaders.qn(buf, 0);
            long msn = DdpHeaders.msn(buf, 0);
            long mo = DdpHeaders.mo(buf, 0);
            pdu.put("iwarp_ddp.qn", dec(qn));
            pdu.put("iwarp_ddp.msn", dec(msn));
            pdu.put("iwarp_ddp.mo", dec(mo));
            summary.append(" QN=").append(qn).append(" MSN=").append(msn).append(" MO=").append(mo);
        }
        int body = headerLength;
        if (opcode == RdmapOpcode.RDMA_READ_REQUEST && !tagged) {
            readRequest(buf, body, ulpdu.length, pdu, summary);
        } else if (opcode == RdmapOpcode.TERMINATE && !tagged) {
            terminate(buf, ulpdu, body, pdu, summary);
        } else if ((opcode == RdmapOpcode.ATOMIC_REQUEST || opcode == RdmapOpcode.ATOMIC_RESPONSE) && !tagged) {
            atomic(buf, body, ulpdu.length, opcode, pdu);
        } else {
            summary.append(" payload=").append(ulpdu.length - body);
        }
        return summary.toString();
    }

    private static void readRequest(ByteBuf buf, int at, int length, DecodedPdu pdu, StringBuilder summary) {
        if (length - at < ReadRequestHeader.LENGTH) {
            pdu.problem("Read Request header truncated");
            return;
        }
        pdu.put("iwarp_rdma.sinkstag", hex32(ReadRequestHeader.sinkStag(buf, at)));
        pdu.put("iwarp_rdma.sinkto", hex64(ReadRequestHeader.sinkTaggedOffset(buf, at)));
        pdu.put("iwarp_rdma.rdmardsz", dec(ReadRequestHeader.readSize(buf, at)));
        pdu.put("iwarp_rdma.srcstag", hex32(ReadRequestHeader.sourceStag(buf, at)));
        pdu.put("iwarp_rdma.srcto", hex64(ReadRequestHeader.sourceTaggedOffset(buf, at)));
        summary.append(String.format(" sink=0x%08x@0x%x size=%d source=0x%08x@0x%x",
                ReadRequestHeader.sinkStag(buf, at), ReadRequestHeader.sinkTaggedOffset(buf, at),
                ReadRequestHeader.readSize(buf, at), ReadRequestHeader.sourceStag(buf, at),
                ReadRequestHeader.sourceTaggedOffset(buf, at)));
    }

    private static void terminate(ByteBuf buf, byte[] ulpdu, int at, DecodedPdu pdu, StringBuilder summary) {
        int length = ulpdu.length;
        if (length - at < TerminateHeader.CONTROL_LENGTH) {
            pdu.problem("Terminate control field truncated");
            return;
        }
        int layer = TerminateHeader.layerCode(buf, at);
        int etype = TerminateHeader.errorType(buf, at);
        int code = TerminateHeader.errorCode(buf, at);
        pdu.put("iwarp_rdma.term_layer", hex8(layer));
        // Wireshark names the error type and code fields by layer (and, for DDP, by error type).
        switch (layer) {
            case 0:
                pdu.put("iwarp_rdma.term_etype_rdma", hex8(etype));
                pdu.put(etype != 0 ? "iwarp_rdma.term_errcode_rdma" : "iwarp_rdma.term_errcode", hex8(code));
                break;
            case 1:
                pdu.put("iwarp_rdma.term_etype_ddp", hex8(etype));
                pdu.put(etype == 1 ? "iwarp_rdma.term_errcode_ddp_tagged"
                        : etype == 2 ? "iwarp_rdma.term_errcode_ddp_untagged" : "iwarp_rdma.term_errcode", hex8(code));
                break;
            case 2:
                pdu.put("iwarp_rdma.term_etype_llp", hex8(etype));
                pdu.put(etype != 0 ? "iwarp_rdma.term_errcode" : "iwarp_rdma.term_errcode_llp", hex8(code));
                break;
            default:
                pdu.put("iwarp_rdma.term_etype", hex8(etype));
                pdu.put("iwarp_rdma.term_errcode", hex8(code));
                break;
        }
        pdu.put("iwarp_rdma.term_hdrct_m", bool(TerminateHeader.m(buf, at)));
        pdu.put("iwarp_rdma.hdrct_d", bool(TerminateHeader.d(buf, at)));
        pdu.put("iwarp_rdma.hdrct_r", bool(TerminateHeader.r(buf, at)));
        pdu.put("iwarp_rdma.term_rsvd", WiresharkFormat.hex16(TerminateHeader.reserved(buf, at)));
        TerminateError error = TerminateHeader.error(buf, at);
        pdu.terminateError(error);
        TerminateLayer named = TerminateLayer.valueOf(layer);
        summary.append(" ").append(named == null ? "layer " + layer : named.name()).append(" / ")
                .append(TerminateError.errorTypeName(layer, etype)).append(" / ")
                .append(error == null ? String.format("code 0x%02x", code) : error.rfcName());
        if (error == null) {
            pdu.problem(String.format("Terminate layer %d etype %d code 0x%02x names no RFC error", layer, etype, code));
            if (TerminateHeader.looksLikeSiwLayout(buf, at)) {
                pdu.problem("the control word reads correctly in Linux siw's bit layout (layer and etype swapped)");
            }
        }
        int next = at + TerminateHeader.CONTROL_LENGTH;
        if (TerminateHeader.d(buf, at)) {
            if (length - next < TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH + 1) {
                pdu.problem("Terminate DDP header truncated");
                return;
            }
            pdu.put("iwarp_rdma.term_ddp_seg_len", bytes(ulpdu, next, TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH));
            next += TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH;
            int ddpLength = DdpHeaders.headerLength(buf, next);
            if (length - next < ddpLength) {
                pdu.problem("Terminate DDP header truncated");
                return;
            }
            pdu.put("iwarp_rdma.term_ddp_h", bytes(ulpdu, next, ddpLength));
            next += ddpLength;
        }
        if (TerminateHeader.r(buf, at)) {
            if (length - next < ReadRequestHeader.LENGTH) {
                pdu.problem("Terminate RDMA header truncated");
                return;
            }
            pdu.put("iwarp_rdma.term_rdma_h", bytes(ulpdu, next, ReadRequestHeader.LENGTH));
        }
    }

    private static void atomic(ByteBuf buf, int at, int length, RdmapOpcode opcode, DecodedPdu pdu) {
        if (opcode == RdmapOpcode.ATOMIC_REQUEST) {
            if (length - at < 36) {
                pdu.problem("Atomic Request header truncated");
                return;
            }
            long word = buf.getUnsignedInt(at);
            int atomicOpcode = (int) (word & 0xF);
            pdu.put("iwarp_rdma.atomic.reserved", dec(word >>> 4));
            pdu.put("iwarp_rdma.atomic.opcode", dec(atomicOpcode));
            pdu.put("iwarp_rdma.atomic.request_identifier", dec(buf.getUnsignedInt(at + 4)));
            pdu.put("iwarp_rdma.atomic.remote_stag", dec(buf.getUnsignedInt(at + 8)));
            pdu.put("iwarp_rdma.atomic.remote_tagged_offset", decUnsigned64(buf.getLong(at + 12)));
            int next = at + 20;
            if (atomicOpcode == 0 && length - next >= 32) {
                pdu.put("iwarp_rdma.atomic.add_data", decUnsigned64(buf.getLong(next)));
                pdu.put("iwarp_rdma.atomic.add_mask", hex64(buf.getLong(next + 8)));
                next += 16;
            } else if (atomicOpcode == 2 && length - next >= 32) {
                pdu.put("iwarp_rdma.atomic.swap_data", decUnsigned64(buf.getLong(next)));
                pdu.put("iwarp_rdma.atomic.swap_mask", hex64(buf.getLong(next + 8)));
                next += 16;
            }
            if (length - next >= 16) {
                pdu.put("iwarp_rdma.atomic.compare_data", decUnsigned64(buf.getLong(next)));
                pdu.put("iwarp_rdma.atomic.compare_mask", hex64(buf.getLong(next + 8)));
            }
        } else {
            if (length - at < 12) {
                pdu.problem("Atomic Response header truncated");
                return;
            }
            pdu.put("iwarp_rdma.atomic.original_request_identifier", dec(buf.getUnsignedInt(at)));
            pdu.put("iwarp_rdma.atomic.original_remote_data_value", decUnsigned64(buf.getLong(at + 4)));
        }
    }
}
