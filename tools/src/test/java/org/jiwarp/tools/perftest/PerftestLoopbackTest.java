package org.jiwarp.tools.perftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.wire.perftest.Verb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code jiwarp perftest} against itself over loopback TCP, both roles in one JVM, each on its own
 * RNIC: the keys each side advertised are the ones the other used, the counts add up, the client's
 * report is the one the server prints, and both ends agree on the data (CRC-32C of the message
 * slots), for every test, with messages that cycle through a page and ones that do not.
 */
class PerftestLoopbackTest {

    private static final int ITERS = 300;

    private Rnic serverRnic;
    private Rnic clientRnic;

    @BeforeEach
    void open() {
        serverRnic = Rnic.open(RnicOptions.defaults().threads(1));
        clientRnic = Rnic.open(RnicOptions.defaults().threads(1));
    }

    @AfterEach
    void close() {
        clientRnic.close();
        serverRnic.close();
    }

    static Stream<Arguments> runs() {
        return Stream.of(
                Arguments.of(Verb.WRITE, false, 1000, null),
                Arguments.of(Verb.WRITE, false, 65536, null),
                Arguments.of(Verb.WRITE, false, 8, null),
                Arguments.of(Verb.READ, false, 1000, null),
                Arguments.of(Verb.READ, false, 20000, null),
                Arguments.of(Verb.SEND, false, 1000, null),
                Arguments.of(Verb.SEND, false, 3000, 30),
                Arguments.of(Verb.SEND, false, 65536, null),
                Arguments.of(Verb.WRITE, true, 2, null),
                Arguments.of(Verb.WRITE, true, 4096, null));
    }

