package org.jiwarp.ddp;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A window over registered memory that the socket reads straight into: Direct Data Placement
 * (RFC 5041 section 1), the kernel's copy into the Data Sink being the only one, as Linux siw's
 * {@code siw_rx_umem} copies from the socket buffers into the target pages.
 *
 * <pre>
 *   memory:   |.......... region ..........[ window: length octets ]..........|
 *                                          ^ index                   ^ index + length
 *   window:                                0 (writer index) ...      capacity()
 * </pre>
 *
 * <p>The window is an empty buffer whose capacity is exactly the octets that may go there, so a
 * read (Netty's epoll reads into {@code [writerIndex, capacity)} at {@link #memoryAddress()}; NIO
 * into {@link #internalNioBuffer}) can never write past them. It is opened for one read at a time
 * ({@link #open}) and enters the region's placement fence ({@link TaggedBuffer}) for as long as it
 * is open: a deregistration or invalidation that races the read waits for it, and one that came
 * first keeps the window shut. Whoever read into it releases it, which closes it; the object is then
 * reused for the next read, so reading straight allocates nothing.
 *
 * <p>Every access is the memory's own at an offset (the window delegates to the registered buffer).
 * Only memory with a native address is windowed ({@link #canWindow}). Not thread-safe: it belongs
 * to one connection's event loop.
 */
public final class PlacementWindow extends AbstractReferenceCountedByteBuf {

    private ByteBuf memory;
    private int adjustment;
    private int length;
    private TaggedBuffer fence;
    private boolean open;

    public PlacementWindow() {
        super(Integer.MAX_VALUE);
        setRefCnt(0);
    }

    /** Whether reads can go straight into {@code memory}: direct, with a native address. */
    public static boolean canWindow(ByteBuf memory) {
        return memory.isDirect() && memory.hasMemoryAddress();
    }

    /**
     * Opens the window over {@code length} octets of {@code memory} at {@code index}, entered into
     * {@code fence} ({@code null}: unfenced).
     *
     * @return this window, empty, for one read; {@code null} when the fence is shut (the region was
     *     invalidated or deregistered) or the window is still open from an earlier read
     */
    public PlacementWindow open(ByteBuf memory, int index, int length, TaggedBuffer fence) {
        if (open || fence != null && !fence.enterPlacement()) {
            return null;
        }
        this.open = true;
        this.memory = memory;
        this.adjustment = index;
        this.length = length;
        this.fence = fence;
        setRefCnt(1);
        setIndex(0, 0);
        return this;
    }

    /** Whether the window is open (handed to a read not yet released). */
    public boolean isOpen() {
        return open;
    }

    @Override
    protected void deallocate() {
        TaggedBuffer entered = fence;
        memory = null;
        fence = null;
        open = false;
        if (entered != null) {
            entered.exitPlacement();
        }
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new UnsupportedOperationException("a placement window has the length of what it may hold");
    }

    @Override
    public ByteBufAllocator alloc() {
        return memory.alloc();
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new UnsupportedOperationException("direct memory");
    }

    @Override
    public int arrayOffset() {
        throw new UnsupportedOperationException("direct memory");
    }

    @Override
    public boolean hasMemoryAddress() {
        return memory.hasMemoryAddress();
    }

    @Override
    public long memoryAddress() {
        return memory.memoryAddress() + adjustment;
    }

    @Override
    public int nioBufferCount() {
        return 1;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffer(adjustment + index, length);
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffer(adjustment + index, length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        return new ByteBuffer[] {nioBuffer(index, length)};
    }

    @Override
    public boolean isContiguous() {
        return true;
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        return memory.copy(adjustment + index, length);
    }

    @Override
    protected byte _getByte(int index) {
        return memory.getByte(adjustment + index);
    }

    @Override
    protected short _getShort(int index) {
        return memory.getShort(adjustment + index);
    }

    @Override
    protected short _getShortLE(int index) {
        return memory.getShortLE(adjustment + index);
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return memory.getUnsignedMedium(adjustment + index);
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return memory.getUnsignedMediumLE(adjustment + index);
    }

    @Override
    protected int _getInt(int index) {
        return memory.getInt(adjustment + index);
    }

    @Override
    protected int _getIntLE(int index) {
        return memory.getIntLE(adjustment + index);
    }

    @Override
    protected long _getLong(int index) {
        return memory.getLong(adjustment + index);
    }

    @Override
    protected long _getLongLE(int index) {
        return memory.getLongLE(adjustment + index);
    }

    @Override
    protected void _setByte(int index, int value) {
        memory.setByte(adjustment + index, value);
    }

    @Override
    protected void _setShort(int index, int value) {
        memory.setShort(adjustment + index, value);
    }

    @Override
    protected void _setShortLE(int index, int value) {
        memory.setShortLE(adjustment + index, value);
    }

    @Override
    protected void _setMedium(int index, int value) {
        memory.setMedium(adjustment + index, value);
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        memory.setMediumLE(adjustment + index, value);
    }

    @Override
    protected void _setInt(int index, int value) {
        memory.setInt(adjustment + index, value);
    }

    @Override
    protected void _setIntLE(int index, int value) {
        memory.setIntLE(adjustment + index, value);
    }

    @Override
    protected void _setLong(int index, long value) {
        memory.setLong(adjustment + index, value);
    }

    @Override
    protected void _setLongLE(int index, long value) {
        memory.setLongLE(adjustment + index, value);
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(adjustment + index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(adjustment + index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        checkIndex(index, dst.remaining());
        memory.getBytes(adjustment + index, dst);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        memory.getBytes(adjustment + index, out, length);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(adjustment + index, out, length);
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(adjustment + index, out, position, length);
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        checkIndex(index, length);
        memory.setBytes(adjustment + index, src, srcIndex, length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        checkIndex(index, length);
        memory.setBytes(adjustment + index, src, srcIndex, length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        checkIndex(index, src.remaining());
        memory.setBytes(adjustment + index, src);
        return this;
    }

    @Override
    public int setBytes(int index, InputStream in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(adjustment + index, in, length);
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(adjustment + index, in, length);
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(adjustment + index, in, position, length);
    }

    @Override
    public String toString() {
        return open ? "PlacementWindow(" + length + " octets at " + adjustment + " of " + memory + ")"
                : "PlacementWindow(closed)";
    }
}
