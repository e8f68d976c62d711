package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.EnumSet;
import java.util.Set;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * A received MPA Request or Reply, validated (RFC 5044 section 7.1, RFC 6581 section 3), and the
 * encoding of the ones this endpoint sends.
 *
 * @param flags        the M/C/R/E flag byte
 * @param revision     the Rev field
 * @param ird          the RFC 6581 IRD value (0 without the enhanced setup)
 * @param ord          the RFC 6581 ORD value
 * @param peerToPeer   the RFC 6581 P2P bit
 * @param rtr          the RTR bits set
 * @param privateData  the ULP private data (after the RFC 6581 words)
 * @param frameLength  octets the frame occupies in the stream
 */
record MpaFrame(int flags, int revision, int ird, int ord, boolean peerToPeer, Set<RtrType> rtr, byte[] privateData,
        int frameLength) {

    boolean marker() {
        return (flags & MpaFrames.MARKER_FLAG) != 0;
    }

    boolean crc() {
        return (flags & MpaFrames.CRC_FLAG) != 0;
    }

    boolean reject() {
        return (flags & MpaFrames.REJECT_FLAG) != 0;
    }

    boolean enhanced() {
        return (flags & MpaFrames.ENHANCED_FLAG) != 0;
    }

    /**
     * Parses the frame at the reader index without consuming it.
     *
     * @return the frame, or {@code null} when more bytes are needed
     * <p>Reserved flag bits, and R in a Request, are ignored (RFC 5044 section 7.1.1, RFC 6581
     * section 6: they are not checked on reception); in a revision 1 frame the Enhanced bit is one
     * of them.
     *
     * @throws MpaException {@link TerminateError#LLP_INVALID_REQUEST_REPLY} for a wrong key, an
     *     unknown revision, private data over the limit, or an enhanced frame without its IRD/ORD
     *     words
     */
    static MpaFrame parse(ByteBuf in, boolean reply, int privateDataLimit) {
        int start = in.readerIndex();
        int available = in.readableBytes();
        byte[] key = reply ? MpaFrames.replyKey() : MpaFrames.requestKey();
        // Check the key octet by octet as it arrives, so garbage fails at once.
        for (int i = 0; i < Math.min(available, MpaFrames.KEY_LENGTH); i++) {
            if (in.getByte(start + i) != key[i]) {
                throw invalid("expected the MPA " + (reply ? "Reply" : "Request") + " key \""
                        + new String(key, java.nio.charset.StandardCharsets.US_ASCII) + "\", got "
                        + io.netty.buffer.ByteBufUtil.hexDump(in, start, Math.min(available, MpaFrames.KEY_LENGTH)));
            }
        }
        if (available < MpaFrames.HEADER_LENGTH) {
            return null;
        }
        int flags = MpaFrames.flags(in, start);
        int revision = MpaFrames.revision(in, start);
        int length = MpaFrames.privateDataLength(in, start);
        String frame = reply ? "Reply" : "Request";
        // RFC 5044 section 7.1: Rev is 1; RFC 6581 section 3 adds 2.
        if (revision != MpaFrames.REVISION_1 && revision != MpaFrames.REVISION_2) {
            throw invalid("MPA " + frame + " with unknown revision " + revision);
        }
        // RFC 5044 section 7.1.1, RFC 6581 section 6: Res is not checked on reception, nor R in a
        // Request; both are ignored (the Enhanced bit only exists in revision 2).
        flags &= ~(revision == MpaFrames.REVISION_2 ? MpaFrames.RESERVED_MASK : MpaFrames.RESERVED_MASK_RFC5044);
        if (!reply) {
            flags &= ~MpaFrames.REJECT_FLAG;
        }
        // RFC 5044 section 7.1: Private Data Length MUST NOT exceed 512; ours may be lower.
        if (length > privateDataLimit) {
            throw invalid("MPA " + frame + " carries " + length + " octets of private data; the limit is "
                    + privateDataLimit);
        }
        if (available < MpaFrames.HEADER_LENGTH + length) {
            return null;
        }
        int at = start + MpaFrames.PRIVATE_DATA_OFFSET;
        int ird = 0;
        int ord = 0;
        boolean p2p = false;
        Set<RtrType> rtr = EnumSet.noneOf(RtrType.class);
        if ((flags & MpaFrames.ENHANCED_FLAG) != 0) {
            // RFC 6581 section 3: the IRD and ORD words open the private data.
            if (length < MpaEnhanced.LENGTH) {
                throw invalid("enhanced MPA " + frame + " without the IRD/ORD words (" + length
                        + " octets of private data)");
            }
            ird = MpaEnhanced.ird(in, at);
            ord = MpaEnhanced.ord(in, at);
            p2p = MpaEnhanced.peerToPeer(in, at);
            if (MpaEnhanced.sendRtr(in, at)) {
                rtr.add(RtrType.SEND);
            }
            if (MpaEnhanced.writeRtr(in, at)) {
                rtr.add(RtrType.WRITE);
            }
            if (MpaEnhanced.readRtr(in, at)) {
                rtr.add(RtrType.READ);
            }
            at += MpaEnhanced.LENGTH;
            length -= MpaEnhanced.LENGTH;
        }
        byte[] privateData = new byte[length];
        in.getBytes(at, privateData);
        return new MpaFrame(flags, revision, ird, ord, p2p, rtr, privateData, at + length - start);
    }

    /** Encodes a Request or Reply; the RFC 6581 words go first when {@code flags} has the Enhanced bit. */
    static ByteBuf encode(io.netty.buffer.ByteBufAllocator alloc, boolean reply, int flags, int revision, int ird,
            int ord, boolean peerToPeer, Set<RtrType> rtr, byte[] privateData) {
        boolean enhanced = (flags & MpaFrames.ENHANCED_FLAG) != 0;
        ByteBuf data = Unpooled.buffer((enhanced ? MpaEnhanced.LENGTH : 0) + privateData.length);
        ByteBuf out = alloc.buffer(MpaFrames.HEADER_LENGTH + data.capacity());
        try {
            if (enhanced) {
                MpaEnhanced.write(data, ird, ord, peerToPeer, rtr.contains(RtrType.SEND), rtr.contains(RtrType.WRITE),
                        rtr.contains(RtrType.READ));
            }
            data.writeBytes(privateData);
            MpaFrames.write(out, reply, flags, revision, data);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        } finally {
            data.release();
        }
    }

    static MpaException invalid(String message) {
        return new MpaException(TerminateError.LLP_INVALID_REQUEST_REPLY, message);
    }
}
