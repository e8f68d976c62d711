package org.jiwarp.rnic.rx;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * What the receive path ({@link UlpduStream}) asks and tells the queue pair it serves, so that it
 * never calls into whoever built it: whether the queue pair still takes segments, and a segment that
 * failed a check (the queue pair sends its one Terminate, RFC 5040 section 5.6). Called on the
 * connection's event loop.
 */
public interface SegmentListener {

    /** A segment's header arrived: whether the queue pair still takes segments (RTS or CLOSING). */
    boolean receiving();

    /**
     * A segment of {@code length} octets failed a check; {@code header} holds its header (valid for
     * the call) for the Terminate to carry.
     */
    void segmentFailed(TerminateException e, ByteBuf header, int length);
}
