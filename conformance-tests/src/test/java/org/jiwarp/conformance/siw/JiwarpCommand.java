package org.jiwarp.conformance.siw;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.jiwarp.cli.Jiwarp;
import picocli.CommandLine;

/**
 * The {@code jiwarp} command line run in this JVM, as a user would type it: its exit code and what
 * it printed. {@link #start} runs it on its own thread (a server), with its output readable while it
 * runs.
 */
final class JiwarpCommand {

    /** What a finished command did. */
    record Run(String command, int exit, String out, String err) {
        @Override
        public String toString() {
            return "`" + command + "`: exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    private final String command;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final String[] args;

    private JiwarpCommand(Object... args) {
        this.args = Arrays.stream(args).map(Object::toString).toArray(String[]::new);
        this.command = "jiwarp " + String.join(" ", this.args);
    }

    /** Runs {@code jiwarp args...} to its end. */
    static Run run(Object... args) {
        return new JiwarpCommand(args).execute();
    }

    /** Starts {@code jiwarp args...} on a thread of its own. */
    static Started start(Object... args) {
        JiwarpCommand command = new JiwarpCommand(args);
        CompletableFuture<Run> run = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                run.complete(command.execute());
            } catch (Throwable t) {
                run.completeExceptionally(t);
            }
        }, "jiwarp-" + command.args[0]);
        thread.setDaemon(true);
        thread.start();
        return new Started(command, run, thread);
    }

    /** A command running on its own thread. */
    record Started(JiwarpCommand command, CompletableFuture<Run> run, Thread thread) {

        /**
         * Stops it as a user's Ctrl-C stops a server that runs until stopped (its thread
         * interrupted) and waits for it to end.
         *
         * @throws AssertionError when it has not ended within {@code timeout}
         */
        Run stop(Duration timeout) throws InterruptedException {
            thread.interrupt();
            thread.join(timeout.toMillis());
            if (!run.isDone()) {
                throw new AssertionError("`" + command.command + "` did not end within " + timeout.toMillis()
                        + " ms of being stopped; stderr so far:\n" + command.err);
            }
            return run.join();
        }

        /** What it printed on stderr so far. */
        String err() {
            return command.err.toString();
        }

        /** Waits until its stderr contains {@code text} (a server's "serving on" line). */
        void awaitErr(String text, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!command.err.toString().contains(text)) {
                if (run.isDone()) {
                    throw new AssertionError("`" + command.command + "` ended before printing '" + text + "': "
                            + run.join());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("`" + command.command + "` did not print '" + text + "' within "
                            + timeout.toMillis() + " ms; stderr so far:\n" + command.err);
                }
                Thread.sleep(20);
            }
        }
    }

    private Run execute() {
        CommandLine line = Jiwarp.commandLine();
        line.setOut(new PrintWriter(out, true));
        line.setErr(new PrintWriter(err, true));
        int exit = line.execute(args);
        return new Run(command, exit, out.toString(), err.toString());
    }
}
