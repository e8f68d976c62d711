package org.jiwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PayloadViews}: views of registered-like memory and of the overhead slabs, recycled. */
class PayloadViewsTest {

    private static ByteBuf registered(int size) {
        ByteBuf memory = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(size));
        for (int i = 0; i < size; i++) {
            memory.setByte(i, i * 7);
        }
        return memory;
    }

    @Test
    void aViewShowsTheSourceOctetsAndHoldsAReferenceUntilReleased() {
        PayloadViews views = new PayloadViews(ImmediateEventExecutor.INSTANCE);
        ByteBuf memory = registered(4096);
        ByteBuf view = views.slice(memory, 1000, 300);
        assertEquals(300, view.readableBytes());
        assertEquals(1000, view.readerIndex(), "view index i is source index i");
        for (int i = 0; i < 300; i++) {
            assertEquals(memory.getByte(1000 + i), view.getByte(view.readerIndex() + i));
        }
        assertEquals(memory.memoryAddress() + 1000, view.memoryAddress() + view.readerIndex(), "no copy");
        assertEquals(2, memory.refCnt(), "the view holds the memory");
        view.release();
        assertEquals(1, memory.refCnt(), "and lets it go");
        memory.release();
    }

    @Test
    void aReleasedViewIsTheNextOneHandedOut() {
        PayloadViews views = new PayloadViews(ImmediateEventExecutor.INSTANCE);
        ByteBuf memory = registered(4096);
        ByteBuf first = views.slice(memory, 0, 100);
        first.release();
        ByteBuf second = views.slice(memory, 200, 50);
        assertSame(first, second, "recycled");
        assertEquals(1, second.refCnt());
        assertEquals(200, second.readerIndex());
        assertEquals(50, second.readableBytes());
        // A view of a view is a view of the same memory.
        ByteBuf inner = views.slice(second, 210, 10);
        assertEquals(memory.getByte(210), inner.getByte(inner.readerIndex()));
        assertNotSame(second, inner, "one view per piece in flight");
        inner.release();
        second.release();
        memory.release();
    }

    @Test
    void pooledHeapAndOffLoopSourcesGetPlainSlices() throws Exception {
        PayloadViews views = new PayloadViews(ImmediateEventExecutor.INSTANCE);
        ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(100).writeZero(100);
        ByteBuf slice = views.slice(pooled, 10, 20);
        assertFalse(slice instanceof PayloadViews.View, "a pooled buffer object is reused for other memory");
        slice.release();
        pooled.release();
        ByteBuf heap = Unpooled.wrappedBuffer(new byte[100]);
        ByteBuf heapSlice = views.slice(heap, 10, 20);
        assertFalse(heapSlice instanceof PayloadViews.View);
        heapSlice.release();

        DefaultEventExecutor other = new DefaultEventExecutor();
        try {
            PayloadViews elsewhere = new PayloadViews(other);
            ByteBuf memory = registered(100);
            ByteBuf offLoop = elsewhere.slice(memory, 0, 10);
            assertFalse(offLoop instanceof PayloadViews.View, "free lists belong to the event loop");
            offLoop.release();
            memory.release();
        } finally {
            other.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void overheadComesFromTheSlabWithRoomBefore() {
        PayloadViews views = new PayloadViews(ImmediateEventExecutor.INSTANCE);
        ByteBuf a = views.overhead(ByteBufAllocator.DEFAULT, 2, 14);
        assertEquals(2, a.readerIndex());
        assertEquals(0, a.readableBytes());
        a.writeBytes(new byte[14]).setShort(0, 0x1234);
        ByteBuf b = views.overhead(ByteBufAllocator.DEFAULT, 0, 7);
        assertEquals(16, b.readerIndex(), "cut one after the other");
        b.writeByte(0x55);
        assertEquals(0x1234, a.getShort(0), "b did not overwrite a");
        a.release();
        b.release();
        views.clear();
    }

    /**
     * A full slab is only reused once nothing of it is in flight: with a view of the old slab still
     * held, the octets written through it survive the slab's turn coming round again.
     */
    @Test
    void aSlabWithViewsInFlightIsNotReused() {
        PayloadViews views = new PayloadViews(ImmediateEventExecutor.INSTANCE);
        ByteBuf held = views.overhead(ByteBufAllocator.DEFAULT, 0, 8).writeLong(0x0123456789abcdefL);
        List<ByteBuf> released = new ArrayList<>();
        // Two slabs' worth of overhead, each released at once: the slab turns round twice.
        for (int i = 0; i < 2 * PayloadViews.SLAB / 16 + 4; i++) {
            ByteBuf piece = views.overhead(ByteBufAllocator.DEFAULT, 0, 16).writeLong(-1L).writeLong(-1L);
            released.add(piece);
            piece.release();
        }
        assertEquals(0x0123456789abcdefL, held.getLong(held.readerIndex()), "the held octets were overwritten");
        assertTrue(held.refCnt() > 0);
        held.release();
        views.clear();
    }
}
