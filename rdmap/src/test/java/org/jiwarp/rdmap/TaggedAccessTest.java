package org.jiwarp.rdmap;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import org.jiwarp.ddp.Access;
import org.jiwarp.ddp.StagTable;
import org.jiwarp.ddp.TaggedBuffer;
import org.jiwarp.ddp.TaggedPlacement;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TaggedAccessTest {

    private static final int PD = 3;
    private static final int OTHER_PD = 4;
    private static final long BASE = 0x7000_0000_1000L;
    private static final int LENGTH = 64;
    private static final int GUARD = 16;
    private static final byte GUARD_BYTE = (byte) 0xA5;

    private final StagTable table = new StagTable(64);
    /** GUARD octets, the region's LENGTH octets, GUARD octets. */
    private final ByteBuf backing = Unpooled.buffer(GUARD + LENGTH + GUARD);
    private final ByteBuf region = backing.slice(GUARD, LENGTH);

    TaggedAccessTest() {
        for (int i = 0; i < backing.capacity(); i++) {
            backing.setByte(i, GUARD_BYTE);
        }
    }

    @AfterEach
    void release() {
        backing.release();
    }

    private TaggedBuffer register(int access) {
        return table.register(PD, region, BASE, LENGTH, access);
    }

    // ---------------------------------------------------------------------------------------------
    // Sink (inbound RDMA Write and Read Response): DDP tagged buffer errors, access at RDMAP

    @Test
    void sinkAcceptsASegmentInside() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        assertSame(sink, TaggedAccess.checkSink(table, sink.stag(), BASE + 8, 16, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkUnknownStag() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, sink.stag() + (1 << 8), BASE, 1, PD, Access.REMOTE_WRITE));
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, 0, BASE, 1, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkStaleKey() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        table.deregister(sink.stag());
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 1, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkInvalidatedStag() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        table.invalidate(sink.stag());
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 1, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkOtherProtectionDomain() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.DDP, 1, 0x02, TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 1, OTHER_PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkMissingAccessIsAnRdmapRemoteProtectionError() {
        TaggedBuffer sink = register(Access.LOCAL_WRITE | Access.REMOTE_READ);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 1, PD, Access.REMOTE_WRITE));
        TaggedBuffer readSink = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSink(table, readSink.stag(), BASE, 1, PD, Access.LOCAL_WRITE));
        TaggedBuffer localSink = register(Access.LOCAL_WRITE);
        assertSame(localSink, TaggedAccess.checkSink(table, localSink.stag(), BASE, 1, PD, Access.LOCAL_WRITE),
                "a Read Response needs local write only");
    }

    @Test
    void sinkToWrap() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.DDP, 1, 0x03, TerminateError.DDP_TAGGED_TO_WRAP,
                () -> TaggedAccess.checkSink(table, sink.stag(), -1L, 2, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkBaseOrBounds() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.DDP, 1, 0x01, TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE + LENGTH, 1, PD, Access.REMOTE_WRITE));
    }

    @Test
    void sinkBoundsEdges() {
        int stag = register(Access.REMOTE_WRITE).stag();
        TaggedAccess.checkSink(table, stag, BASE, LENGTH, PD, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, stag, BASE + LENGTH - 1, 1, PD, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, stag, BASE, 1, PD, Access.REMOTE_WRITE);
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE + LENGTH, 1, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE - 1, 1, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE - 1, 2, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE, LENGTH + 1, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE + LENGTH - 1, 2, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, 0, 1, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE + (1L << 32), 1, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, BASE, Integer.MAX_VALUE, PD,
                Access.REMOTE_WRITE));
    }

    @Test
    void zeroLengthSegmentsAreCheckedToo() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, sink.stag(), BASE, 0, PD, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, sink.stag(), BASE + LENGTH, 0, PD, Access.REMOTE_WRITE);
        assertBounds(() -> TaggedAccess.checkSink(table, sink.stag(), BASE + LENGTH + 1, 0, PD,
                Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, sink.stag(), BASE - 1, 0, PD, Access.REMOTE_WRITE));
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, 1, 0, 0, PD, Access.REMOTE_WRITE));
        assertTerminate(TerminateLayer.DDP, 1, 0x02, TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 0, OTHER_PD, Access.REMOTE_WRITE));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSink(table, sink.stag(), BASE, 0, PD, Access.REMOTE_READ));
        // An empty segment at the last TO does not wrap; TO 0 is below a region that ends at 2^64.
        TaggedBuffer top = table.register(PD, region, -LENGTH, LENGTH, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, top.stag(), -1L, 0, PD, Access.REMOTE_WRITE);
        assertBounds(() -> TaggedAccess.checkSink(table, top.stag(), 0, 0, PD, Access.REMOTE_WRITE));
    }

    @Test
    void wrapAtTheTopOfTheTaggedOffsetSpace() {
        // A region whose last byte is TO 2^64 - 1.
        int stag = table.register(PD, region, -LENGTH, LENGTH, Access.REMOTE_WRITE).stag();
        TaggedAccess.checkSink(table, stag, -LENGTH, LENGTH, PD, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, stag, -1L, 1, PD, Access.REMOTE_WRITE);
        TaggedAccess.checkSink(table, stag, -2L, 2, PD, Access.REMOTE_WRITE);
        assertWrap(() -> TaggedAccess.checkSink(table, stag, -1L, 2, PD, Access.REMOTE_WRITE));
        assertWrap(() -> TaggedAccess.checkSink(table, stag, -LENGTH, LENGTH + 1, PD, Access.REMOTE_WRITE));
        assertWrap(() -> TaggedAccess.checkSink(table, stag, -1L, Integer.MAX_VALUE, PD, Access.REMOTE_WRITE));
        // Far below the region and far from 2^64: no wrap, a bounds violation.
        assertBounds(() -> TaggedAccess.checkSink(table, stag, Long.MIN_VALUE + 1, Integer.MAX_VALUE, PD,
                Access.REMOTE_WRITE));
    }

    @Test
    void wrapIsReportedBeforeBounds() {
        // Region at TO 0..63: a segment at TO 2^64 - 8 of 16 octets both wraps and lies outside.
        int stag = table.register(PD, region, 0, LENGTH, Access.REMOTE_WRITE).stag();
        assertWrap(() -> TaggedAccess.checkSink(table, stag, -8L, 16, PD, Access.REMOTE_WRITE));
        // Without the wrap it is a plain bounds violation.
        assertBounds(() -> TaggedAccess.checkSink(table, stag, -8L, 8, PD, Access.REMOTE_WRITE));
        assertBounds(() -> TaggedAccess.checkSink(table, stag, Long.MIN_VALUE, 1, PD, Access.REMOTE_WRITE));
    }

    @Test
    void checkOrder() {
        TaggedBuffer readOnly = register(Access.REMOTE_READ);
        TaggedBuffer writable = register(Access.REMOTE_WRITE);
        // Invalidated and other PD, no access and out of bounds: the STag error first.
        table.invalidate(readOnly.stag());
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, readOnly.stag(), -1L, 2, OTHER_PD, Access.REMOTE_WRITE));
        TaggedBuffer readOnly2 = register(Access.REMOTE_READ);
        // Other PD and no access: the PD error.
        assertTerminate(TerminateLayer.DDP, 1, 0x02, TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSink(table, readOnly2.stag(), BASE, 1, OTHER_PD, Access.REMOTE_WRITE));
        // Other PD and out of bounds: the PD error.
        assertTerminate(TerminateLayer.DDP, 1, 0x02, TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSink(table, writable.stag(), BASE + LENGTH, 1, OTHER_PD,
                        Access.REMOTE_WRITE));
        // Other PD and wrap: the PD error.
        assertTerminate(TerminateLayer.DDP, 1, 0x02, TerminateError.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSink(table, writable.stag(), -1L, 2, OTHER_PD, Access.REMOTE_WRITE));
        // No access and out of bounds: the access error.
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSink(table, readOnly2.stag(), BASE + LENGTH, 1, PD, Access.REMOTE_WRITE));
        // No access and wrap: the access error.
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSink(table, readOnly2.stag(), -1L, 2, PD, Access.REMOTE_WRITE));
    }

    // ---------------------------------------------------------------------------------------------
    // Source (inbound RDMA Read Request): RDMAP remote protection errors

    @Test
    void sourceAcceptsAReadInside() {
        TaggedBuffer source = register(Access.REMOTE_READ);
        assertSame(source, TaggedAccess.checkSource(table, source.stag(), BASE, LENGTH, PD));
        assertSame(source, TaggedAccess.checkSource(table, source.stag(), BASE + LENGTH, 0, PD));
    }

    @Test
    void sourceErrors() {
        TaggedBuffer source = register(Access.REMOTE_READ);
        TaggedBuffer writeOnly = register(Access.REMOTE_WRITE | Access.LOCAL_WRITE);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x00, TerminateError.RDMAP_INVALID_STAG,
                () -> TaggedAccess.checkSource(table, source.stag() ^ 0x80, BASE, 1, PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x03, TerminateError.RDMAP_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSource(table, source.stag(), BASE, 1, OTHER_PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSource(table, writeOnly.stag(), BASE, 1, PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x04, TerminateError.RDMAP_TO_WRAP,
                () -> TaggedAccess.checkSource(table, source.stag(), -16L, 0xFFFF_FFFFL, PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x01, TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION,
                () -> TaggedAccess.checkSource(table, source.stag(), BASE, LENGTH + 1, PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x01, TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION,
                () -> TaggedAccess.checkSource(table, source.stag(), BASE + 1, 0xFFFF_FFFFL, PD));
        table.invalidate(source.stag());
        assertTerminate(TerminateLayer.RDMAP, 1, 0x00, TerminateError.RDMAP_INVALID_STAG,
                () -> TaggedAccess.checkSource(table, source.stag(), BASE, 1, PD));
    }

    @Test
    void sourceCheckOrder() {
        TaggedBuffer writeOnly = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x03, TerminateError.RDMAP_STAG_NOT_ASSOCIATED,
                () -> TaggedAccess.checkSource(table, writeOnly.stag(), -1L, 2, OTHER_PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x02, TerminateError.RDMAP_ACCESS_RIGHTS_VIOLATION,
                () -> TaggedAccess.checkSource(table, writeOnly.stag(), -1L, 2, PD));
        TaggedBuffer source = table.register(PD, region, 0, LENGTH, Access.REMOTE_READ);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x04, TerminateError.RDMAP_TO_WRAP,
                () -> TaggedAccess.checkSource(table, source.stag(), -1L, 2, PD));
        assertTerminate(TerminateLayer.RDMAP, 1, 0x01, TerminateError.RDMAP_BASE_OR_BOUNDS_VIOLATION,
                () -> TaggedAccess.checkSource(table, source.stag(), -1L, 1, PD));
    }

    // ---------------------------------------------------------------------------------------------
    // Placement

    @Test
    void placeWritesExactlyThePayloadAtItsOffset() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        ByteBuf payload = Unpooled.buffer(32);
        try {
            payload.writeZero(3); // the payload starts at reader index 3
            for (int i = 0; i < 20; i++) {
                payload.writeByte(i + 1);
            }
            payload.readerIndex(3);
            TaggedAccess.checkSink(table, sink.stag(), BASE + 10, payload.readableBytes(), PD, Access.REMOTE_WRITE);
            TaggedPlacement.place(sink, BASE + 10, payload);
            assertEquals(3, payload.readerIndex(), "payload indices unchanged");
            assertEquals(1, payload.refCnt(), "payload not released");
            for (int i = 0; i < backing.capacity(); i++) {
                int regionIndex = i - GUARD;
                byte expected = regionIndex >= 10 && regionIndex < 30 ? (byte) (regionIndex - 9) : GUARD_BYTE;
                assertEquals(expected, backing.getByte(i), "backing byte " + i);
            }
        } finally {
            payload.release();
        }
    }

    @Test
    void placeFillsTheWholeRegionFromACompositeAndNothingOutside() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        CompositeByteBuf payload = Unpooled.compositeBuffer();
        try {
            for (int part = 0; part < 4; part++) {
                ByteBuf piece = Unpooled.buffer(16);
                for (int i = 0; i < 16; i++) {
                    piece.writeByte(part * 16 + i);
                }
                payload.addComponent(true, piece);
            }
            TaggedPlacement.place(sink, BASE, payload);
            for (int i = 0; i < backing.capacity(); i++) {
                int regionIndex = i - GUARD;
                byte expected = regionIndex >= 0 && regionIndex < LENGTH ? (byte) regionIndex : GUARD_BYTE;
                assertEquals(expected, backing.getByte(i), "backing byte " + i);
            }
        } finally {
            payload.release();
        }
    }

    @Test
    void placeRefusesWhatDoesNotFit() {
        TaggedBuffer sink = register(Access.REMOTE_WRITE);
        ByteBuf payload = Unpooled.buffer(2).writeShort(0x0102);
        try {
            assertThrows(IllegalArgumentException.class, () -> TaggedPlacement.place(sink, BASE + LENGTH - 1, payload));
            assertThrows(IllegalArgumentException.class, () -> TaggedPlacement.place(sink, BASE - 1, payload));
            TaggedPlacement.place(sink, BASE + LENGTH - 2, payload);
            assertEquals(0x0102, region.getShort(LENGTH - 2));
            assertEquals(GUARD_BYTE, backing.getByte(GUARD + LENGTH));
            TaggedPlacement.place(sink, BASE + LENGTH, Unpooled.EMPTY_BUFFER);
        } finally {
            payload.release();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Send with Invalidate

    @Test
    void remoteInvalidation() {
        TaggedBuffer target = register(Access.REMOTE_WRITE);
        TaggedAccess.invalidate(table, target.stag(), PD);
        assertFalse(target.valid());
        assertSame(target, table.lookup(target.stag()), "still registered");
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedAccess.checkSink(table, target.stag(), BASE, 1, PD, Access.REMOTE_WRITE));
        TaggedAccess.invalidate(table, target.stag(), PD); // again: no error
    }

    @Test
    void remoteInvalidationOfAnUnknownStagIsARemoteOperationError() {
        TaggedBuffer target = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.RDMAP, 2, 0x09, TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                () -> TaggedAccess.invalidate(table, target.stag() + (5 << 8), PD));
        assertTerminate(TerminateLayer.RDMAP, 2, 0x09, TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                () -> TaggedAccess.invalidate(table, 0, PD));
        table.deregister(target.stag());
        assertTerminate(TerminateLayer.RDMAP, 2, 0x09, TerminateError.RDMAP_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                () -> TaggedAccess.invalidate(table, target.stag(), PD));
    }

    @Test
    void remoteInvalidationRefusedForProtectionIsARemoteProtectionError() {
        TaggedBuffer target = register(Access.REMOTE_WRITE);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x09, TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                () -> TaggedAccess.invalidate(table, target.stag(), OTHER_PD));
        assertTrue(target.valid(), "a refused invalidation changes nothing");
        TaggedBuffer pinned = table.register(PD, region, BASE, LENGTH, Access.REMOTE_WRITE, false);
        assertTerminate(TerminateLayer.RDMAP, 1, 0x09, TerminateError.RDMAP_PROTECTION_STAG_CANNOT_BE_INVALIDATED,
                () -> TaggedAccess.invalidate(table, pinned.stag(), PD));
        assertTrue(pinned.valid());
    }

    private static void assertBounds(org.junit.jupiter.api.function.Executable body) {
        assertTerminate(TerminateLayer.DDP, 1, 0x01, TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION, body);
    }

    private static void assertWrap(org.junit.jupiter.api.function.Executable body) {
        assertTerminate(TerminateLayer.DDP, 1, 0x03, TerminateError.DDP_TAGGED_TO_WRAP, body);
    }
}
