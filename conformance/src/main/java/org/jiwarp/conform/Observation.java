package org.jiwarp.conform;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.conform.peer.TerminateCheck;
import org.jiwarp.conform.peer.Ulpdus;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;

/**
 * What the target sent since the case began (its judged traffic), and whether it closed.
 *
 * @param ulpdus the ULPDUs since the session's mark, in order
 * @param closed the target closed or reset the connection
 * @param problems FPDUs the target framed wrongly (bad CRC, wrong marker)
 */
record Observation(List<byte[]> ulpdus, boolean closed, List<String> problems) {

    /**
     * What the target sent since the mark and whether it closed, as one consistent picture: the close
     * is read first, because the raw peer records every ULPDU before the close that follows it, so a
     * close seen here comes with all that the target sent before it. Read the other way round, a
     * Terminate and its close arriving between the two reads looked like a close without a Terminate.
     */
    static Observation of(Session s) throws InterruptedException {
        boolean closed = s.peer.awaitClosed(0);
        return new Observation(s.sinceMark(), closed, s.peer.problems());
    }

    /** The target's first Terminate, or {@code null}. */
    byte[] terminate() {
        for (byte[] ulpdu : ulpdus) {
            if (Ulpdus.isTerminate(ulpdu)) {
                return ulpdu;
            }
        }
        return null;
    }

    /** The ULPDUs before the first Terminate (all of them when there is none). */
    List<byte[]> beforeTerminate() {
        List<byte[]> before = new ArrayList<>();
        for (byte[] ulpdu : ulpdus) {
            if (Ulpdus.isTerminate(ulpdu)) {
                break;
            }
            before.add(ulpdu);
        }
        return before;
    }

    /** What the target did, in words: "sent a Terminate ..., then closed the connection". */
    String describe() {
        StringBuilder s = new StringBuilder();
        List<String> sent = new ArrayList<>();
        for (byte[] ulpdu : ulpdus) {
            sent.add(Ulpdus.isTerminate(ulpdu) ? TerminateCheck.describe(ulpdu) : summary(ulpdu));
        }
        s.append(sent.isEmpty() ? "sent nothing" : "sent " + String.join("; then ", sent));
        s.append(closed ? ", and closed the connection" : "; the connection is open");
        if (!problems.isEmpty()) {
            s.append(" (framing: ").append(String.join("; ", problems)).append(')');
        }
        return s.toString();
    }

    /** A one-line name for a ULPDU that is not a Terminate. */
    static String summary(byte[] ulpdu) {
        if (ulpdu.length < 2) {
            return "a " + ulpdu.length + "-octet ULPDU";
        }
        ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
        try {
            RdmapOpcode opcode = RdmapHeaders.opcode(b, 0);
            String name = opcode == null ? "opcode 0x" + Integer.toHexString(RdmapHeaders.opcodeCode(b, 0))
                    : opcode.displayName();
            if (DdpHeaders.tagged(b, 0) && ulpdu.length >= DdpHeaders.TAGGED_HEADER_LENGTH) {
                return String.format("%s (tagged, STag 0x%08x, TO 0x%x, %d octets)", name, DdpHeaders.stag(b, 0),
                        DdpHeaders.taggedOffset(b, 0), ulpdu.length - DdpHeaders.TAGGED_HEADER_LENGTH);
            }
            if (!DdpHeaders.tagged(b, 0) && ulpdu.length >= DdpHeaders.UNTAGGED_HEADER_LENGTH) {
                String body = "";
                if (opcode == RdmapOpcode.RDMA_READ_REQUEST
                        && ulpdu.length >= DdpHeaders.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH) {
                    int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
                    body = String.format(", sink STag 0x%08x TO 0x%x, %d octets of source STag 0x%08x TO 0x%x",
                            ReadRequestHeader.sinkStag(b, at), ReadRequestHeader.sinkTaggedOffset(b, at),
                            ReadRequestHeader.readSize(b, at), ReadRequestHeader.sourceStag(b, at),
                            ReadRequestHeader.sourceTaggedOffset(b, at));
                }
                return String.format("%s (QN %d, MSN %d, MO %d, %d octets%s)", name, DdpHeaders.qn(b, 0),
                        DdpHeaders.msn(b, 0), DdpHeaders.mo(b, 0), ulpdu.length - DdpHeaders.UNTAGGED_HEADER_LENGTH,
                        body);
            }
            return "a " + ulpdu.length + "-octet ULPDU " + hex(ulpdu);
        } finally {
            b.release();
        }
    }

    static String hex(byte[] bytes) {
        return ByteBufUtil.hexDump(bytes, 0, Math.min(bytes.length, 48)) + (bytes.length > 48 ? "..." : "");
    }
}
