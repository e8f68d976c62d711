package org.jiwarp.capture.check;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jiwarp.capture.decode.DecodedPdu;

/**
 * The RPC-over-RDMA calls of one connection (RFC 8166), as the decoded headers show them: which
 * chunk handles each call advertised, which calls are still waiting for their replies, and the
 * credits each end was granted. Both ends are treated alike, so that backchannel calls
 * (RFC 8167) count against the credits of the end that sends them.
 *
 * <p>A message is a reply when the other end has a call with its xid outstanding, and otherwise a
 * call. The count of calls in flight is only judged when the capture holds the whole connection
 * (its MPA exchange, nothing resynchronised): a reply to a call the capture missed would count as
 * a call. A capture taken anywhere on the path never shows more calls in flight than the requester
 * had: a reply reaches the requester after the capture saw it, and a call leaves it before.
 *
 * <p>Decisions where the RFC leaves room: until the first reply the requester has one credit
 * (RFC 8166 section 3.3.3; RFC 8797's private data carries inline sizes and the Remote
 * Invalidation flag, no credits); a grant of zero counts as one, as the Linux client takes it;
 * the grant in force is the latest reply's.
 */
final class RpcRdmaCalls {

    /** One call: its frame and the handles of its Read list, Write list and Reply chunk. */
    private record Call(int frame, Set<Integer> handles) {
    }

    /** What one end has sent: its latest call per xid, the calls still outstanding, its grant. */
    private static final class End {
        final Map<String, Call> latest = new HashMap<>();
        final Map<String, Call> outstanding = new LinkedHashMap<>();
        long granted = 1;
        /** A reply to one of this end's calls has come: {@link #granted} is the responder's grant. */
        boolean answered;
    }

    private final Map<String, End> ends = new HashMap<>();
    private boolean lost;

    /**
     * The capture lacks octets of the connection (it began after the MPA exchange, or has a gap):
     * calls in flight can no longer be counted, nor a reply told from a call.
     */
    void lost() {
        lost = true;
    }

    /**
     * Takes in a Send message carrying an RPC-over-RDMA header (the PDU with its last segment);
     * returns why it breaks the credit limit, or {@code null}.
     */
    String message(DecodedPdu pdu, String peer) {
        Map<String, String> fields = pdu.fields();
        String xid = fields.get("rpcordma.xid");
        End sender = end(pdu.source());
        End other = end(peer);
        if (other.outstanding.remove(xid) != null) {
            // A reply: its rdma_credit is the number of calls the other end may have in flight.
            other.granted = Math.max(1, Long.parseLong(fields.getOrDefault("rpcordma.flow_control", "1")));
            other.answered = true;
            return null;
        }
        Call call = new Call(pdu.frameNumber(), handles(fields));
        sender.latest.put(xid, call);
        sender.outstanding.put(xid, call);
        if (lost || sender.outstanding.size() <= sender.granted) {
            return null;
        }
        return String.format("the call with XID %s makes %d calls in flight, more than the %d credit%s the "
                + "responder granted%s.", xid, sender.outstanding.size(), sender.granted,
                sender.granted == 1 ? "" : "s", sender.answered ? "" : " (before the first reply a requester has one)");
    }

    /**
     * A {@code send} (a Send with Invalidate, or with Solicited Event and Invalidate) answering the
     * call {@code xid} (the first four octets of its message) that {@code peer} sent invalidates
     * {@code stag}: returns why that is not a handle of the call, or {@code null}.
     */
    String invalidation(String send, String peer, int xid, int stag) {
        String key = String.format("0x%08x", xid);
        Call call = end(peer).latest.get(key);
        if (call == null) {
            return !lost ? String.format("a %s answers XID %s, which no call on this connection "
                    + "carried, and invalidates STag 0x%08x.", send, key, stag) : null;
        }
        if (call.handles().contains(stag)) {
            return null;
        }
        StringBuilder handles = new StringBuilder();
        for (int handle : call.handles()) {
            handles.append(handles.length() == 0 ? "" : ", ").append(String.format("0x%08x", handle));
        }
        return String.format("a %s answering XID %s invalidates STag 0x%08x, which is no chunk handle of that "
                + "call (frame %d advertised %s).", send, key, stag, call.frame(),
                handles.length() == 0 ? "none" : handles);
    }

    private End end(String endpoint) {
        return ends.computeIfAbsent(endpoint, e -> new End());
    }

    private static Set<Integer> handles(Map<String, String> fields) {
        Set<Integer> handles = new TreeSet<>();
        String listed = fields.get("rpcordma.rdma_handle");
        if (listed != null) {
            for (String handle : listed.split(",")) {
                handles.add(Integer.parseUnsignedInt(handle.substring(2), 16));
            }
        }
        return handles;
    }
}
