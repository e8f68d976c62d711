package org.jiwarp.conformance.siw;

import java.time.Duration;

/**
 * What a command in the siw peer did: its exit status and its output, stdout and stderr together
 * in the order the guest wrote them.
 *
 * @param command  the shell command, as given
 * @param exitCode its exit status (137 when it was killed for time)
 * @param timedOut whether it was killed because its time ran out
 * @param output   stdout and stderr, combined
 * @param elapsed  host-side time from sending the command to having its answer
 */
public record ExecResult(String command, int exitCode, boolean timedOut, String output, Duration elapsed) {

    /** Exit status 0 and not killed for time. */
    public boolean succeeded() {
        return exitCode == 0 && !timedOut;
    }

    /** This result when it {@linkplain #succeeded() succeeded}; otherwise an AssertionError showing it. */
    public ExecResult orThrow() {
        if (!succeeded()) {
            throw new AssertionError("siw peer: " + this);
        }
        return this;
    }

    @Override
    public String toString() {
        String status = timedOut ? "timed out after " + elapsed.toMillis() + " ms" : "exit " + exitCode;
        return "`" + command + "`: " + status + (output.isEmpty() ? ", no output" : ", output:\n" + output);
    }
}
