package org.jiwarp.capture.pcap;

import java.io.IOException;

/**
 * A file that is not a classic libpcap capture, or one that this package cannot read.
 *
 * <p>The message is meant for a human at a terminal: it says what was found and, where there is
 * one, what to do about it (for example converting a pcapng file with {@code editcap -F pcap}).
 */
public final class PcapFormatException extends IOException {

    private static final long serialVersionUID = 1L;

    /** An exception with the given human-readable message. */
    public PcapFormatException(String message) {
        super(message);
    }

    /** An exception with the given human-readable message and cause. */
    public PcapFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
