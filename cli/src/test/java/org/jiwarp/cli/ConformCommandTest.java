package org.jiwarp.cli;

import static org.jiwarp.cli.DecodeCommandTest.jiwarp;
import static org.jiwarp.cli.PingCommandTest.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jiwarp.cli.DecodeCommandTest.Run;
import org.junit.jupiter.api.Test;

/** {@code jiwarp conform} against jiwarp's own rping, in both roles, over real loopback TCP. */
class ConformCommandTest {

    @Test
    void explore() throws Exception {
        int port = freePort();
        AtomicBoolean stop = new AtomicBoolean();
        Thread clients = new Thread(() -> {
            while (!stop.get()) {
                jiwarp("ping", "-c", "-a", "127.0.0.1", "-p", port, "-C", "1", "--quiet");
            }
        });
        clients.setDaemon(true);
        clients.start();
        Run run = jiwarp("conform", "--listen", port);
        stop.set(true);
        System.out.println(run.out());
        System.out.println(run.err());
        assertEquals(0, run.exit());
    }
}
