package org.jiwarp.rdmap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * Builds and reads Terminate messages (RFC 5040 sections 4.8 and 5.6).
 *
 * <p>What a Terminate carries (HdrCt): for an LLP error (a damaged FPDU) nothing, since none of it
 * can be trusted; for a DDP or RDMAP error caused by a segment, the segment's DDP header with its
 * length (D and M); and when that segment was an RDMA Read Request refused at the RDMAP layer, its
 * Read Request header too (R).
 */
public final class TerminateMessages {

    private TerminateMessages() {
    }

    /**
     * The Terminate ULPDU for {@code error}, untagged on queue 2 with the given MSN.
     *
     * @param offending the ULPDU that caused the error (not released), or {@code null}
     */
    public static ByteBuf build(ByteBufAllocator alloc, TerminateError error, long msn, ByteBuf offending) {
        return build(alloc, error, msn, offending, offending == null ? 0 : offending.readableBytes());
    }

    /**
     * As {@link #build(ByteBufAllocator, TerminateError, long, ByteBuf)} for a segment of which only
     * the header has been read (a streamed one): {@code segmentLength} is the whole segment's length.
     */
    public static ByteBuf build(ByteBufAllocator alloc, TerminateError error, long msn, ByteBuf offending,
            int segmentLength) {
        ByteBuf out = alloc.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + TerminateHeader.length(
                TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_R, DdpHeaders.UNTAGGED_HEADER_LENGTH));
        // RFC 5040 section 4.8: Terminate is untagged on queue 2, with L set and MO 0.
        DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, msn, 0);
        ByteBuf ddpHeader = null;
        ByteBuf readRequest = null;
        int carriedLength = -1;
        if (offending != null && error.layer() != TerminateLayer.LLP && offending.readableBytes() >= 2) {
            int at = offending.readerIndex();
            int headerLength = DdpHeaders.headerLength(offending, at);
            if (offending.readableBytes() >= headerLength) {
                ddpHeader = offending.slice(at, headerLength);
                carriedLength = segmentLength;
                boolean readRequestRefused = error.layer() == TerminateLayer.RDMAP && !DdpHeaders.tagged(offending, at)
                        && RdmapHeaders.opcode(offending, at) == RdmapOpcode.RDMA_READ_REQUEST
                        && offending.readableBytes() >= headerLength + ReadRequestHeader.LENGTH;
                if (readRequestRefused) {
                    readRequest = offending.slice(at + headerLength, ReadRequestHeader.LENGTH);
                }
            }
        }
        TerminateHeader.write(out, error, carriedLength, ddpHeader, readRequest);
        return out;
    }

    /** What an inbound Terminate says. */
    public record Received(int layer, int errorType, int errorCode, TerminateError error, int hdrct,
            boolean siwLayout) {

        /** "LAYER / error type / error" with the RFC names, or the raw values when unnamed. */
        public String describe() {
            if (error != null) {
                return error.describe();
            }
            return String.format("layer %d / error type %d / code 0x%02x%s", layer, errorType, errorCode,
                    siwLayout ? " (reads as Linux siw's bit layout)" : "");
        }
    }

    /** Reads the Terminate body after the DDP header of {@code ulpdu}; {@code null} when too short. */
    public static Received read(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex() + DdpHeaders.UNTAGGED_HEADER_LENGTH;
        if (ulpdu.writerIndex() - at < TerminateHeader.CONTROL_LENGTH) {
            return null;
        }
        int layer = TerminateHeader.layerCode(ulpdu, at);
        int errorType = TerminateHeader.errorType(ulpdu, at);
        int code = TerminateHeader.errorCode(ulpdu, at);
        TerminateError error = TerminateError.valueOf(layer, errorType, code);
        boolean siw = TerminateHeader.looksLikeSiwLayout(ulpdu, at);
        if (siw) {
            // Linux siw 6.1 swaps the nibbles of byte 0; name the error it means.
            error = TerminateError.valueOf(errorType, layer, code);
        }
        return new Received(layer, errorType, code, error, TerminateHeader.hdrct(ulpdu, at), siw);
    }
}
