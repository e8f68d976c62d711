package org.jiwarp.conform.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.AtomicRequestHeader;
import org.jiwarp.wire.rdmap.AtomicResponseHeader;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * Hand-built ULPDUs (DDP segments with their RDMAP fields) as byte arrays, written only through the
 * wire accessors of {@code wire-codecs}, so that every field can be set to any value, however wrong.
 *
 * <pre>
 *   untagged:  ctrl | rdmap ctrl | invalidate STag (32) | QN (32) | MSN (32) | MO (32) | payload
 *   tagged:    ctrl | rdmap ctrl | STag (32) | TO (64) | payload
 * </pre>
 *
 * <p>Payload octets are {@code 0xA0 + i} (mod 256), so a placement can be checked octet by octet.
 */
public final class Ulpdus {

    /** The DDP control byte of a well-formed last segment. */
    public static final int TAGGED_LAST = DdpHeaders.controlByte(true, true);
    public static final int TAGGED_MORE = DdpHeaders.controlByte(true, false);
    public static final int UNTAGGED_LAST = DdpHeaders.controlByte(false, true);
    public static final int UNTAGGED_MORE = DdpHeaders.controlByte(false, false);

    private Ulpdus() {
    }

    /** The payload octet at index {@code i}. */
    public static byte payloadOctet(int i) {
        return (byte) (0xA0 + i);
    }

