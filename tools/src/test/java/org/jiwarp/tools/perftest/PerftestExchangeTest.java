package org.jiwarp.tools.perftest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jiwarp.rnic.Access;
import org.jiwarp.rnic.CompletionQueue;
import org.jiwarp.rnic.ConnectRequest;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.ProtectionDomain;
import org.jiwarp.rnic.QpConfig;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicListener;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;
import org.jiwarp.rnic.WcStatus;
import org.jiwarp.rnic.WorkCompletion;
import org.jiwarp.wire.perftest.PerftestWire;
import org.jiwarp.wire.perftest.PingpongDest;
import org.jiwarp.wire.perftest.Verb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The exchange octet by octet: a scripted perftest peer (the package javadoc's table, played by
 * hand on the raw RNIC API) against jiwarp's client (ib_write_bw) and jiwarp's server (ib_send_bw
 * with iWARP credits), checking the order, the length and the content of every control message and
 * what the data connection carries.
 */
class PerftestExchangeTest {

    private static final byte[] ZEROS = new byte[56];

    private Rnic jiwarp;
    private Rnic scripted;

    @BeforeEach
    void open() {
        jiwarp = Rnic.open(RnicOptions.defaults().threads(1));
        scripted = Rnic.open(RnicOptions.defaults().threads(1));
    }

    @AfterEach
    void close() {
        jiwarp.close();
        scripted.close();
    }

    /** A scripted ib_write_bw server, as perftest 6.06's server behaves, against jiwarp's client. */
    @Test
    void writeBandwidthClientAgainstAScriptedServer() throws Exception {
        BlockingQueue<ConnectRequest> requests = new LinkedBlockingQueue<>();
        RnicListener listener = scripted.listen(new InetSocketAddress("127.0.0.1", 0), requests::add);
        int iters = 50;
        int size = 1000;
        PerftestParameters parameters = new PerftestParameters().size(size).iters(iters).cqMod(10)
                .timeout(Duration.ofSeconds(10)).settle(Duration.ZERO);
        List<String> out = new ArrayList<>();
        CompletableFuture<PerftestResult> client = CompletableFuture.supplyAsync(() ->
                PerftestClient.run(jiwarp, listener.localAddress(), parameters, out::add, line -> { }));

        ProtectionDomain pd = scripted.allocatePd();
        ConnectRequest first = requests.poll(10, TimeUnit.SECONDS);
        assertNotNull(first);
        assertEquals(0, first.privateData().length, "no private data of perftest's own");
        ScriptedPeer control = new ScriptedPeer(scripted, pd);
        first.accept(control.qp, new byte[0]).get(10, TimeUnit.SECONDS);

        // The client sends first in every exchange.
        byte[] version = control.receive(16);
        assertEquals("6.06", PerftestWire.cString(version), "the C string perftest reads");
        assertEquals(new PerftestWire.JiwarpRun(Verb.WRITE, false, iters, size), PerftestWire.jiwarpRun(version),
                "jiwarp's run after the NUL");
        control.send(PerftestWire.version("6.06"));
        assertEquals(4096, ByteBuffer.wrap(control.receive(4)).getInt(), "cycle buffer, big-endian");
        control.send(PerftestWire.int32(8192));
        assertEquals(64, ByteBuffer.wrap(control.receive(4)).getInt(), "cache line");
        control.send(PerftestWire.int32(64));
        assertArrayEquals(new byte[] {'5', 0}, control.receive(2), "MTU as \"%d\" of enum ibv_mtu");
        control.send(new byte[] {'3', 0});
        assertArrayEquals(ZEROS, control.receive(56), "handshake before the test connection");
        control.send(ZEROS);

        ConnectRequest second = requests.poll(10, TimeUnit.SECONDS);
        assertNotNull(second, "the test connection");
        CompletionQueue cq = scripted.createCq(8);
        QueuePair test = scripted.createQp(new QpConfig(pd, cq, cq).ird(1).ord(1));
        second.accept(test, new byte[0]).get(10, TimeUnit.SECONDS);
        listener.close();
        assertArrayEquals(ZEROS, control.receive(56), "handshake after the test connection");
        control.send(ZEROS);

        // The peer's page is 8192: the client's messages cycle through 8 slots of 1024.
        ByteBuffer memory = ByteBuffer.allocateDirect(2 * 8192);
        MemoryRegion region = pd.register(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        PingpongDest mine = new PingpongDest(0, 1, test.number(), 0x123456, region.rkey(), region.address() + 8192,
                new byte[16], 0, 0);
        PingpongDest theirs = null;
        for (int i = 0; i < 3; i++) {
            PingpongDest received = PingpongDest.decode(control.receive(56));
            if (theirs != null) {
                assertEquals(theirs, received, "the same keys every time");
            }
            theirs = received;
            control.send(mine.encode());
        }
        assertEquals(1, theirs.outReads());
        assertNotEquals(0, theirs.rkey());
        assertNotEquals(0, theirs.vaddr());
        assertNotEquals(0, theirs.qpn());
        assertEquals(theirs, PingpongDest.decode(control.receive(56)), "the client's done handshake");
        // By now the client has all its Writes completed, which means sent: they travel on the test
        // connection and this handshake on the control one, so wait for them to be placed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!everySlotWritten(memory, size) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        for (int slot = 0; slot < 8; slot++) {
            int at = 8192 + slot * 1024;
            assertTrue(slotWritten(memory, at, size), "slot " + slot + " untouched");
            for (int i = at + size; i < at + 1024; i++) {
                assertEquals(0, memory.get(i), "gap after slot " + slot + " written at " + i);
            }
        }
        control.send(mine.encode());

        // The report: size, iterations, peak, average, rate; 8 big-endian octets each.
        assertEquals(size, ByteBuffer.wrap(control.receive(8)).getLong());
        control.send(new byte[8]);
        assertEquals(iters, ByteBuffer.wrap(control.receive(8)).getLong());
        control.send(new byte[8]);
        for (String figure : new String[] {"peak", "average", "rate"}) {
            double value = ByteBuffer.wrap(control.receive(8)).getDouble();
            assertTrue(value > 0 && Double.isFinite(value), figure + " " + value);
            control.send(new byte[8]);
        }
        assertEquals(theirs, PingpongDest.decode(control.receive(56)), "closing handshake");
        control.send(mine.encode());

        PerftestResult result = client.get(20, TimeUnit.SECONDS);
        assertEquals(iters, result.operations());
        assertEquals(5, result.completions(), "every 10th and the last signalled");
        assertEquals(mine, result.remote());
        assertTrue(out.contains(" remote address: LID 0000 QPN " + String.format("0x%04x", test.number())
                + " PSN 0x123456 RKey " + String.format("0x%06x", region.rkey()) + " VAddr "
                + String.format("0x%014x", region.address() + 8192)), out::toString);
        region.deregister();
    }

