package org.jiwarp.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The watchdog reads the deadline in JUnit's syntax, as the parent pom writes it per module. (That
 * it halts a JVM whose test ignores the interrupt was seen once, by hand: a spinning test with a
 * 3 s deadline and a 5 s grace ended its surefire fork with exit code 3, named as the crashed test.)
 */
class HangWatchdogTest {

    @Test
    void readsJUnitsDurationSyntax() {
        assertEquals(Duration.ofMinutes(2), HangWatchdog.parse("2 m"));
        assertEquals(Duration.ofMinutes(15), HangWatchdog.parse("15m"));
        assertEquals(Duration.ofSeconds(120), HangWatchdog.parse("120 s"));
        assertEquals(Duration.ofSeconds(30), HangWatchdog.parse("30"));
        assertEquals(Duration.ofMillis(250), HangWatchdog.parse(" 250 ms "));
        assertEquals(Duration.ofHours(1), HangWatchdog.parse("1 h"));
        assertThrows(IllegalArgumentException.class, () -> HangWatchdog.parse("two minutes"));
    }

    @Test
    void everyTestOfThisBuildHasADeadline() {
        String value = System.getProperty(HangWatchdog.DEFAULT_TIMEOUT);
        assertEquals(false, value == null || value.isBlank() || value.startsWith("${"),
                "surefire passes " + HangWatchdog.DEFAULT_TIMEOUT + " to every test JVM (jiwarp.testTimeout)");
        HangWatchdog.parse(value);
    }
}
