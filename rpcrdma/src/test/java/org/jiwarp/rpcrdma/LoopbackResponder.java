package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;

/**
 * A small RPC-over-RDMA responder on a second jiwarp RNIC, over loopback TCP, for the requester's
 * tests: it pulls the call's Read chunks with RDMA Read (the whole call for a Position Zero Read
 * chunk), answers with the RPC message it received (up to the Read chunk's position) as an
 * opaque result, pushes the Read chunk's
 * data into the Write chunk and a long reply into the Reply chunk (then RDMA_NOMSG), and replies
 * by Send with Invalidate of the Write or Reply chunk's handle when the requester offered Remote
 * Invalidation. {@link #misbehave} makes it answer wrongly instead.
 */
final class LoopbackResponder implements AutoCloseable {

    enum Misbehaviour {
        NONE, ERR_VERS, ERR_CHUNK, INVALIDATE_A_FOREIGN_STAG, WRITE_LIST_TOO_LONG,
        /** An RDMA_MSGP and an RDMA_DONE with the call's xid and a wrong result, before the real reply. */
        DECOYS_FIRST
    }

    static final int INLINE = 4096;
    static final int CREDITS = 17;

    private final Rnic rnic = Rnic.open();
    private final RnicListener listener;
    private final BlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
    private final Thread worker;
    private volatile Misbehaviour misbehaviour = Misbehaviour.NONE;
    private volatile PrivateData clientPrivateData;
    private volatile QueuePair qp;
    private ProtectionDomain pd;
    private CompletionQueue sendCq;
    private MemoryRegion receives;
    private volatile boolean closed;

