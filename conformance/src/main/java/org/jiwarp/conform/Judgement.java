package org.jiwarp.conform;

/**
 * How one case came out against the target, before known deviations are applied.
 *
 * @param pass the target did what the RFC requires
 * @param observed what the target did, in words
 * @param encodingOnly the target sent the right Terminate, but with its control word encoded as
 *     Linux siw 6.1 encodes it (little-endian bitfields)
 * @param hung nothing came back within the time allowed and the case was cut short
 */
record Judgement(boolean pass, String observed, boolean encodingOnly, boolean hung) {

    static Judgement pass(String observed) {
        return new Judgement(true, observed, false, false);
    }

    static Judgement fail(String observed) {
        return new Judgement(false, observed, false, false);
    }
}
