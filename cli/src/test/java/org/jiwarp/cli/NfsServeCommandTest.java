package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.jiwarp.rpcrdma.RpcException;
import org.jiwarp.rpcrdma.TcpRpcClient;
import org.jiwarp.rpcrdma.nfs.Nfs3Client;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code jiwarp nfs serve}: its argument errors in one sentence, and the real command serving a
 * directory to {@code jiwarp nfs put}, {@code cat} and {@code ls} over loopback.
 */
class NfsServeCommandTest {

    private static final Pattern SERVING = Pattern.compile("(?m)^serving (\\S+): NFSv3 over RDMA on "
            + "127\\.0\\.0\\.1:(\\d+), over TCP on 127\\.0\\.0\\.1:(\\d+), MOUNT on TCP 127\\.0\\.0\\.1:(\\d+) \\(");

    @TempDir
    Path temp;

    @Test
    @Timeout(60)
    void aBadDirectoryIsOneSentence() throws Exception {
        Path missing = temp.resolve("missing");
        Run none = jiwarp("nfs", "serve", missing, "--port", 0, "--tcp-port", 0, "--mount-port", 0);
        assertEquals(Jiwarp.EXIT_USAGE, none.exit(), none.err());
        assertEquals("jiwarp nfs serve: no such directory: " + missing + " (see 'jiwarp nfs serve --help')\n",
                none.err());

        Path file = Files.writeString(temp.resolve("file"), "x");
        Run notDir = jiwarp("nfs", "serve", file, "--port", 0, "--tcp-port", 0, "--mount-port", 0);
        assertEquals(Jiwarp.EXIT_USAGE, notDir.exit(), notDir.err());
        assertEquals("jiwarp nfs serve: " + file + " is not a directory (see 'jiwarp nfs serve --help')\n",
                notDir.err());

        Run port = jiwarp("nfs", "serve", temp, "--tcp-port", 70000);
        assertEquals(Jiwarp.EXIT_USAGE, port.exit(), port.err());
        assertTrue(port.err().startsWith("jiwarp nfs serve: --tcp-port must be a TCP port, 0 to 65535, not 70000"),
                port.err());
    }

    @Test
    @Timeout(60)
    void aPortInUseIsOneSentence() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int taken = busy.getLocalPort();
            Run tcp = jiwarp("nfs", "serve", temp, "--bind", "127.0.0.1", "--port", 0, "--tcp-port", taken,
                    "--mount-port", 0);
            assertEquals(Jiwarp.EXIT_RUNTIME_ERROR, tcp.exit(), tcp.err());
            assertTrue(tcp.err().startsWith("jiwarp nfs serve: cannot listen on 127.0.0.1 port " + taken
                    + " over TCP: "), tcp.err());
            assertEquals(1, tcp.err().strip().lines().count(), tcp.err());
            assertFalse(tcp.err().contains("Exception"), tcp.err());

            Run rdma = jiwarp("nfs", "serve", temp, "--bind", "127.0.0.1", "--port", taken, "--tcp-port", 0,
                    "--mount-port", 0);
            assertEquals(Jiwarp.EXIT_RUNTIME_ERROR, rdma.exit(), rdma.err());
            assertTrue(rdma.err().startsWith("jiwarp nfs serve: cannot listen on 127.0.0.1 port " + taken
                    + " for RPC-over-RDMA: "), rdma.err());
            assertEquals(1, rdma.err().strip().lines().count(), rdma.err());

