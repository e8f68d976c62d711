package org.jiwarp.conform.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * MPA Request and Reply frames built by hand (RFC 5044 section 7.1.1, RFC 6581 sections 6 and 9),
 * with any key, flags, revision and private data length, right or wrong.
 */
public final class MpaBytes {

    /** What a hand-built frame says. The private data length field may lie about the data that follows. */
    public record Frame(boolean reply, byte[] key, int flags, int revision, Integer claimedLength, Words words,
            byte[] ulpPrivateData) {

        /** The frame's octets. */
        public byte[] bytes() {
            ByteBuf data = Unpooled.buffer();
            ByteBuf out = Unpooled.buffer();
            try {
                if (words != null) {
                    MpaEnhanced.write(data, words.ird, words.ord, words.peerToPeer, words.sendRtr, words.writeRtr,
                            words.readRtr);
                    if (words.rawIrdWord >= 0) {
                        data.setShort(MpaEnhanced.IRD_OFFSET, words.rawIrdWord);
                    }
                    if (words.rawOrdWord >= 0) {
                        data.setShort(MpaEnhanced.ORD_OFFSET, words.rawOrdWord);
                    }
                }
                data.writeBytes(ulpPrivateData);
                MpaFrames.write(out, reply, flags, revision, data);
                out.setBytes(MpaFrames.KEY_OFFSET, key);
                if (claimedLength != null) {
                    out.setShort(MpaFrames.PRIVATE_DATA_LENGTH_OFFSET, claimedLength);
                }
                return ByteBufUtil.getBytes(out);
            } finally {
                data.release();
                out.release();
            }
        }

        public Frame withKey(byte[] newKey) {
            return new Frame(reply, newKey, flags, revision, claimedLength, words, ulpPrivateData);
        }

        public Frame withFlags(int newFlags) {
            return new Frame(reply, key, newFlags, revision, claimedLength, words, ulpPrivateData);
        }

        public Frame withRevision(int newRevision) {
            return new Frame(reply, key, flags, newRevision, claimedLength, words, ulpPrivateData);
        }

        public Frame withWords(Words newWords) {
            return new Frame(reply, key, flags, revision, claimedLength, newWords, ulpPrivateData);
        }

        public Frame withClaimedLength(int length) {
            return new Frame(reply, key, flags, revision, length, words, ulpPrivateData);
        }

        public Frame withPrivateData(byte[] data) {
            return new Frame(reply, key, flags, revision, claimedLength, words, data);
        }
    }

    /** The RFC 6581 IRD/ORD words; a raw word, when not negative, replaces the encoded one. */
    public record Words(int ird, int ord, boolean peerToPeer, boolean sendRtr, boolean writeRtr, boolean readRtr,
            int rawIrdWord, int rawOrdWord) {

        public static Words of(int ird, int ord) {
            return new Words(ird, ord, false, false, false, false, -1, -1);
        }

        public Words p2p(boolean send, boolean write, boolean read) {
            return new Words(ird, ord, true, send, write, read, rawIrdWord, rawOrdWord);
        }

        public Words raw(int irdWord, int ordWord) {
            return new Words(ird, ord, peerToPeer, sendRtr, writeRtr, readRtr, irdWord, ordWord);
        }
    }

    private MpaBytes() {
    }

    /** An enhanced revision 2 Request with CRC, IRD = ORD = {@code irdOrd} and ULP private data. */
    public static Frame request(boolean crc, boolean markers, int irdOrd, byte[] ulpPrivateData) {
        int flags = MpaFrames.ENHANCED_FLAG | (crc ? MpaFrames.CRC_FLAG : 0) | (markers ? MpaFrames.MARKER_FLAG : 0);
        return new Frame(false, MpaFrames.requestKey(), flags, MpaFrames.REVISION_2, null, Words.of(irdOrd, irdOrd),
                ulpPrivateData);
    }

    /** An enhanced revision 2 Reply. */
    public static Frame reply(int flags, Words words, byte[] ulpPrivateData) {
        return new Frame(true, MpaFrames.replyKey(), flags | MpaFrames.ENHANCED_FLAG, MpaFrames.REVISION_2, null, words,
                ulpPrivateData);
    }

    /** A parsed Request or Reply as it arrived. */
    public record Parsed(boolean reply, int flags, int revision, int privateDataLength, byte[] privateData) {

        public boolean crc() {
            return (flags & MpaFrames.CRC_FLAG) != 0;
        }

        public boolean marker() {
            return (flags & MpaFrames.MARKER_FLAG) != 0;
        }

        public boolean reject() {
            return (flags & MpaFrames.REJECT_FLAG) != 0;
        }

        public boolean enhanced() {
            return (flags & MpaFrames.ENHANCED_FLAG) != 0;
        }

        public int ird() {
            return enhanced() && privateData.length >= 4 ? ((privateData[0] & 0xFF) << 8 | privateData[1] & 0xFF)
                    & MpaEnhanced.VALUE_MASK : 0;
        }

        public int ord() {
            return enhanced() && privateData.length >= 4 ? ((privateData[2] & 0xFF) << 8 | privateData[3] & 0xFF)
                    & MpaEnhanced.VALUE_MASK : 0;
        }

        public int irdWord() {
            return (privateData[0] & 0xFF) << 8 | privateData[1] & 0xFF;
        }

        public int ordWord() {
            return (privateData[2] & 0xFF) << 8 | privateData[3] & 0xFF;
        }

        /** Parses the 20-octet header and the private data that follows it. */
        public static Parsed of(byte[] header, byte[] privateData) {
            ByteBuf b = Unpooled.wrappedBuffer(header);
            try {
                boolean reply = MpaFrames.isReply(b, 0);
                if (!reply && !MpaFrames.isRequest(b, 0)) {
                    throw new AssertionError("no MPA key: " + ByteBufUtil.hexDump(header));
                }
                return new Parsed(reply, MpaFrames.flags(b, 0), MpaFrames.revision(b, 0),
                        MpaFrames.privateDataLength(b, 0), privateData);
            } finally {
                b.release();
            }
        }
    }
}
