package org.jiwarp.cli;

import java.io.PrintStream;
import java.util.function.IntConsumer;

/**
 * Ends the {@code jiwarp} command on an error the JVM cannot go on from: an {@link
 * OutOfMemoryError} (or any other {@link VirtualMachineError}) on any thread, an event loop's
 * included, ends the command with one sentence and exit status 3 instead of leaving a process
 * that refuses connections and ignores signals. The RNIC hands such an error from a connection to
 * its thread's uncaught exception handler; a thread that dies of one reaches it by itself. Other
 * uncaught exceptions are reported as the JVM reports them, and the command goes on.
 */
final class FatalErrors implements Thread.UncaughtExceptionHandler {

    /** The exit status after a fatal error (1 is a failed run, 2 a usage error). */
    static final int EXIT_STATUS = 3;

    private final PrintStream err;
    private final IntConsumer exit;

    FatalErrors(PrintStream err, IntConsumer exit) {
        this.err = err;
        this.exit = exit;
    }

    /** Makes this the default handler of every thread of the process; a fatal error halts it. */
    static void install() {
        Thread.setDefaultUncaughtExceptionHandler(new FatalErrors(System.err, Runtime.getRuntime()::halt));
    }

    @Override
    public void uncaughtException(Thread thread, Throwable error) {
        if (!(error instanceof VirtualMachineError)) {
            err.print("jiwarp: thread " + thread.getName() + " failed: ");
            error.printStackTrace(err);
            return;
        }
        err.println("jiwarp: " + (error instanceof OutOfMemoryError ? "out of memory" : "the Java VM failed")
                + " in thread " + thread.getName() + ", so the command stops (give it more with "
                + "JIWARP_JAVA_OPTS=-Xmx...)");
        err.flush();
        exit.accept(EXIT_STATUS);
    }
}
