package org.jiwarp.conform;

/** A case's verdict. */
public enum Verdict {
    /** The target did what the RFC requires. */
    PASS,
    /** The target did something else (or nothing within the time allowed). */
    FAIL,
    /** The target failed in a way documented as a known deviation of that implementation. */
    KNOWN
}
