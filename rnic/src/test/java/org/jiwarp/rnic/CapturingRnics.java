package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.rnic.cm.PcapCapture;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Two {@link Rnic}s over loopback capturing into one directory ({@code null}: no capture), for the
 * capture tests of {@code rnic} and {@code conformance-tests}; {@link #connect()} makes one
 * connected pair of queue pairs at a time, and each {@link Connection} runs a scenario whose
 * capture files the tests then read.
 */
public final class CapturingRnics implements AutoCloseable {

    private final Rnic serverRnic;
    private final Rnic clientRnic;
    private final RnicListener listener;
    private final BlockingQueue<QueuePair> toAccept = new LinkedBlockingQueue<>();
    private final BlockingQueue<CompletableFuture<QueuePair>> accepted = new LinkedBlockingQueue<>();

    public CapturingRnics(MpaSettings mpa, Path directory) {
        serverRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).capture(directory));
        clientRnic = Rnic.open(RnicOptions.defaults().threads(1).mpa(mpa).capture(directory));
        listener = serverRnic.listen(new InetSocketAddress("127.0.0.1", 0),
                request -> accepted.add(request.accept(toAccept.remove(), new byte[] {'o', 'k'})));
    }

    /** A new queue pair on each RNIC, connected. */
    public Connection connect() throws Exception {
        Connection c = new Connection(serverRnic, clientRnic);
        toAccept.add(c.server);
        clientRnic.connect(c.client, listener.localAddress(), new byte[] {'h', 'i'}).get(10, TimeUnit.SECONDS);
        accepted.poll(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        c.connected();
        return c;
    }

    /** Closing the RNICs closes what is still open, and every capture file with it. */
    @Override
    public void close() {
        listener.close();
        clientRnic.close();
        serverRnic.close();
    }

    /** One queue pair on each RNIC, each with a 64 KiB region open to everything. */
    public static final class Connection {
        public final CompletionQueue serverCq;
        public final CompletionQueue clientCq;
        public final QueuePair server;
        public final QueuePair client;
        public final MemoryRegion serverRegion;
        public final MemoryRegion clientRegion;
        private int clientPort;
        private int serverPort;

        Connection(Rnic serverRnic, Rnic clientRnic) {
            ProtectionDomain serverPd = serverRnic.allocatePd();
            ProtectionDomain clientPd = clientRnic.allocatePd();
            serverCq = serverRnic.createCq(256);
            clientCq = clientRnic.createCq(256);
            server = serverRnic.createQp(new QpConfig(serverPd, serverCq, serverCq).ird(4).ord(4).rfc7306(true));
            client = clientRnic.createQp(new QpConfig(clientPd, clientCq, clientCq).ird(4).ord(4).rfc7306(true));
            serverRegion = serverPd.register(ByteBuffer.allocateDirect(1 << 16), Access.ALL);
            clientRegion = clientPd.register(ByteBuffer.allocateDirect(1 << 16), Access.ALL);
        }

        /** Notes the ports once connected (the files are named after them). */
        private void connected() {
            clientPort = ((InetSocketAddress) client.localAddress()).getPort();
            serverPort = ((InetSocketAddress) client.remoteAddress()).getPort();
        }

        /** The client's capture file, {@code <local-port>-<remote-port>.pcap}. */
        public String clientFile() {
            return PcapCapture.fileName(clientPort, serverPort);
        }

        /** The server's capture file. */
        public String serverFile() {
            return PcapCapture.fileName(serverPort, clientPort);
        }

        /** Send, a three-segment Write, a two-segment Read, a Send back; checks the data moved. */
        public void sendWriteAndRead() throws Exception {
            RnicOperationsTest.fill(clientRegion.buffer(), 0, 1 << 16, 1);
            RnicOperationsTest.fill(serverRegion.buffer(), 0, 1 << 16, 2);
            server.postReceive(new ReceiveWorkRequest(1, new Sge(serverRegion, 0, 4096)));
            client.postReceive(new ReceiveWorkRequest(2, new Sge(clientRegion, 0, 4096)));
            client.postSend(SendWorkRequest.send(10, new Sge(clientRegion, 4096, 100)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            assertEquals(WcStatus.SUCCESS, take(serverCq).status());
            client.postSend(SendWorkRequest.write(11, serverRegion.address() + 8192, serverRegion.rkey(),
                    new Sge(clientRegion, 8192, 3000)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            client.postSend(SendWorkRequest.read(12, serverRegion.address() + 16384, serverRegion.rkey(),
                    new Sge(clientRegion, 16384, 2000)));
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            server.postSend(SendWorkRequest.send(13, new Sge(serverRegion, 4096, 10)));
            assertEquals(WcStatus.SUCCESS, take(serverCq).status());
            assertEquals(WcStatus.SUCCESS, take(clientCq).status());
            assertTrue(ByteBufUtil.equals(clientRegion.buffer(), 8192, serverRegion.buffer(), 8192, 3000));
            assertTrue(ByteBufUtil.equals(clientRegion.buffer(), 16384, serverRegion.buffer(), 16384, 2000));
            // Left open: closing the RNICs ends it. (QueuePair.disconnect() would first send an FPDU
            // with an empty ULPDU, which the peer answers with a DDP local catastrophic Terminate.)
        }

        /**
         * RFC 7306: Immediate Data with and without SE, then fetch-and-add, masked swap and masked
         * compare-and-swap, each checked by its completion.
         */
        public void atomicsAndImmediateData() throws Exception {
            server.postReceive(new ReceiveWorkRequest(1, new Sge(serverRegion, 0, 64)));
            server.postReceive(new ReceiveWorkRequest(2, new Sge(serverRegion, 0, 64)));
            client.postSend(SendWorkRequest.immediateData(30, 0x1122_3344_5566_7788L));
            client.postSend(SendWorkRequest.immediateData(31, 42).solicited());
            for (int i = 0; i < 2; i++) {
                assertEquals(WcStatus.SUCCESS, take(clientCq).status());
                assertEquals(WcOpcode.RECEIVE_IMMEDIATE_DATA, take(serverCq).opcode());
            }
            serverRegion.buffer().setLong(256, 40);
            long target = serverRegion.address() + 256;
            Sge result = new Sge(clientRegion, 512, 8);
            SendWorkRequest[] atomics = {
                SendWorkRequest.fetchAdd(32, target, serverRegion.rkey(), result, 2),
                SendWorkRequest.maskedSwap(33, target, serverRegion.rkey(), result, 0xAB00, 0xFF00),
                SendWorkRequest.maskedCompareSwap(34, target, serverRegion.rkey(), result, 0xAB2A, 0xFFFF, 7, -1L)};
            long[] before = {40, 42, 0xAB2A};
            for (int i = 0; i < atomics.length; i++) {
                client.postSend(atomics[i]);
                WorkCompletion wc = take(clientCq);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(before[i], wc.immediateData(), wc.toString());
            }
            assertEquals(7, serverRegion.buffer().getLong(256));
        }

        /** A Write to an STag the server never issued: DDP tagged invalid STag, one Terminate. */
        public void writeToAnInvalidStag() throws Exception {
            server.postReceive(new ReceiveWorkRequest(1, new Sge(serverRegion, 0, 64)));
            client.postSend(SendWorkRequest.write(20, serverRegion.address(), serverRegion.rkey() ^ 0x100,
                    new Sge(clientRegion, 0, 64)));
            client.closeFuture().get(10, TimeUnit.SECONDS);
            server.closeFuture().get(10, TimeUnit.SECONDS);
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, server.terminateSent());
            assertNotNull(client.terminateReceived(), "the client got no Terminate");
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, client.terminateReceived().error());
        }

        private static WorkCompletion take(CompletionQueue cq) throws InterruptedException {
            WorkCompletion wc = cq.take(10, TimeUnit.SECONDS);
            assertNotNull(wc, "no completion within 10 s");
            return wc;
        }
    }
}
