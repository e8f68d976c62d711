package org.jiwarp.conform;

import org.jiwarp.wire.rdmap.TerminateError;

/**
 * One case's outcome against the target.
 *
 * @param testCase the case
 * @param verdict PASS, FAIL or KNOWN
 * @param observed what the target did, in words
 * @param known why a failure is a known deviation of the target, or {@code null}
 * @param hung the case was cut off
 * @param millis how long the case took, connection and setup included
 * @param terminate the error of the Terminate the target sent once the case began, as the RFC layout
 *     reads it, or {@code null} when it sent none (or none that names an error): what an in-process
 *     run compares with the target's own account
 */
public record CaseResult(ConformCase testCase, Verdict verdict, String observed, String known, boolean hung,
        long millis, TerminateError terminate) {

    static CaseResult of(ConformCase c, Judgement j, KnownDeviations known, long millis, TerminateError terminate) {
        if (j.pass()) {
            return new CaseResult(c, Verdict.PASS, j.observed(), null, false, millis, terminate);
        }
        String reason = known.reason(c.name(), j.encodingOnly());
        return new CaseResult(c, reason != null ? Verdict.KNOWN : Verdict.FAIL, j.observed(), reason, j.hung(),
                millis, terminate);
    }

    public String name() {
        return testCase.name();
    }
}
