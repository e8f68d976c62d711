package org.jiwarp.rnic.example;

// README.md shows this file from its first import to its end, character for character
// (ReadmeExampleTest compares them): change both together.

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
import org.jiwarp.rnic.WorkCompletion;

/** An active and a passive side in one process: Write, Read and Send, then disconnect. */
public class ReadmeExample {
    public static void main(String[] args) throws Exception {
        try (Rnic server = Rnic.open(); Rnic client = Rnic.open()) {
            // The passive side: a region the peer may write and read, advertised in the MPA Reply.
            ProtectionDomain serverPd = server.allocatePd();                  // ibv_alloc_pd
            CompletionQueue serverCq = server.createCq(64);                   // ibv_create_cq
            MemoryRegion exposed = serverPd.register(ByteBuffer.allocateDirect(65536),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);  // ibv_reg_mr
            MemoryRegion inbox = serverPd.register(ByteBuffer.allocateDirect(4096), Access.LOCAL_WRITE);
            QueuePair serverQp = server.createQp(new QpConfig(serverPd, serverCq, serverCq).ird(4));
            serverQp.postReceive(new ReceiveWorkRequest(1, Sge.of(inbox)));   // before accepting
            byte[] advertisement = ByteBuffer.allocate(12).putLong(exposed.address()).putInt(exposed.rkey()).array();
            RnicListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    request -> request.accept(serverQp, advertisement));      // rdma_accept with private data

            // The active side: connect, and read the advertisement from the Reply's private data.
            ProtectionDomain pd = client.allocatePd();
            CompletionQueue cq = client.createCq(64);
            MemoryRegion local = pd.register(ByteBuffer.allocateDirect(8192), Access.LOCAL_WRITE);
            QueuePair qp = client.createQp(new QpConfig(pd, cq, cq).ord(4));
            client.connect(qp, listener.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);  // rdma_connect
            ByteBuffer remote = ByteBuffer.wrap(qp.parameters().peerPrivateData());
            long remoteAddress = remote.getLong();
            int remoteKey = remote.getInt();

            local.buffer().setCharSequence(0, "written by RDMA Write", StandardCharsets.US_ASCII);
            local.buffer().setCharSequence(100, "done", StandardCharsets.US_ASCII);
            qp.postSend(SendWorkRequest.write(10, remoteAddress, remoteKey, new Sge(local, 0, 21)));
            qp.postSend(SendWorkRequest.read(11, remoteAddress, remoteKey, new Sge(local, 4096, 21)));
            qp.postSend(SendWorkRequest.send(12, new Sge(local, 100, 4)));
            for (int i = 0; i < 3; i++) {
                WorkCompletion wc = cq.take(10, TimeUnit.SECONDS);             // in posting order
                System.out.println(wc.workRequestId() + " " + wc.opcode() + " " + wc.status());
            }
            System.out.println("read back: " + local.buffer().toString(4096, 21, StandardCharsets.US_ASCII));
            WorkCompletion received = serverCq.take(10, TimeUnit.SECONDS);     // the Send, after the Write
            System.out.println("server received: " + inbox.buffer().toString(0, (int) received.byteLength(),
                    StandardCharsets.US_ASCII) + ", its region holds: "
                    + exposed.buffer().toString(0, 21, StandardCharsets.US_ASCII));
            qp.disconnect().get(10, TimeUnit.SECONDS);                          // CLOSING, then ERROR
            serverQp.closeFuture().get(10, TimeUnit.SECONDS);                   // the peer goes down too
            System.out.println(qp.state() + " " + serverQp.state());
        }
    }
}
