package org.jiwarp.ddp;

import io.netty.buffer.ByteBuf;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;

/**
 * Checks on the DDP header of an inbound segment that come before any buffer is looked at (RFC 5041
 * sections 4.1, 4.3 and 7.2), over the header accessors of {@link DdpHeaders}.
 *
 * <p>Reserved bits: RFC 5041 section 4.1 has the Rsvd bits of the control byte set to zero on
 * transmit and not checked on receive, so they are ignored here. The RsvdULP bits belong to the
 * ULP: RDMAP checks its own control byte, and reads the last 32 bits of an untagged RsvdULP only as
 * the Invalidate STag of a Send with Invalidate; DDP looks at none of them.
 */
public final class DdpHeaderChecks {

    private DdpHeaderChecks() {
    }

    /**
     * Checks the DDP version (DV) of the segment whose header starts at {@code ulpdu}'s reader index.
     *
     * @throws TerminateException {@link TerminateError#DDP_TAGGED_INVALID_VERSION} or
     *     {@link TerminateError#DDP_UNTAGGED_INVALID_VERSION}, by the T bit, when DV is not 1; the same
     *     for an empty ULPDU (untagged, as there is no T bit to read)
     */
    public static void checkVersion(ByteBuf ulpdu) {
        if (!ulpdu.isReadable()) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_VERSION, "empty ULPDU: no DDP header");
        }
        int at = ulpdu.readerIndex();
        int version = DdpHeaders.version(ulpdu, at);
        // RFC 5041 section 4.1: DV MUST be 01b; section 7.2 has a code per buffer model.
        if (version != DdpHeaders.DDP_VERSION) {
            boolean tagged = DdpHeaders.tagged(ulpdu, at);
            throw new TerminateException(tagged ? TerminateError.DDP_TAGGED_INVALID_VERSION
                    : TerminateError.DDP_UNTAGGED_INVALID_VERSION, "DDP version " + version
                            + (tagged ? " (tagged)" : " (untagged)"));
        }
    }

    /**
     * Checks that {@code ulpdu} holds a whole DDP header of version 1 and returns that header's
     * length (14 tagged, 18 untagged).
     *
     * @throws TerminateException {@link TerminateError#DDP_LOCAL_CATASTROPHIC} for a ULPDU shorter
     *     than its header, or the version error of {@link #checkVersion}
     */
    public static int checkHeader(ByteBuf ulpdu) {
        int length = ulpdu.readableBytes();
        if (length < 2) {
            throw new TerminateException(TerminateError.DDP_LOCAL_CATASTROPHIC, "ULPDU of " + length + " octets");
        }
        checkVersion(ulpdu);
        int header = DdpHeaders.tagged(ulpdu, ulpdu.readerIndex()) ? DdpHeaders.TAGGED_HEADER_LENGTH
                : DdpHeaders.UNTAGGED_HEADER_LENGTH;
        if (length < header) {
            throw new TerminateException(TerminateError.DDP_LOCAL_CATASTROPHIC, "ULPDU of " + length
                    + " octets is shorter than its DDP header");
        }
        return header;
    }

    /**
     * Checks an untagged segment's queue number against the queues the ULP uses, {@code 0} to
     * {@code queues - 1} (RDMAP: 3, or 4 with RFC 7306 atomics).
     *
     * @param qn the QN, unsigned 32-bit ({@link DdpHeaders#qn})
     * @throws TerminateException {@link TerminateError#DDP_UNTAGGED_INVALID_QN}
     */
    public static void checkQn(long qn, int queues) {
        // RFC 5041 section 7.1: the QN must be valid for the stream.
        if (qn < 0 || qn >= queues) {
            throw new TerminateException(TerminateError.DDP_UNTAGGED_INVALID_QN, "QN " + qn + " (the stream has "
                    + queues + " queues)");
        }
    }
}
