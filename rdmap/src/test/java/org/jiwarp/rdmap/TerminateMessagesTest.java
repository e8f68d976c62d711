package org.jiwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link TerminateMessages}: every {@link TerminateError} with each kind of offending ULPDU, read
 * back field by field with the wire-codecs accessors (RFC 5040 sections 4.8 and 5.6), and through
 * {@link TerminateMessages#read}.
 *
 * <p>Every buffer built here is released; the leak check of the wire-codecs test-jar fails the
 * class otherwise.
 */
class TerminateMessagesTest {

    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final int BODY = DdpHeaders.UNTAGGED_HEADER_LENGTH;

    private static final int STAG = 0x00_1234_56;
    private static final long TAGGED_OFFSET = 0x7F00_1122_3344_5500L;

    /** What caused the error, if anything. */
    enum Offending {
        NONE, WRITE, SEND, READ_REQUEST;

        /** The offending ULPDU, with {@code junk} octets before its reader index; {@code null} for NONE. */
        ByteBuf build(int junk) {
            if (this == NONE) {
                return null;
            }
            ByteBuf out = ALLOC.buffer();
            out.writeZero(junk);
            out.readerIndex(junk);
            switch (this) {
                case WRITE:
                    DdpHeaders.writeTagged(out, false, RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE), STAG,
                            TAGGED_OFFSET);
                    for (int i = 0; i < 300; i++) {
                        out.writeByte(i);
                    }
                    break;
                case SEND:
                    DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.SEND_WITH_INVALIDATE),
                            0x00AB_CD01, DdpHeaders.QN_SEND, 7, 1436);
                    for (int i = 0; i < 41; i++) {
                        out.writeByte(0xF0 ^ i);
                    }
                    break;
                case READ_REQUEST:
                    DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                            DdpHeaders.QN_READ_REQUEST, 3, 0);
                    ReadRequestHeader.write(out, 0x0000_4401, 0x1000_2000_3000_4000L, 0x0001_0000L, STAG,
                            TAGGED_OFFSET + 64);
                    break;
                default:
                    throw new AssertionError(this);
            }
            return out;
        }

        int ddpHeaderLength() {
            return this == WRITE ? DdpHeaders.TAGGED_HEADER_LENGTH : DdpHeaders.UNTAGGED_HEADER_LENGTH;
        }
    }

    static Stream<Arguments> everyErrorAndOffender() {
        List<Arguments> all = new ArrayList<>();
        for (TerminateError error : TerminateError.values()) {
            for (Offending offending : Offending.values()) {
                all.add(Arguments.of(error, offending));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} after {1}")
    @MethodSource("everyErrorAndOffender")
    void buildCarriesWhatTheRfcSays(TerminateError error, Offending offending) {
        long msn = 0x8000_0001L;
        // Junk before the reader index: the carried header must come from the reader index on.
        ByteBuf cause = offending.build(5);
        ByteBuf terminate = TerminateMessages.build(ALLOC, error, msn, cause);
        try {
            int at = terminate.readerIndex();
            // The Terminate's own DDP header (RFC 5040 section 4.8): untagged, L, QN 2, MSN, MO 0, opcode 7.
            assertFalse(DdpHeaders.tagged(terminate, at), "untagged");
            assertTrue(DdpHeaders.last(terminate, at), "L set");
            assertEquals(DdpHeaders.DDP_VERSION, DdpHeaders.version(terminate, at));
            assertEquals(0, DdpHeaders.reserved(terminate, at));
            assertEquals(RdmapHeaders.RDMAP_VERSION, RdmapHeaders.version(terminate, at));
            assertEquals(RdmapOpcode.TERMINATE, RdmapHeaders.opcode(terminate, at));
            assertEquals(0, RdmapHeaders.invalidateStag(terminate, at), "RsvdULP word");
            assertEquals(DdpHeaders.QN_TERMINATE, DdpHeaders.qn(terminate, at));
            assertEquals(msn, DdpHeaders.msn(terminate, at));
            assertEquals(0, DdpHeaders.mo(terminate, at));

            int body = at + BODY;
            assertEquals(error.layer().code(), TerminateHeader.layerCode(terminate, body), "layer");
            assertEquals(error.errorType(), TerminateHeader.errorType(terminate, body), "error type");
            assertEquals(error.errorCode(), TerminateHeader.errorCode(terminate, body), "error code");
            assertEquals(error, TerminateHeader.error(terminate, body));
            assertEquals(0, TerminateHeader.reserved(terminate, body), "reserved bits");
            assertFalse(TerminateHeader.looksLikeSiwLayout(terminate, body));

            boolean carriesDdp = offending != Offending.NONE && error.layer() != TerminateLayer.LLP;
            boolean carriesRead = carriesDdp && offending == Offending.READ_REQUEST
                    && error.layer() == TerminateLayer.RDMAP;
            int expectedHdrct = (carriesDdp ? TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D : 0)
                    | (carriesRead ? TerminateHeader.HDRCT_R : 0);
            assertEquals(expectedHdrct, TerminateHeader.hdrct(terminate, body), "HdrCt");
            int expectedLength = BODY + TerminateHeader.CONTROL_LENGTH;
            if (carriesDdp) {
                int headerLength = offending.ddpHeaderLength();
                assertEquals(cause.readableBytes(), TerminateHeader.ddpSegmentLength(terminate, body),
                        "DDP Segment Length = the offending ULPDU's length");
                assertEquals(headerLength, TerminateHeader.terminatedDdpHeaderLength(terminate, body));
                assertTrue(ByteBufUtil.equals(cause, cause.readerIndex(), terminate,
                        body + TerminateHeader.TERMINATED_DDP_HEADER_OFFSET, headerLength), "the exact DDP header");
                expectedLength += TerminateHeader.DDP_SEGMENT_LENGTH_LENGTH + headerLength;
            } else {
                assertEquals(0, TerminateHeader.terminatedDdpHeaderLength(terminate, body));
            }
            if (carriesRead) {
                int rdma = body + TerminateHeader.terminatedRdmaHeaderOffset(terminate, body);
                assertTrue(ByteBufUtil.equals(cause, cause.readerIndex() + DdpHeaders.UNTAGGED_HEADER_LENGTH,
                        terminate, rdma, ReadRequestHeader.LENGTH), "the exact Read Request header");
                assertEquals(STAG, ReadRequestHeader.sourceStag(terminate, rdma));
                assertEquals(TAGGED_OFFSET + 64, ReadRequestHeader.sourceTaggedOffset(terminate, rdma));
                expectedLength += ReadRequestHeader.LENGTH;
            }
            assertEquals(expectedLength, terminate.readableBytes(), "nothing after the carried headers");

            // read() names the same error and HdrCt.
            TerminateMessages.Received received = TerminateMessages.read(terminate);
            assertNotNull(received);
            assertEquals(error, received.error());
            assertEquals(error.layer().code(), received.layer());
            assertEquals(error.errorType(), received.errorType());
            assertEquals(error.errorCode(), received.errorCode());
            assertEquals(expectedHdrct, received.hdrct());
            assertFalse(received.siwLayout());
            assertEquals(error.describe(), received.describe());

            if (cause != null) {
                assertEquals(5, cause.readerIndex(), "the offending ULPDU's indices are untouched");
                assertEquals(1, cause.refCnt(), "build does not release the offending ULPDU");
            }
        } finally {
            terminate.release();
            if (cause != null) {
                cause.release();
            }
        }
    }

    @Test
    void anOffenderShorterThanItsDdpHeaderIsNotCarried() {
        // Two octets of a tagged header: D cannot be filled in, so nothing is carried.
        ByteBuf cause = ALLOC.buffer().writeByte(DdpHeaders.controlByte(true, true))
                .writeByte(RdmapHeaders.controlByte(RdmapOpcode.RDMA_WRITE));
        ByteBuf oneOctet = ALLOC.buffer().writeByte(DdpHeaders.controlByte(false, true));
        ByteBuf first = TerminateMessages.build(ALLOC, TerminateError.DDP_TAGGED_INVALID_STAG, 1, cause);
        ByteBuf second = TerminateMessages.build(ALLOC, TerminateError.RDMAP_UNEXPECTED_OPCODE, 1, oneOctet);
        try {
            for (ByteBuf terminate : List.of(first, second)) {
                assertEquals(0, TerminateHeader.hdrct(terminate, BODY));
                assertEquals(BODY + TerminateHeader.CONTROL_LENGTH, terminate.readableBytes());
            }
        } finally {
            first.release();
            second.release();
            cause.release();
            oneOctet.release();
        }
    }

    @Test
    void aReadRequestCutShortCarriesItsDdpHeaderOnly() {
        ByteBuf cause = ALLOC.buffer();
        DdpHeaders.writeUntagged(cause, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                DdpHeaders.QN_READ_REQUEST, 1, 0);
        cause.writeZero(ReadRequestHeader.LENGTH - 1);
        ByteBuf terminate = TerminateMessages.build(ALLOC, TerminateError.RDMAP_INVALID_STAG, 1, cause);
        try {
            assertEquals(TerminateHeader.HDRCT_M | TerminateHeader.HDRCT_D, TerminateHeader.hdrct(terminate, BODY));
            assertEquals(cause.readableBytes(), TerminateHeader.ddpSegmentLength(terminate, BODY));
        } finally {
            terminate.release();
            cause.release();
        }
    }

    @Test
    void readRecognisesSiwsSwappedLayout() {
        // A CRC error as Linux siw 6.1 sends it: 02 02 00 00.
        ByteBuf crc = terminateWithControl(0x02, 0x02, 0x00, 0x00);
        // A tagged bounds violation as siw sends it: 11 01 03 00 (M and D in the low bits of byte 2).
        ByteBuf bounds = terminateWithControl(0x11, 0x01, 0x03, 0x00);
        try {
            TerminateMessages.Received received = TerminateMessages.read(crc);
            assertNotNull(received);
            assertEquals(TerminateError.LLP_CRC_ERROR, received.error());
            assertTrue(received.siwLayout());
            assertEquals(TerminateError.LLP_CRC_ERROR.describe(), received.describe());

            received = TerminateMessages.read(bounds);
            assertNotNull(received);
            assertEquals(TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, received.error());
            assertTrue(received.siwLayout());
        } finally {
            crc.release();
            bounds.release();
        }
    }

    @Test
    void readNamesNoErrorForAnUndefinedTriple() {
        // Layer 3 exists in neither layout.
        ByteBuf unknown = terminateWithControl(0x33, 0x42, 0x00, 0x00);
        try {
            TerminateMessages.Received received = TerminateMessages.read(unknown);
            assertNotNull(received);
            assertNull(received.error());
            assertFalse(received.siwLayout());
            assertEquals(3, received.layer());
            assertEquals(3, received.errorType());
            assertEquals(0x42, received.errorCode());
            assertTrue(received.describe().contains("0x42"), received.describe());
        } finally {
            unknown.release();
        }
    }

    @Test
    void readOfATerminateWithoutItsControlWordIsNull() {
        ByteBuf headerOnly = ALLOC.buffer();
        DdpHeaders.writeUntagged(headerOnly, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, 1, 0);
        headerOnly.writeZero(TerminateHeader.CONTROL_LENGTH - 1);
        try {
            assertNull(TerminateMessages.read(headerOnly));
        } finally {
            headerOnly.release();
        }
    }

    @Test
    void readStartsAtTheReaderIndex() {
        ByteBuf terminate = TerminateMessages.build(ALLOC, TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, 9, null);
        ByteBuf shifted = Unpooled.buffer().writeZero(3).writeBytes(terminate);
        shifted.readerIndex(3);
        try {
            assertEquals(TerminateError.DDP_UNTAGGED_MESSAGE_TOO_LONG, TerminateMessages.read(shifted).error());
        } finally {
            terminate.release();
            shifted.release();
        }
    }

    /** An untagged Terminate header followed by the four given control-word octets. */
    private static ByteBuf terminateWithControl(int b0, int b1, int b2, int b3) {
        ByteBuf out = ALLOC.buffer();
        DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                DdpHeaders.QN_TERMINATE, 1, 0);
        out.writeByte(b0).writeByte(b1).writeByte(b2).writeByte(b3);
        return out;
    }
}
