package org.jiwarp.conform;

/**
 * One case's outcome against the target.
 *
 * @param testCase the case
 * @param verdict PASS, FAIL or KNOWN
 * @param observed what the target did, in words
 * @param known why a failure is a known deviation of the target, or {@code null}
 * @param hung the case was cut off
 * @param millis how long the case took, connection and setup included
 */
public record CaseResult(ConformCase testCase, Verdict verdict, String observed, String known, boolean hung,
        long millis) {

    static CaseResult of(ConformCase c, Judgement j, KnownDeviations known, long millis) {
        if (j.pass()) {
            return new CaseResult(c, Verdict.PASS, j.observed(), null, false, millis);
        }
        String reason = known.reason(c.name(), j.encodingOnly());
        return new CaseResult(c, reason != null ? Verdict.KNOWN : Verdict.FAIL, j.observed(), reason, j.hung(),
                millis);
    }

    public String name() {
        return testCase.name();
    }
}
