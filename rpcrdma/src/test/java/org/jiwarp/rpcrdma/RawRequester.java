package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * A requester on the verbs, for what {@link RpcRdmaClient} never does: sending whatever octets a
 * test writes (malformed headers, more calls than granted, chunks that name nothing the requester
 * registered) and reading each reply's octets as they came. Headers are written and read with the
 * shared codec.
 */
final class RawRequester implements AutoCloseable {

    static final int INLINE = 4096;
    private static final int SLOTS = 32;

    private final Rnic rnic = Rnic.open();
    private final ProtectionDomain pd = rnic.allocatePd();
    private final CompletionQueue sendCq = rnic.createCq(1024);
    private final CompletionQueue receiveCq = rnic.createCq(1024);
    private final MemoryRegion receives;
    private final MemoryRegion sends;
    private final QueuePair qp;
    private int nextSlot;

    RawRequester(InetSocketAddress server, boolean remoteInvalidation) throws Exception {
        receives = pd.register(Unpooled.directBuffer(SLOTS * INLINE).writerIndex(SLOTS * INLINE), Access.LOCAL_WRITE);
        sends = pd.register(Unpooled.directBuffer(SLOTS * INLINE).writerIndex(SLOTS * INLINE), 0);
        qp = rnic.createQp(new QpConfig(pd, sendCq, receiveCq).ird(16).ord(16));
        for (int i = 0; i < SLOTS; i++) {
            qp.postReceive(new ReceiveWorkRequest(i, new Sge(receives, (long) i * INLINE, INLINE)));
        }
        rnic.connect(qp, server, new PrivateData(1, remoteInvalidation, INLINE, INLINE).encode()).get(10,
                TimeUnit.SECONDS);
    }

    /** Sends {@code message}'s readable octets as one Send (and releases it). */
    void send(ByteBuf message) {
        int slot = nextSlot++ % SLOTS;
        int length = message.readableBytes();
        sends.buffer().setBytes(slot * INLINE, message, message.readerIndex(), length);
        message.release();
        qp.postSend(SendWorkRequest.send(slot, new Sge(sends, (long) slot * INLINE, length)));
    }

    /** An RDMA_MSG call: the header with {@code readList}, then the RPC call with {@code arguments}. */
    static ByteBuf call(int xid, int procedure, java.util.List<ReadSegment> readList, ByteBuf arguments) {
        ByteBuf out = Unpooled.buffer();
        RpcRdmaHeader.message(xid, 8, RpcRdmaHeader.RDMA_MSG, readList, java.util.List.of(), null).encode(out);
        Rpc.putCall(out, xid, TestProgram.PROGRAM, 1, procedure, null);
        out.writeBytes(arguments);
        arguments.release();
        return out;
    }

    /** The next reply's octets (a copy the caller releases), or {@code null} after 10 s. */
    ByteBuf nextReply() throws InterruptedException {
        WorkCompletion wc = receiveCq.take(10, TimeUnit.SECONDS);
        if (wc == null) {
            return null;
        }
        if (wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("the receive failed: " + wc);
        }
        int slot = (int) wc.workRequestId();
        ByteBuf copy = Unpooled.copiedBuffer(receives.buffer().slice(slot * INLINE, (int) wc.byteLength()));
        qp.postReceive(new ReceiveWorkRequest(slot, new Sge(receives, (long) slot * INLINE, INLINE)));
        return copy;
    }

    /** Registers {@code data} for the server to read (a Read chunk's source); the RNIC's close deregisters it. */
    RdmaSegment expose(ByteBuf data) {
        MemoryRegion region = pd.register(data, Access.REMOTE_READ);
        return new RdmaSegment(region.stag(), (int) region.length(), region.address());
    }

    /**
     * Registers {@code data} for the server to write (a Write or Reply chunk's sink); the RNIC's close
     * deregisters it.
     */
    RdmaSegment exposeWritable(ByteBuf data) {
        MemoryRegion region = pd.register(data, Access.REMOTE_WRITE | Access.LOCAL_WRITE);
        return new RdmaSegment(region.stag(), (int) region.length(), region.address());
    }

    /**
     * Registers {@code data} in a second protection domain of this requester's RNIC, readable and
     * writable remotely: a handle valid on this RNIC but not for this connection's queue pair.
     */
    RdmaSegment exposeInAnotherDomain(ByteBuf data) {
        MemoryRegion region = rnic.allocatePd().register(data, Access.REMOTE_READ | Access.REMOTE_WRITE
                | Access.LOCAL_WRITE);
        return new RdmaSegment(region.stag(), (int) region.length(), region.address());
    }

    QueuePair queuePair() {
        return qp;
    }

    @Override
    public void close() {
        rnic.close();
        receives.buffer().release();
        sends.buffer().release();
    }
}
