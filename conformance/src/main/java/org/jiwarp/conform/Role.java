package org.jiwarp.conform;

/** Which end of rping the target plays, and so which end of the TCP connection. */
public enum Role {
    /** The target listens ({@code rping -s}); jiwarp conform initiates MPA and plays rping's client. */
    TARGET_LISTENS,
    /** The target connects ({@code rping -c}); jiwarp conform responds to MPA and plays rping's server. */
    TARGET_CONNECTS
}