            Run mount = jiwarp("nfs", "serve", temp, "--bind", "127.0.0.1", "--port", 0, "--no-tcp",
                    "--mount-port", taken);
            assertEquals(Jiwarp.EXIT_RUNTIME_ERROR, mount.exit(), mount.err());
            assertTrue(mount.err().startsWith("jiwarp nfs serve: cannot listen on 127.0.0.1 port " + taken
                    + " over TCP: "), mount.err());
        }
    }

    @Test
    @Timeout(30)
    void theClientsActionsAndHelpAreAsBefore() {
        Run help = jiwarp("nfs", "--help");
        assertEquals(0, help.exit(), help.err());
        assertTrue(help.out().contains("jiwarp nfs serve DIR"), help.out());
        assertTrue(help.out().contains("serve "), help.out());
        Run unknown = jiwarp("nfs", "frob", "h:/x");
        assertEquals(Jiwarp.EXIT_USAGE, unknown.exit());
        assertTrue(unknown.err().contains("unknown action frob: give ls, stat, cat or put"), unknown.err());
        Run serveHelp = jiwarp("nfs", "serve", "--help");
        assertEquals(0, serveHelp.exit(), serveHelp.err());
        assertTrue(serveHelp.out().contains("--tcp-port"), serveHelp.out());
    }

    /**
     * The real command on port 0 everywhere, the ports read from its serving line, then {@code
     * jiwarp nfs put}, {@code cat} and {@code ls} against it over RDMA, a NULL call over TCP, and a
     * status line; it stops when interrupted.
     */
    @Test
    @Timeout(120)
    void servesADirectoryToTheClientCommands() throws Exception {
        Path export = Files.createDirectory(temp.resolve("export"));
        Path local = temp.resolve("local");
        byte[] data = new byte[(3 << 20) + 12345];
        new Random(24).nextBytes(data);
        Files.write(local, data);

        StringBuffer err = new StringBuffer();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread serving = new Thread(() -> {
            CommandLine line = Jiwarp.commandLine();
            line.setOut(new PrintWriter(new StringWriter()));
            line.setErr(new PrintWriter(new BufferWriter(err), true));
            exit.complete(line.execute("nfs", "serve", export.toString(), "--bind", "127.0.0.1", "--port", "0",
                    "--tcp-port", "0", "--mount-port", "0"));
        }, "nfs-serve");
        serving.start();
        try {
            Matcher serve = await(err, exit, SERVING);
            String path = serve.group(1);
            int rdma = Integer.parseInt(serve.group(2));
            int tcp = Integer.parseInt(serve.group(3));
            int mount = Integer.parseInt(serve.group(4));
            assertTrue(rdma > 0 && tcp > 0 && mount > 0, err.toString());
            assertEquals(export.toAbsolutePath().toString(), path);

            String target = "127.0.0.1:" + path + "/copy";
            Run put = jiwarp("nfs", "put", local, target, "--port", rdma, "--mount-port", mount);
            assertEquals(0, put.exit(), put.err() + "\nserver: " + err);
            assertArrayEquals(data, Files.readAllBytes(export.resolve("copy")));

            Path back = temp.resolve("back");
            Run cat = jiwarp("nfs", "cat", target, "-o", back, "--port", rdma, "--mount-port", mount);
            assertEquals(0, cat.exit(), cat.err() + "\nserver: " + err);
            assertArrayEquals(data, Files.readAllBytes(back));

            Run ls = jiwarp("nfs", "ls", "127.0.0.1:" + path, "--port", rdma, "--mount-port", mount);
            assertEquals(0, ls.exit(), ls.err() + "\nserver: " + err);
            assertEquals("copy\n", ls.out());

            // The same over TCP, to the same server.
            String overTcp = "127.0.0.1:" + path + "/copy-tcp";
            Run putTcp = jiwarp("nfs", "put", local, overTcp, "--tcp", "--tcp-port", tcp, "--mount-port", mount);
            assertEquals(0, putTcp.exit(), putTcp.err() + "\nserver: " + err);
            assertArrayEquals(data, Files.readAllBytes(export.resolve("copy-tcp")), "written over TCP");
            Path backTcp = temp.resolve("back-tcp");
            Run catTcp = jiwarp("nfs", "cat", overTcp, "-o", backTcp, "--tcp", "--tcp-port", tcp, "--mount-port", mount);
            assertEquals(0, catTcp.exit(), catTcp.err() + "\nserver: " + err);
            assertArrayEquals(data, Files.readAllBytes(backTcp), "read over TCP");

            try (TcpRpcClient client = TcpRpcClient.connect(new InetSocketAddress("127.0.0.1", tcp))) {
                client.call(Nfs3Client.NFS_PROGRAM, 3, 0, null, a -> { }).release(); // NULL over TCP
                // Linux's client asks NFSACL (100227) on the NFS port; an NFS answer would read as an ACL.
                RpcException acl = assertThrows(RpcException.class,
                        () -> client.call(100227, 3, 0, null, a -> { }).release());
                assertEquals("the server does not offer this RPC program", acl.getMessage());
            }
            try (TcpRpcClient client = TcpRpcClient.connect(new InetSocketAddress("127.0.0.1", mount))) {
                RpcException nfs = assertThrows(RpcException.class,
                        () -> client.call(Nfs3Client.NFS_PROGRAM, 3, 0, null, a -> { }).release());
                assertEquals("the server does not offer this RPC program", nfs.getMessage(), "NFS on the MOUNT port");
            }
            await(err, exit, Pattern.compile("serve: (\\d+) calls, \\d+\\.\\d MB read, \\d+\\.\\d MB written"));
        } finally {
            serving.interrupt();
        }
        assertEquals(0, exit.get(60, TimeUnit.SECONDS), err.toString());
        assertTrue(err.toString().endsWith("jiwarp nfs serve: stopped\n"), err.toString());
    }

    /** Waits for {@code pattern} in what the command wrote, failing at once if the command ends. */
    private static Matcher await(StringBuffer err, CompletableFuture<Integer> exit, Pattern pattern)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Matcher m = pattern.matcher(err.toString());
            if (m.find()) {
                return m;
            }
            if (exit.isDone()) {
                throw new AssertionError("the server ended (exit " + exit.join() + ") without '" + pattern + "': "
                        + err);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no '" + pattern + "' from the server within 30 s: " + err);
            }
            Thread.sleep(20);
        }
    }

    /** A writer into a StringBuffer another thread reads. */
    private static final class BufferWriter extends java.io.Writer {
        private final StringBuffer buffer;

        BufferWriter(StringBuffer buffer) {
            this.buffer = buffer;
        }

        @Override
        public void write(char[] chars, int offset, int length) {
            buffer.append(chars, offset, length);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
