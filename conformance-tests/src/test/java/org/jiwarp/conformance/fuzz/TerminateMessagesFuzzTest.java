package org.jiwarp.conformance.fuzz;

import org.jiwarp.rnic.RemoteTerminate;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.jiwarp.wire.rdmap.TerminateLayer;

/**
 * Fuzzes {@link TerminateMessages} (RFC 5040 sections 4.8, 5.4): reading any octets as a Terminate
 * never throws and reports exactly the fields on the wire, and every Terminate jiwarp builds, for
 * any error and any offending segment, reads back as that error and carries what section 7.1 says.
 * CI replays the seeds under {@code TerminateMessagesFuzzTestInputs/}; see FUZZING.md.
 */
class TerminateMessagesFuzzTest {

    /** Input: an octet of leading garbage count (0-3), then the ULPDU. */
    @FuzzTest(maxDuration = "20s")
    void read(byte[] bytes) {
        FuzzInput in = new FuzzInput(bytes);
        int skip = in.u8() & 3;
        byte[] data = in.rest();
        ByteBuf ulpdu = Unpooled.wrappedBuffer(data);
        try {
            ulpdu.readerIndex(Math.min(skip, data.length));
            int start = ulpdu.readerIndex();
            TerminateMessages.Received received = TerminateMessages.read(ulpdu);
            require(ulpdu.readerIndex() == start, "read moved the reader index");
            int at = start + DdpHeaders.UNTAGGED_HEADER_LENGTH;
            if (data.length - at < TerminateHeader.CONTROL_LENGTH) {
                require(received == null, "a Terminate too short for its control field was read");
                return;
            }
            require(received != null, "a complete control field was not read");
            int byte0 = data[at] & 0xFF;
            require(received.layer() == byte0 >>> 4, "layer");
            require(received.errorType() == (byte0 & 0xF), "error type");
            require(received.errorCode() == (data[at + 1] & 0xFF), "error code");
            require(received.hdrct() == TerminateHeader.hdrct(ulpdu, at), "HdrCt");
            TerminateError named = received.siwLayout()
                    ? TerminateError.valueOf(byte0 & 0xF, byte0 >>> 4, data[at + 1] & 0xFF)
                    : TerminateError.valueOf(byte0 >>> 4, byte0 & 0xF, data[at + 1] & 0xFF);
            require(received.error() == named, "error " + received.error() + " vs " + named);
            if (received.siwLayout()) {
                require(TerminateError.valueOf(byte0 >>> 4, byte0 & 0xF, data[at + 1] & 0xFF) == null
                        || (data[at + 2] & 0x1F) != 0, "an RFC-valid control word was read as siw's layout");
            }
            require(received.describe() != null && !received.describe().isEmpty(), "describe");
        } finally {
            ulpdu.release();
        }
    }

    /**
     * Input: the error (an index into {@link TerminateError#values()}), the MSN (u32), a flag octet
     * (bit 0: no offending segment), then the offending segment.
     */
    @FuzzTest(maxDuration = "20s")
    void buildThenRead(byte[] bytes) {
        FuzzInput in = new FuzzInput(bytes);
        TerminateError[] errors = TerminateError.values();
        TerminateError error = errors[in.u8() % errors.length];
        long msn = in.u32();
        boolean none = (in.u8() & 1) != 0;
        byte[] offendingBytes = in.rest();
        ByteBuf offending = none ? null : Unpooled.wrappedBuffer(offendingBytes);
        ByteBuf terminate = TerminateMessages.build(ByteBufAllocator.DEFAULT, error, msn, offending);
        try {
            byte[] t = ByteBufUtil.getBytes(terminate);
            // RFC 5040 section 5.4: untagged, queue 2, L set, MO 0, RDMAP version 1, opcode Terminate.
            require(!DdpHeaders.tagged(terminate, 0) && DdpHeaders.last(terminate, 0), "untagged and last");
            require(DdpHeaders.version(terminate, 0) == DdpHeaders.DDP_VERSION, "DDP version");
            require(DdpHeaders.qn(terminate, 0) == DdpHeaders.QN_TERMINATE, "queue 2");
            require(DdpHeaders.msn(terminate, 0) == msn, "MSN");
            require(DdpHeaders.mo(terminate, 0) == 0, "MO 0");
            require(RdmapHeaders.version(terminate, 0) == RdmapHeaders.RDMAP_VERSION, "RDMAP version");
            require(RdmapHeaders.opcode(terminate, 0) == RdmapOpcode.TERMINATE, "opcode");
            TerminateMessages.Received received = TerminateMessages.read(terminate);
            require(received != null && received.error() == error && !received.siwLayout(),
                    "reads back as " + error + ": " + (received == null ? null : received.describe()));
            int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
            require(TerminateHeader.reserved(terminate, at) == 0, "reserved bits sent as zero");
            // RFC 5040 section 7.1: what the Terminate carries.
            boolean carriesDdp = !none && error.layer() != TerminateLayer.LLP && offendingBytes.length >= 2
                    && offendingBytes.length >= DdpHeaders.headerLength(offending, 0);
            require(TerminateHeader.d(terminate, at) == carriesDdp, "D");
            require(TerminateHeader.m(terminate, at) == carriesDdp, "M");
            int ddpLength = 0;
            if (carriesDdp) {
                ddpLength = DdpHeaders.headerLength(offending, 0);
                require(TerminateHeader.ddpSegmentLength(terminate, at) == (offendingBytes.length & 0xFFFF),
                        "DDP Segment Length");
                int header = at + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET;
                require(Arrays.equals(Arrays.copyOfRange(t, header, header + ddpLength),
                        Arrays.copyOf(offendingBytes, ddpLength)), "the offending DDP header is carried as sent");
            }
            boolean carriesRead = carriesDdp && error.layer() == TerminateLayer.RDMAP && !DdpHeaders.tagged(offending, 0)
                    && RdmapHeaders.opcode(offending, 0) == RdmapOpcode.RDMA_READ_REQUEST
                    && offendingBytes.length >= ddpLength + ReadRequestHeader.LENGTH;
            require(TerminateHeader.r(terminate, at) == carriesRead, "R");
            if (carriesRead) {
                int rdma = at + TerminateHeader.terminatedRdmaHeaderOffset(terminate, at);
                require(Arrays.equals(Arrays.copyOfRange(t, rdma, rdma + ReadRequestHeader.LENGTH),
                        Arrays.copyOfRange(offendingBytes, ddpLength, ddpLength + ReadRequestHeader.LENGTH)),
                        "the Read Request header is carried as sent");
            }
            int hdrct = (carriesDdp ? TerminateHeader.HDRCT_D | TerminateHeader.HDRCT_M : 0)
                    | (carriesRead ? TerminateHeader.HDRCT_R : 0);
            require(t.length == at + TerminateHeader.length(hdrct, ddpLength), "length " + t.length);
        } finally {
            terminate.release();
            if (offending != null) {
                offending.release();
            }
        }
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