    LoopbackResponder() {
        listener = rnic.listen(new InetSocketAddress("127.0.0.1", 0), request -> {
            clientPrivateData = PrivateData.decode(request.privateData());
            pd = rnic.allocatePd();
            sendCq = rnic.createCq(256);
            CompletionQueue receiveCq = rnic.createCq(64);
            receives = pd.register(Unpooled.directBuffer(16 * INLINE).writerIndex(16 * INLINE), Access.LOCAL_WRITE);
            QueuePair accepted = rnic.createQp(new QpConfig(pd, sendCq, receiveCq).ird(16).ord(16));
            receiveCq.onCompletion(wc -> {
                if (wc.status() == WcStatus.SUCCESS) {
                    int slot = (int) wc.workRequestId();
                    byte[] bytes = new byte[(int) wc.byteLength()];
                    receives.buffer().getBytes(slot * INLINE, bytes);
                    accepted.postReceive(new ReceiveWorkRequest(slot, new Sge(receives, (long) slot * INLINE, INLINE)));
                    received.add(bytes);
                }
            });
            for (int i = 0; i < 16; i++) {
                accepted.postReceive(new ReceiveWorkRequest(i, new Sge(receives, (long) i * INLINE, INLINE)));
            }
            qp = accepted;
            request.accept(accepted, new PrivateData(1, false, INLINE, INLINE).encode());
        });
        worker = new Thread(this::serve, "rpcrdma-loopback-responder");
        worker.setDaemon(true);
        worker.start();
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    PrivateData clientPrivateData() {
        return clientPrivateData;
    }

    void misbehave(Misbehaviour how) {
        misbehaviour = how;
    }

    private void serve() {
        while (!closed) {
            byte[] bytes;
            try {
                bytes = received.poll(100, TimeUnit.MILLISECONDS);
                if (bytes != null) {
                    ByteBuf in = Unpooled.wrappedBuffer(bytes);
                    try {
                        answer(in);
                    } finally {
                        in.release();
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                e.printStackTrace();
            }
        }
    }

    private void answer(ByteBuf in) throws InterruptedException {
        RpcRdmaHeader call = RpcRdmaHeader.decode(in);
        Misbehaviour how = misbehaviour;
        ByteBuf reply = Unpooled.directBuffer(INLINE);
        if (how == Misbehaviour.ERR_VERS || how == Misbehaviour.ERR_CHUNK) {
            RpcRdmaHeader.error(call.xid(), RpcRdmaHeader.VERSION, CREDITS,
                    how == Misbehaviour.ERR_VERS ? RpcRdmaHeader.ERR_VERS : RpcRdmaHeader.ERR_CHUNK).encode(reply);
            send(reply, 0);
            return;
        }
        if (how == Misbehaviour.DECOYS_FIRST) {
            for (int procedure : new int[] {RpcRdmaHeader.RDMA_MSGP, RpcRdmaHeader.RDMA_DONE}) {
                ByteBuf decoy = Unpooled.directBuffer(INLINE);
                RpcRdmaHeader.message(call.xid(), CREDITS, procedure, List.of(), List.of(), null).encode(decoy);
                if (procedure == RpcRdmaHeader.RDMA_MSGP) {
                    decoy.writeInt(4).writeInt(1024); // rdma_align, rdma_thresh
                }
                Rpc.putAcceptedReply(decoy, Rpc.peekXid(in), Rpc.SUCCESS);
                Xdr.putOpaque(decoy, "a decoy".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                send(decoy, 0);
            }
        }
        // The RPC call as the requester meant it: inline part with the Read chunk's data at its position.
        ByteBuf message = Unpooled.buffer();
        byte[] chunkData = new byte[0];
        if (!call.readList().isEmpty()) {
            ReadSegment read = call.readList().get(0);
            chunkData = rdmaRead(read.segment());
            if (read.position() == 0 && call.procedure() == RpcRdmaHeader.RDMA_NOMSG) {
                message.writeBytes(chunkData);
                chunkData = new byte[0];
            } else {
                message.writeBytes(in, in.readerIndex(), read.position()); // the echo leaves the chunk out
            }
        } else {
            message.writeBytes(in);
        }
        List<List<RdmaSegment>> writeList = new ArrayList<>();
        int invalidate = 0;
        if (!call.writeList().isEmpty()) {
            RdmaSegment target = call.writeList().get(0).get(0);
            rdmaWrite(target, chunkData);
            int reported = how == Misbehaviour.WRITE_LIST_TOO_LONG ? target.length() + 1 : chunkData.length;
            writeList.add(List.of(new RdmaSegment(target.handle(), reported, target.offset())));
            invalidate = target.handle();
        }
        ByteBuf rpc = Unpooled.buffer();
        Rpc.putAcceptedReply(rpc, Rpc.peekXid(message), Rpc.SUCCESS);
        byte[] echoed = new byte[message.readableBytes()];
        message.readBytes(echoed);
        Xdr.putOpaque(rpc, echoed);
        RpcRdmaHeader header;
        if (call.replyChunk() != null && rpc.readableBytes() + 64 > INLINE) {
            RdmaSegment target = call.replyChunk().get(0);
            byte[] whole = new byte[rpc.readableBytes()];
            rpc.readBytes(whole);
            rdmaWrite(target, whole);
            header = RpcRdmaHeader.message(call.xid(), CREDITS, RpcRdmaHeader.RDMA_NOMSG, List.of(), writeList,
                    List.of(new RdmaSegment(target.handle(), whole.length, target.offset())));
            invalidate = invalidate != 0 ? invalidate : target.handle();
            header.encode(reply);
        } else {
            header = RpcRdmaHeader.message(call.xid(), CREDITS, RpcRdmaHeader.RDMA_MSG, List.of(), writeList, null);
            header.encode(reply);
            reply.writeBytes(rpc);
        }
        message.release();
        rpc.release();
        if (how == Misbehaviour.INVALIDATE_A_FOREIGN_STAG) {
            invalidate = receives.stag(); // one of the responder's own, never the requester's
        }
        send(reply, clientPrivateData != null && clientPrivateData.remoteInvalidation() ? invalidate : 0);
    }

    private byte[] rdmaRead(RdmaSegment source) throws InterruptedException {
        ByteBuf sink = Unpooled.directBuffer(source.length()).writerIndex(source.length());
        MemoryRegion region = pd.register(sink, Access.LOCAL_WRITE);
        qp.postSend(SendWorkRequest.read(1, source.offset(), source.handle(), Sge.of(region)));
        complete("RDMA Read");
        byte[] data = new byte[source.length()];
        sink.getBytes(0, data);
        region.deregister();
        sink.release();
        return data;
    }

    private void rdmaWrite(RdmaSegment target, byte[] data) throws InterruptedException {
        if (data.length == 0) {
            return;
        }
        ByteBuf source = Unpooled.directBuffer(data.length).writeBytes(data);
        MemoryRegion region = pd.register(source, 0);
        qp.postSend(SendWorkRequest.write(2, target.offset(), target.handle(), Sge.of(region)));
        complete("RDMA Write");
        region.deregister();
        source.release();
    }

    private void send(ByteBuf reply, int invalidate) throws InterruptedException {
        MemoryRegion region = pd.register(reply, 0);
        qp.postSend(invalidate != 0 ? SendWorkRequest.sendWithInvalidate(3, invalidate, Sge.of(region))
                : SendWorkRequest.send(3, Sge.of(region)));
        complete("Send");
        region.deregister();
        reply.release();
    }

    private void complete(String what) throws InterruptedException {
        WorkCompletion wc = sendCq.take(10, TimeUnit.SECONDS);
        if (wc == null || wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException(what + " did not complete: " + wc);
        }
    }

    @Override
    public void close() {
        closed = true;
        worker.interrupt();
        listener.close();
        rnic.close();
        if (receives != null) {
            receives.buffer().release();
        }
    }
}
