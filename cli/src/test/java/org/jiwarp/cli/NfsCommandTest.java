package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.jiwarp.cli.PingCommandTest.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jiwarp.cli.DecodeCommandTest.Run;
import org.junit.jupiter.api.Test;

/**
 * {@code jiwarp nfs}'s usage and failures in words; its transfers against the Linux kernel NFS
 * server are in conformance-tests (SiwNfsInteropTest), its transport's over loopback in rpcrdma.
 */
class NfsCommandTest {

    @Test
    void usageErrorsSayWhatIsWrong() {
        Run unknown = jiwarp("nfs", "frob", "h:/x");
        assertEquals(Jiwarp.EXIT_USAGE, unknown.exit());
        assertTrue(unknown.err().contains("unknown action frob: give ls, stat, cat or put"), unknown.err());

        Run noPath = jiwarp("nfs", "cat", "somehost");
        assertEquals(Jiwarp.EXIT_USAGE, noPath.exit());
        assertTrue(noPath.err().contains("give the NFS path as HOST:/export/path, not somehost"), noPath.err());

        Run put = jiwarp("nfs", "put", "127.0.0.1:/x");
        assertEquals(Jiwarp.EXIT_USAGE, put.exit());
        assertTrue(put.err().contains("put takes a local file and HOST:/path"), put.err());

        Run size = jiwarp("nfs", "cat", "127.0.0.1:/x", "--rsize", "2097152");
        assertEquals(Jiwarp.EXIT_USAGE, size.exit());
        assertTrue(size.err().contains("--rsize and --wsize are 4096 to 1048576 octets"), size.err());
    }

    @Test
    void noMountServerIsOneSentence() throws Exception {
        int port = freePort();
        Run run = jiwarp("nfs", "ls", "127.0.0.1:/srv/nfs", "--mount-port", port);
        assertEquals(Jiwarp.EXIT_RUNTIME_ERROR, run.exit(), run.err());
        assertTrue(run.err().startsWith("jiwarp nfs: cannot connect to 127.0.0.1 port " + port + " over TCP"), run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertFalse(run.err().contains("Exception"), run.err());
    }
}
