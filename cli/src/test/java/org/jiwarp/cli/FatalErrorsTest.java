package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the command does with an error a thread did not catch: out of memory stops it, in one sentence. */
class FatalErrorsTest {

    @Test
    void outOfMemoryOnAnEventLoopEndsTheCommandWithOneSentenceAndStatusThree() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<Integer> exits = new ArrayList<>();
        FatalErrors handler = new FatalErrors(new PrintStream(err, true, StandardCharsets.UTF_8), exits::add);
        handler.uncaughtException(new Thread("multiThreadIoEventLoopGroup-3-1"), new OutOfMemoryError("Java heap space"));
        String said = err.toString(StandardCharsets.UTF_8);
        assertEquals(List.of(FatalErrors.EXIT_STATUS), exits);
        assertEquals(1, said.lines().count(), said);
        assertTrue(said.startsWith("jiwarp: out of memory in thread multiThreadIoEventLoopGroup-3-1"), said);
        assertFalse(said.contains("java.lang"), "a Java class name: " + said);
    }

    @Test
    void anotherUncaughtExceptionIsReportedAndTheCommandGoesOn() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<Integer> exits = new ArrayList<>();
        FatalErrors handler = new FatalErrors(new PrintStream(err, true, StandardCharsets.UTF_8), exits::add);
        handler.uncaughtException(new Thread("worker"), new IllegalStateException("a listener failed"));
        assertTrue(exits.isEmpty(), "the command stopped on an ordinary exception");
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("a listener failed"));
    }
}