    /** A scripted ib_send_bw client with perftest's iWARP credit window against jiwarp's server. */
    @Test
    void sendBandwidthServerAgainstAScriptedClientReturnsCredit() throws Exception {
        int iters = 60;
        int size = 100;
        int rxDepth = 12;
        PerftestParameters parameters = new PerftestParameters().verb(Verb.SEND).size(size).iters(iters)
                .rxDepth(rxDepth).timeout(Duration.ofSeconds(10));
        PerftestServer server = PerftestServer.listen(jiwarp, new InetSocketAddress("127.0.0.1", 0));
        CompletableFuture<PerftestResult> served = CompletableFuture.supplyAsync(() ->
                server.serve(jiwarp, parameters, Duration.ofSeconds(10), line -> { }, line -> { }));

        ProtectionDomain pd = scripted.allocatePd();
        ScriptedPeer control = new ScriptedPeer(scripted, pd);
        scripted.connect(control.qp, server.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
        control.send(PerftestWire.version("6.06"));
        assertEquals("6.06", PerftestWire.cString(control.receive(16)));
        control.send(PerftestWire.int32(4096));
        assertEquals(4096, PerftestWire.int32(control.receive(4)));
        control.send(PerftestWire.int32(64));
        assertEquals(64, PerftestWire.int32(control.receive(4)));
        control.send(new byte[] {'3', 0});
        assertEquals(5, PerftestWire.mtu(control.receive(2)));
        control.send(ZEROS);
        assertArrayEquals(ZEROS, control.receive(56));

        CompletionQueue cq = scripted.createCq(64);
        QueuePair test = scripted.createQp(new QpConfig(pd, cq, cq).ird(1).ord(1).sendDepth(32));
        scripted.connect(test, server.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
        control.send(ZEROS);
        assertArrayEquals(ZEROS, control.receive(56));

        // perftest's ctrl_buf: two words, the second the credit word the server writes.
        ByteBuffer credit = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
        MemoryRegion creditRegion = pd.register(credit, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        MemoryRegion data = pd.register(ByteBuffer.allocateDirect(8192), Access.LOCAL_WRITE);
        PingpongDest mine = new PingpongDest(0, 1, test.number(), 0x42, creditRegion.rkey(),
                creditRegion.address() + 4, new byte[16], 0, 0);
        PingpongDest theirs = null;
        for (int i = 0; i < 4; i++) {
            control.send(mine.encode());
            theirs = PingpongDest.decode(control.receive(56));
        }
        assertNotEquals(0, theirs.rkey(), "the server's credit word");

        // run_iter_bw with credits: never more than rx depth Sends beyond the returned credit.
        int waits = 0;
        long completed = 0;
        for (int scnt = 0; scnt < iters; scnt++) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (scnt + 1 - credit.getInt(4) >= rxDepth) {
                waits++;
                assertTrue(System.nanoTime() < deadline, "no credit beyond " + credit.getInt(4));
                Thread.sleep(1);
            }
            test.postSend(SendWorkRequest.send(scnt, new Sge(data, (scnt % 4) * 128L, size)));
            WorkCompletion wc;
            while ((wc = cq.take(0, TimeUnit.NANOSECONDS)) != null) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                completed++;
            }
        }
        while (completed < iters) {
            WorkCompletion wc = cq.take(10, TimeUnit.SECONDS);
            assertNotNull(wc);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            completed++;
        }
        assertTrue(waits > 0, "a window of 12 for 60 Sends must have made the client wait");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (credit.getInt(4) != iters && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        // Credit after every rx_depth / 3 = 4 receives, the count as a little-endian word.
        assertEquals(iters, credit.getInt(4));
        assertEquals(0, credit.getInt(0), "the server writes only the credit word");

        control.send(mine.encode());
        assertEquals(theirs, PingpongDest.decode(control.receive(56)), "closing handshake");
        PerftestResult result = served.get(20, TimeUnit.SECONDS);
        assertEquals(iters, result.operations());
        assertTrue(result.checks().contains("60/60 Sends received in order, each of 100 octets; 15 credit Writes"),
                result.checks());
        creditRegion.deregister();
        data.deregister();
    }

    /**
     * A scripted ib_write_bw client whose Write names an STag the server never advertised, then
     * gives up and closes the control connection, as perftest does after a failed completion: the
     * server's failure names the Terminate on the test connection first, not only the control
     * receive that was flushed after it.
     */
    @Test
    void aServerWhoseTestConnectionEndsInATerminateSaysSo() throws Exception {
        PerftestParameters parameters = new PerftestParameters().size(1000).iters(50)
                .timeout(Duration.ofSeconds(10));
        PerftestServer server = PerftestServer.listen(jiwarp, new InetSocketAddress("127.0.0.1", 0));
        CompletableFuture<PerftestResult> served = CompletableFuture.supplyAsync(() ->
                server.serve(jiwarp, parameters, Duration.ofSeconds(10), line -> { }, line -> { }));

        ProtectionDomain pd = scripted.allocatePd();
        ScriptedPeer control = new ScriptedPeer(scripted, pd);
        scripted.connect(control.qp, server.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
        control.send(PerftestWire.version("6.06"));
        control.receive(16);
        control.send(PerftestWire.int32(4096));
        control.receive(4);
        control.send(PerftestWire.int32(64));
        control.receive(4);
        control.send(new byte[] {'3', 0});
        control.receive(2);
        control.send(ZEROS);
        control.receive(56);
        CompletionQueue cq = scripted.createCq(8);
        QueuePair test = scripted.createQp(new QpConfig(pd, cq, cq).ird(1).ord(1));
        scripted.connect(test, server.localAddress(), new byte[0]).get(10, TimeUnit.SECONDS);
        control.send(ZEROS);
        control.receive(56);
        MemoryRegion data = pd.register(ByteBuffer.allocateDirect(4096), Access.LOCAL_WRITE);
        PingpongDest mine = new PingpongDest(0, 1, test.number(), 0x42, data.rkey(), data.address(), new byte[16],
                0, 0);
        PingpongDest theirs = null;
        for (int i = 0; i < 3; i++) {
            control.send(mine.encode());
            theirs = PingpongDest.decode(control.receive(56));
        }
        // Another key of the same STag index: one the server never advertised.
        test.postSend(SendWorkRequest.write(1, theirs.vaddr(), theirs.rkey() ^ 0x5a, new Sge(data, 0, 1000)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (test.terminateReceived() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertNotNull(test.terminateReceived(), "the server's Terminate");
        control.qp.disconnect();

        Throwable failure = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> served.get(20, TimeUnit.SECONDS)).getCause();
        assertTrue(failure instanceof PerftestException, failure::toString);
        assertTrue(failure.getMessage().startsWith("this end sent a Terminate on the test connection: "),
                failure.getMessage());
        assertTrue(failure.getMessage().contains("; then handshake: client done: receiving it on the control "
                + "connection failed"), failure.getMessage());
        data.deregister();
    }

    private static boolean everySlotWritten(ByteBuffer memory, int size) {
        for (int slot = 0; slot < 8; slot++) {
            if (!slotWritten(memory, 8192 + slot * 1024, size)) {
                return false;
            }
        }
        return true;
    }

    private static boolean slotWritten(ByteBuffer memory, int at, int size) {
        for (int i = at; i < at + size; i++) {
            if (memory.get(i) != 0) {
                return true;
            }
        }
        return false;
    }

}
