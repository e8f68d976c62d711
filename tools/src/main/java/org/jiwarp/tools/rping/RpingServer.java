package org.jiwarp.tools.rping;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.ReceiveWorkRequest;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcOpcode;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.rping.RpingMessages;

/**
 * The server side of rping ({@code rping -s -P}): serves any number of clients, each on its own queue
 * pair, until closed. Each connection is a small state machine driven by its completions on the
 * event loop. Its {@code rdma_buf} is 64 KiB, so it serves every size an rping client can ask for;
 * CRC and markers are whatever the client's MPA Request asks for.
 */
public final class RpingServer implements AutoCloseable {

    private final Rnic rnic;
    private final ProtectionDomain pd;
    private final RnicListener listener;
    private final boolean verbose;
    private final Consumer<String> out;
    private final Consumer<String> log;
    private final long count;
    private final AtomicLong pings = new AtomicLong();
    private final AtomicLong clients = new AtomicLong();
    private final AtomicLong clientsGone = new AtomicLong();

    /**
     * @param out where {@code -v} prints each ping's data ({@code "server ping data: ..."})
     * @param log   where connection events and errors go
     * @param count pings to serve each client before closing its connection (rping's {@code -C});
     *              0: as many as it asks for
     */
    public RpingServer(Rnic rnic, InetSocketAddress bind, boolean verbose, long count, Consumer<String> out,
            Consumer<String> log) {
        this.rnic = rnic;
        this.count = count;
        this.pd = rnic.allocatePd();
        this.verbose = verbose;
        this.out = out;
        this.log = log;
        this.listener = rnic.listen(bind, this::onConnectRequest);
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** Pings answered so far, all clients together. */
    public long pings() {
        return pings.get();
    }

    /** Clients accepted so far. */
    public long clients() {
        return clients.get();
    }

    /** Clients whose connection has ended. */
    public long clientsGone() {
        return clientsGone.get();
    }

    private void onConnectRequest(ConnectRequest request) {
        clients.incrementAndGet();
        new Session(request).accept();
    }

    @Override
    public void close() {
        listener.close();
    }

    /** One client. */
    private final class Session {
        private final ConnectRequest request;
        private final QueuePair qp;
        private final MemoryRegion receiveBuffer;
        private final MemoryRegion sendBuffer;
        private final MemoryRegion rdmaBuffer;
        private final ReceiveWorkRequest receive;
        private final SendWorkRequest goAhead;
        private boolean writeAdvertisementNext;
        private long served;
        private boolean closing;

        Session(ConnectRequest request) {
            this.request = request;
            CompletionQueue cq = rnic.createCq(32);
            // As rping: 16 send work requests, 2 receives, IRD = ORD = 1.
            this.qp = rnic.createQp(new QpConfig(pd, cq, cq).sendDepth(16).receiveDepth(2).ird(1).ord(1));
            this.receiveBuffer = pd.register(ByteBuffer.allocateDirect(RpingMessages.INFO_LENGTH), Access.LOCAL_WRITE);
            this.sendBuffer = pd.register(ByteBuffer.allocateDirect(RpingMessages.INFO_LENGTH), 0);
            this.rdmaBuffer = pd.register(ByteBuffer.allocateDirect(RpingMessages.MAX_SIZE + 1),
                    Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            this.receive = new ReceiveWorkRequest(0, Sge.of(receiveBuffer));
            this.goAhead = SendWorkRequest.send(1, Sge.of(sendBuffer));
            cq.onCompletion(this::onCompletion);
            qp.postReceive(receive);
        }

        void accept() {
            request.accept(qp, new byte[0]).whenComplete((connected, failure) -> {
                if (failure != null) {
                    log.accept("connection from " + client() + " failed: " + org.jiwarp.tools.Failures.describe(failure));
                    deregister();
                    return;
                }
                log.accept("client " + client() + " connected: " + org.jiwarp.tools.Failures.connection(qp.parameters()));
            });
            qp.closeFuture().thenRun(() -> {
                log.accept("client " + client() + " gone after " + served + " pings" + terminateNote());
                deregister();
                clientsGone.incrementAndGet();
            });
        }

        private void onCompletion(WorkCompletion wc) {
            if (wc.status() != WcStatus.SUCCESS) {
                if (wc.status() != WcStatus.WORK_REQUEST_FLUSH_ERROR) {
                    log.accept("client " + client() + ": " + org.jiwarp.tools.Failures.completion(wc));
                    qp.disconnect();
                }
                return;
            }
            if (wc.opcode() == WcOpcode.RECEIVE) {
                received(wc);
            } else if (wc.opcode() == WcOpcode.RDMA_READ) {
                // The client's start_buf is here: show it, then let the client advertise its rdma_buf.
                if (verbose) {
                    out.accept("server ping data: " + RpingMessages.cString(rdmaBuffer.buffer(), RpingMessages.MAX_SIZE));
                }
                writeAdvertisementNext = true;
                qp.postSend(goAhead);
            } else if (wc.opcode() == WcOpcode.RDMA_WRITE) {
                served++;
                pings.incrementAndGet();
                writeAdvertisementNext = false;
                // rping -s -C: after COUNT pings, the last go-ahead is sent and the server hangs up.
                closing = count > 0 && served >= count;
                qp.postSend(goAhead);
            } else if (wc.opcode() == WcOpcode.SEND && closing) {
                qp.disconnect();
            }
        }

        private void received(WorkCompletion wc) {
            if (wc.byteLength() != RpingMessages.INFO_LENGTH) {
                log.accept("client " + client() + ": received bogus data, size " + wc.byteLength());
                qp.disconnect();
                return;
            }
            long address = RpingMessages.infoAddress(receiveBuffer.buffer());
            int rkey = RpingMessages.infoRkey(receiveBuffer.buffer());
            int size = RpingMessages.infoSize(receiveBuffer.buffer());
            qp.postReceive(receive);
            if (size < 1 || size > RpingMessages.MAX_SIZE + 1) {
                log.accept("client " + client() + ": advertised size " + size + " is out of range");
                qp.disconnect();
                return;
            }
            if (!writeAdvertisementNext) {
                // Its start_buf: read it.
                qp.postSend(SendWorkRequest.read(2, address, rkey, new Sge(rdmaBuffer, 0, size)));
            } else {
                // Its rdma_buf: write back what was read, as a C string (strlen + 1), as rping does.
                int length = Math.min(size, RpingMessages.cStringLength(rdmaBuffer.buffer(), RpingMessages.MAX_SIZE) + 1);
                qp.postSend(SendWorkRequest.write(3, address, rkey, new Sge(rdmaBuffer, 0, length)));
            }
        }

        private String client() {
            return org.jiwarp.tools.Failures.address(request.remoteAddress());
        }

        private String terminateNote() {
            if (qp.terminateReceived() != null) {
                return "; it sent a Terminate: " + qp.terminateReceived().describe();
            }
            if (qp.terminateSent() != null) {
                return "; jiwarp sent it a Terminate: " + qp.terminateSent().describe();
            }
            if (qp.connectionError() != null) {
            return "; the connection failed: " + org.jiwarp.tools.Failures.describe(qp.connectionError());
        }
        return "";
        }

        private void deregister() {
            receiveBuffer.deregister();
            sendBuffer.deregister();
            rdmaBuffer.deregister();
        }
    }
}
