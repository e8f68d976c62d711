package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's verbs example, compiled and run: the code between the markers below is the code in
 * README.md between its {@code verbs-example} markers, character for character (the test compares
 * them), and what it prints is checked.
 */
class ReadmeExampleTest {

    static void example() throws Exception {
        // README verbs example begins
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
        // README verbs example ends
    }

    @Test
    void theReadmeExampleIsThisCodeAndRuns() throws Exception {
        assertEquals(block(Path.of("src/test/java/org/jiwarp/rnic/ReadmeExampleTest.java"),
                "// README verbs example begins", "// README verbs example ends"),
                block(Path.of("../README.md"), "<!-- verbs-example -->", "<!-- /verbs-example -->"),
                "README.md's verbs example and this test's must be the same code");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            example();
        } finally {
            System.setOut(out);
        }
        assertEquals(List.of(
                "10 RDMA_WRITE SUCCESS",
                "11 RDMA_READ SUCCESS",
                "12 SEND SUCCESS",
                "read back: written by RDMA Write",
                "server received: done, its region holds: written by RDMA Write",
                "ERROR ERROR"), printed.toString(StandardCharsets.UTF_8).lines().toList());
    }

    /** The lines between two marker lines, without the code fence, with their common indentation removed. */
    private static String block(Path file, String begin, String end) throws IOException {
        List<String> lines = Files.readAllLines(file);
        int from = -1;
        int to = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().equals(begin)) {
                from = i + 1;
            } else if (lines.get(i).trim().equals(end) && from >= 0) {
                to = i;
                break;
            }
        }
        if (from < 0 || to < 0) {
            throw new AssertionError(file + " has no block between " + begin + " and " + end);
        }
        List<String> code = lines.subList(from, to).stream().filter(l -> !l.startsWith("```")).toList();
        int indent = code.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        return String.join("\n", code.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    }
}