    @ParameterizedTest(name = "{0} latency={1} -s {2} -r {3}")
    @MethodSource("runs")
    void bothRoles(Verb verb, boolean latency, int size, Integer rxDepth) throws Exception {
        PerftestParameters parameters = new PerftestParameters().verb(verb).latency(latency).size(size).iters(ITERS)
                .rxDepth(rxDepth).timeout(Duration.ofSeconds(20));
        List<String> serverOut = new CopyOnWriteArrayList<>();
        List<String> clientOut = new CopyOnWriteArrayList<>();
        List<String> log = new CopyOnWriteArrayList<>();
        PerftestServer server = PerftestServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0));
        CompletableFuture<PerftestResult> served = CompletableFuture.supplyAsync(() ->
                server.serve(serverRnic, parameters, Duration.ofSeconds(20), serverOut::add, log::add));
        PerftestResult client = PerftestClient.run(clientRnic, server.localAddress(), parameters, clientOut::add,
                log::add);
        PerftestResult srv = served.get(30, TimeUnit.SECONDS);

        assertEquals("6.06", client.peerVersion());
        assertEquals("6.06", srv.peerVersion());
        // The keys: what one side advertised is what the other received.
        assertEquals(client.local(), srv.remote());
        assertEquals(srv.local(), client.remote());
        assertEquals(parameters.outReads(), client.local().outReads());
        assertNotEquals(0, client.local().vaddr());
        assertNotEquals(0, srv.local().rkey());
        assertEquals(ITERS, client.operations(), client.checks());
        assertTrue(clientOut.stream().anyMatch(l -> l.startsWith(" remote address: LID 0000 QPN ")),
                clientOut::toString);

        if (latency) {
            assertEquals(ITERS, srv.operations());
            assertEquals(ITERS, client.latencies().iters());
            assertEquals(size, srv.latencies().size());
            assertTrue(client.latencies().min() > 0 && client.latencies().typical() >= client.latencies().min());
            assertNull(client.bandwidth());
            assertTrue(client.checks().contains("300/300 of the peer's Writes seen in order"), client.checks());
            assertTrue(log.stream().anyMatch(l -> l.contains("does not wait for the client's first FPDU")),
                    log::toString);
            return;
        }
        assertEquals(expectedCompletions(parameters), client.completions(), client.checks());
        assertEquals(size, client.bandwidth().size());
        assertEquals(ITERS, client.bandwidth().iters());
        assertTrue(client.bandwidth().bwAvg() > 0 && client.bandwidth().bwPeak() >= client.bandwidth().bwAvg() * 0.999,
                client.bandwidth()::toString);
        // Both ends saw the same data in the same slots.
        assertTrue(client.dataDigest() >= 0);
        assertEquals(client.dataDigest(), srv.dataDigest(), client.checks() + " / " + srv.checks());
        switch (verb) {
            case WRITE -> {
                assertEquals(client.bandwidth(), srv.bandwidth(), "the server prints the client's report");
                assertTrue(srv.checks().startsWith("placement: "), srv.checks());
            }
            case READ -> {
                assertEquals(client.bandwidth(), srv.bandwidth());
                assertTrue(client.checks().contains("read back in one more Read")
                        && client.checks().contains("matched"), client.checks());
            }
            case SEND -> {
                assertEquals(ITERS, srv.operations());
                assertEquals(0, srv.bandwidth().bwPeak(), "ib_send_bw's server has no peak");
                int rx = parameters.rxDepth();
                long credits = ITERS / (rx / 3);
                assertTrue(srv.checks().contains(ITERS + "/" + ITERS + " Sends received in order, each of " + size
                        + " octets; " + credits + " credit Writes completed"), srv.checks());
                if (rxDepth != null) {
                    // The server's room is 30: the client must have waited for credit.
                    assertTrue(client.checks().matches(".*waited [1-9][0-9]* times for credit, saw [1-9][0-9]* credit "
                            + "updates.*"), client.checks());
                }
            }
        }
        assertTrue(serverOut.contains(BwReport.HEADER) && clientOut.contains(BwReport.HEADER));
    }

    /**
     * {@code -l 10 -N}: Writes posted ten at a time as one chain, one completion per list (CQ
     * moderation follows the list), the banner's Post List line, perftest's warning that the peak
     * goes unmeasured and a peak of 0; after the report, the client says why jiwarp bench reports
     * more for the same operation, with the bench command that measures the same way.
     */
    @Test
    void postListNoPeakAndTheNoteOnTheFigures() throws Exception {
        PerftestParameters parameters = new PerftestParameters().size(4096).iters(ITERS).postList(10).noPeak(true)
                .timeout(Duration.ofSeconds(20));
        List<String> serverOut = new CopyOnWriteArrayList<>();
        List<String> clientOut = new CopyOnWriteArrayList<>();
        List<String> clientLog = new CopyOnWriteArrayList<>();
        PerftestServer server = PerftestServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0));
        CompletableFuture<PerftestResult> served = CompletableFuture.supplyAsync(() ->
                server.serve(serverRnic, parameters, Duration.ofSeconds(20), serverOut::add, line -> { }));
        PerftestResult client = PerftestClient.run(clientRnic, server.localAddress(), parameters, clientOut::add,
                clientLog::add);
        PerftestResult srv = served.get(30, TimeUnit.SECONDS);

        assertEquals(ITERS, client.operations());
        assertEquals(ITERS / 10, client.completions(), client.checks());
        assertEquals(client.dataDigest(), srv.dataDigest(), client.checks() + " / " + srv.checks());
        assertTrue(clientOut.contains(" Post List       : 10"), clientOut::toString);
        assertTrue(clientOut.contains(" WARNING: BW peak won't be measured in this run."), clientOut::toString);
        assertEquals(0, client.bandwidth().bwPeak());
        assertTrue(client.bandwidth().bwAvg() > 0);
        assertEquals(client.bandwidth(), srv.bandwidth(), "the server prints the client's report");
        int report = clientOut.indexOf(BwReport.HEADER);
        assertTrue(report > 0 && clientOut.get(report + 1).matches(" 4096 +300 +0\\.00 +[0-9.]+\\s+[0-9.]+"),
                clientOut::toString);
        assertTrue(clientLog.stream().anyMatch(l -> l.startsWith("about these figures: ") && l.contains("no warm-up")
                && l.contains("'jiwarp bench --op write -s 4096 -n 300 -t 128 -Q 10 --warmup 0 --emss 1460'")),
                clientLog::toString);
    }

    /**
     * {@code --perform_warm_up}: one TX depth of Writes (Reads) before the measured run, all
     * completed first; the run and its report count only the measured iterations, and both ends'
     * checks still pass.
     */
    @Test
    void performWarmUpRunsOneTxDepthFirst() throws Exception {
        for (Verb verb : new Verb[] {Verb.WRITE, Verb.READ}) {
            PerftestParameters parameters = new PerftestParameters().verb(verb).size(1000).iters(ITERS).txDepth(50)
                    .performWarmUp(true).timeout(Duration.ofSeconds(20));
            List<String> clientLog = new CopyOnWriteArrayList<>();
            PerftestServer server = PerftestServer.listen(serverRnic, new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<PerftestResult> served = CompletableFuture.supplyAsync(() ->
                    server.serve(serverRnic, parameters, Duration.ofSeconds(20), line -> { }, line -> { }));
            PerftestResult client = PerftestClient.run(clientRnic, server.localAddress(), parameters, line -> { },
                    clientLog::add);
            PerftestResult srv = served.get(30, TimeUnit.SECONDS);
            String op = verb == Verb.READ ? "RDMA Reads" : "RDMA Writes";
            assertTrue(clientLog.contains("warm-up: 50 " + op + " completed before the measured run"),
                    clientLog::toString);
            assertEquals(ITERS, client.operations(), client.checks());
            assertEquals(expectedCompletions(parameters), client.completions(), client.checks());
            assertEquals(ITERS, client.bandwidth().iters());
            assertEquals(client.dataDigest(), srv.dataDigest(), client.checks() + " / " + srv.checks());
        }
    }

    /** Signalled work: every CQ-moderation-th and the last. */
    private static long expectedCompletions(PerftestParameters p) {
        long n = 0;
        for (int k = 0; k < p.iters(); k++) {
            if (k % p.cqMod() == p.cqMod() - 1 || k == p.iters() - 1) {
                n++;
            }
        }
        return n;
    }
}