    public static byte[] payload(int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = payloadOctet(i);
        }
        return out;
    }

    public static int rdmap(RdmapOpcode opcode) {
        return RdmapHeaders.controlByte(opcode);
    }

    /** An untagged segment with every header field given. */
    public static byte[] untagged(int ddpControl, int rdmapControl, int invalidateStag, long qn, long msn, long mo,
            int payload) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + payload);
        try {
            DdpHeaders.writeUntagged(out, ddpControl, rdmapControl, invalidateStag, qn, msn, mo);
            out.writeBytes(payload(payload));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A tagged segment with every header field given. */
    public static byte[] tagged(int ddpControl, int rdmapControl, int stag, long taggedOffset, int payload) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.TAGGED_HEADER_LENGTH + payload);
        try {
            DdpHeaders.writeTagged(out, ddpControl, rdmapControl, stag, taggedOffset);
            out.writeBytes(payload(payload));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A one-segment Send on queue 0. */
    public static byte[] send(long msn, int payload) {
        return untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, msn, 0, payload);
    }

    /** A segment of a Send: {@code last} sets L. */
    public static byte[] sendSegment(boolean last, long msn, long mo, int payload) {
        return untagged(last ? UNTAGGED_LAST : UNTAGGED_MORE, rdmap(RdmapOpcode.SEND), 0, DdpHeaders.QN_SEND, msn, mo,
                payload);
    }

    /** A one-segment RDMA Write. */
    public static byte[] write(int stag, long taggedOffset, int payload) {
        return tagged(TAGGED_LAST, rdmap(RdmapOpcode.RDMA_WRITE), stag, taggedOffset, payload);
    }

    /** An RDMA Read Request on queue 1 with the given fields. */
    public static byte[] readRequest(int ddpControl, int rdmapControl, long qn, long msn, long mo, int sinkStag,
            long sinkTo, long size, int sourceStag, long sourceTo) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
        try {
            DdpHeaders.writeUntagged(out, ddpControl, rdmapControl, 0, qn, msn, mo);
            ReadRequestHeader.write(out, sinkStag, sinkTo, size, sourceStag, sourceTo);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A well-formed Read Request with MSN {@code msn}. */
    public static byte[] readRequest(long msn, int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo) {
        return readRequest(UNTAGGED_LAST, rdmap(RdmapOpcode.RDMA_READ_REQUEST), DdpHeaders.QN_READ_REQUEST, msn, 0,
                sinkStag, sinkTo, size, sourceStag, sourceTo);
    }

    /** An RFC 7306 Atomic Request on queue 1 with every header field given. */
    public static byte[] atomicRequest(int ddpControl, long qn, long msn, long mo, int operationCode, int requestId,
            int stag, long taggedOffset, long data, long dataMask, long compare, long compareMask) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + AtomicRequestHeader.LENGTH);
        try {
            DdpHeaders.writeUntagged(out, ddpControl, rdmap(RdmapOpcode.ATOMIC_REQUEST), 0, qn, msn, mo);
            AtomicRequestHeader.write(out, operationCode, requestId, stag, taggedOffset, data, dataMask, compare,
                    compareMask);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A well-formed RFC 7306 Atomic Request (queue 1, MSN {@code msn}): {@code operationCode} at {@code stag}/{@code taggedOffset}. */
    public static byte[] atomicRequest(long msn, int operationCode, int requestId, int stag, long taggedOffset,
            long data) {
        return atomicRequest(UNTAGGED_LAST, DdpHeaders.QN_READ_REQUEST, msn, 0, operationCode, requestId, stag,
                taggedOffset, data, operationCode == 0 ? 0 : -1L, 0, 0);
    }

    /** An RFC 7306 Atomic Response on queue 3. */
    public static byte[] atomicResponse(long msn, int requestId, long original) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + AtomicResponseHeader.LENGTH);
        try {
            DdpHeaders.writeUntagged(out, UNTAGGED_LAST, rdmap(RdmapOpcode.ATOMIC_RESPONSE), 0,
                    DdpHeaders.QN_ATOMIC_RESPONSE, msn, 0);
            AtomicResponseHeader.write(out, requestId, original);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** An RFC 7306 Immediate Data message on queue 0 carrying {@code data} (8 octets). */
    public static byte[] immediateData(long msn, boolean solicited, long data) {
        ByteBuf out = Unpooled.buffer(DdpHeaders.UNTAGGED_HEADER_LENGTH + RdmapOpcode.IMMEDIATE_DATA_LENGTH);
        try {
            DdpHeaders.writeUntagged(out, UNTAGGED_LAST, rdmap(solicited ? RdmapOpcode.IMMEDIATE_DATA_WITH_SE
                    : RdmapOpcode.IMMEDIATE_DATA), 0, DdpHeaders.QN_SEND, msn, 0);
            out.writeLong(data);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A one-segment Read Response. */
    public static byte[] readResponse(int stag, long taggedOffset, int payload, boolean last) {
        return tagged(last ? TAGGED_LAST : TAGGED_MORE, rdmap(RdmapOpcode.RDMA_READ_RESPONSE), stag, taggedOffset,
                payload);
    }

    /** A Send with Invalidate of {@code stag}. */
    public static byte[] sendWithInvalidate(long msn, int stag, int payload) {
        return untagged(UNTAGGED_LAST, rdmap(RdmapOpcode.SEND_WITH_INVALIDATE), stag, DdpHeaders.QN_SEND, msn, 0,
                payload);
    }

    /** A Terminate on queue 2 from a raw control word, with {@code extra} octets of body after it. */
    public static byte[] terminate(int ddpControl, long qn, long msn, long mo, int controlWord, byte[] extra) {
        ByteBuf out = Unpooled.buffer();
        try {
            DdpHeaders.writeUntagged(out, ddpControl, rdmap(RdmapOpcode.TERMINATE), 0, qn, msn, mo);
            out.writeInt(controlWord);
            out.writeBytes(extra);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A well-formed Terminate carrying nothing. */
    public static byte[] terminate(TerminateError error) {
        return terminate(UNTAGGED_LAST, DdpHeaders.QN_TERMINATE, 1, 0, TerminateHeader.controlWord(error, 0),
                new byte[0]);
    }

    /** The first {@code length} octets of {@code ulpdu}. */
    public static byte[] truncate(byte[] ulpdu, int length) {
        return java.util.Arrays.copyOf(ulpdu, length);
    }

    /** Whether {@code ulpdu} is a Terminate: untagged, opcode Terminate, QN 2 (RFC 5040 section 4.8). */
    public static boolean isTerminate(byte[] ulpdu) {
        return isUntagged(ulpdu, RdmapOpcode.TERMINATE, DdpHeaders.QN_TERMINATE);
    }

    /** Whether {@code ulpdu} is an untagged segment of {@code opcode} on queue {@code qn}. */
    public static boolean isUntagged(byte[] ulpdu, RdmapOpcode opcode, int qn) {
        if (ulpdu.length < DdpHeaders.UNTAGGED_HEADER_LENGTH) {
            return false;
        }
        ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
        try {
            return !DdpHeaders.tagged(b, 0) && RdmapHeaders.opcode(b, 0) == opcode && DdpHeaders.qn(b, 0) == qn;
        } finally {
            b.release();
        }
    }

    /** Whether {@code ulpdu} is a tagged segment of {@code opcode}. */
    public static boolean isTagged(byte[] ulpdu, RdmapOpcode opcode) {
        if (ulpdu.length < DdpHeaders.TAGGED_HEADER_LENGTH) {
            return false;
        }
        ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
        try {
            return DdpHeaders.tagged(b, 0) && RdmapHeaders.opcode(b, 0) == opcode;
        } finally {
            b.release();
        }
    }
}
