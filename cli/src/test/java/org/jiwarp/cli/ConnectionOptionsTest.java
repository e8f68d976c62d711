package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The options every connecting subcommand shares: {@code --emss} sizes the FPDUs of the RNIC they
 * open (RFC 5044 section 5.2), the Ethernet MSS of 1460 without it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ConnectionOptionsTest {

    @Command(name = "connecting")
    static final class Connecting implements Callable<Integer> {
        @Mixin
        ConnectionOptions connection;

        @Override
        public Integer call() {
            return 0;
        }
    }

    private static MpaSettings mpa(String... args) {
        Connecting command = new Connecting();
        new CommandLine(command).parseArgs(args);
        return command.connection.rnicOptions(1, null).mpa();
    }

    @Test
    void emssSizesTheFpdusOfTheRnicOpened() {
        int ethernet = mpa().mulpdu(false);
        assertTrue(ethernet < 1460, "without --emss FPDUs fit Ethernet's MSS: " + ethernet);
        assertEquals(65483, mpa("--emss", "65483").emss());
        int loopback = mpa("--emss", "65483").mulpdu(false);
        assertTrue(loopback > 60_000 && loopback <= 64_768, "FPDUs for loopback's MSS, within RFC 5044's bound: "
                + loopback);
    }
}
