package org.jiwarp.capture.check;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * The STags a capture shows being advertised (RFC 5040 section 2.1: an STag reaches the peer by
 * the ULP's own messages), learnt from the Sends of the two exchanges every RDMA user knows:
 *
 * <pre>
 *   rping     struct rping_rdma_info, 16 octets:   buf (be64) | rkey (be32) | size (be32)
 *   perftest  struct pingpong_dest,  56 octets:    ... rkey (be32) at 16 | vaddr (be64) at 24 ...
 * </pre>
 *
 * perftest's exchange goes over its own connection, so STags are kept per host (the advertiser's
 * address), for the whole capture. A Send of another length advertises nothing here.
 */
final class AdvertisedStags {

    /** One advertisement: the buffer behind {@code stag}, {@code length} -1 when not said. */
    record Advert(int frame, int stag, long base, long length, String exchange) {

        boolean covers(long to, long length) {
            return this.length < 0 || (to >= base && to - base + length <= this.length);
        }

        String describe() {
            return String.format("STag 0x%08x at 0x%x%s (%s, frame %d)", stag, base,
                    length < 0 ? "" : " for " + length + " octets", exchange, frame);
        }
    }

    static final int RPING_INFO_LENGTH = 16;
    static final int PINGPONG_DEST_LENGTH = 56;

    private final Map<String, List<Advert>> byHost = new HashMap<>();
    /** RPC-over-RDMA chunk segments, by the endpoint whose Send advertised them. */
    private final Map<String, List<Advert>> chunksByEndpoint = new HashMap<>();
    /** Conversations in which a Send carries an RPC-over-RDMA header. */
    private final Set<Integer> rpcHeaders = new HashSet<>();
    /** Conversations whose MPA Request or Reply carries RFC 8797 private data. */
    private final Set<Integer> rfc8797 = new HashSet<>();
    /** Conversations whose MPA Request or Reply the capture holds. */
    private final Set<Integer> negotiated = new HashSet<>();

    /** RFC 8797 section 4's format identifier, first in its private data. */
    private static final String RFC_8797_MAGIC = "f6ab0e18";

    /** Learns the advertisements of a capture's next PDU (PDUs come in frame order). */
    void learn(DecodedPdu pdu) {
        if (pdu.kind() != DecodedPdu.Kind.FPDU) {
            negotiated.add(pdu.conversation());
            // RFC 8797's private data comes first, or after the enhanced MPA IRD/ORD words (RFC 6581).
            String data = pdu.fields().getOrDefault("iwarp_mpa.privatedata", "");
            if (data.startsWith(RFC_8797_MAGIC) || data.startsWith(RFC_8797_MAGIC, 8)) {
                rfc8797.add(pdu.conversation());
            }
            return;
        }
        learnFromFpdu(pdu);
    }

    private void learnFromFpdu(DecodedPdu pdu) {
        Map<String, String> fields = pdu.fields();
        if (fields.containsKey("rpcordma.xid")) {
            rpcHeaders.add(pdu.conversation());
        }
        if (fields.containsKey("rpcordma.rdma_handle")) {
            // Every segment of the Read list, Write list and Reply chunk, as the decoder lists them.
            String[] handles = fields.get("rpcordma.rdma_handle").split(",");
            String[] lengths = fields.get("rpcordma.rdma_length").split(",");
            String[] offsets = fields.get("rpcordma.rdma_offset").split(",");
            for (int i = 0; i < handles.length; i++) {
                chunksByEndpoint.computeIfAbsent(pdu.source(), e -> new ArrayList<>()).add(new Advert(pdu.frameNumber(),
                        Integer.parseUnsignedInt(handles[i].substring(2), 16),
                        Long.parseUnsignedLong(offsets[i].substring(2), 16), Long.parseLong(lengths[i]),
                        "RPC-over-RDMA chunk"));
            }
        }
        byte[] octets = pdu.octets();
        if (octets.length < DdpHeaders.UNTAGGED_HEADER_LENGTH) {
            return;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(octets);
        if (DdpHeaders.tagged(buf, 0) || !DdpHeaders.last(buf, 0) || DdpHeaders.mo(buf, 0) != 0) {
            return;
        }
        RdmapOpcode opcode = RdmapOpcode.valueOf(RdmapHeaders.opcodeCode(buf, 0));
        if (opcode == null || opcode.code() < RdmapOpcode.SEND.code()
                || opcode.code() > RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE.code()) {
            return;
        }
        int at = DdpHeaders.UNTAGGED_HEADER_LENGTH;
        int length = octets.length - at;
        Advert advert = null;
        if (length == RPING_INFO_LENGTH && buf.getLong(at) != 0 && buf.getInt(at + 12) > 0) {
            // rping advertises a buffer of some octets at a non-null address
            advert = new Advert(pdu.frameNumber(), buf.getInt(at + 8), buf.getLong(at), buf.getUnsignedInt(at + 12),
                    "rping");
        } else if (length == PINGPONG_DEST_LENGTH && buf.getInt(at) == 0 && (buf.getInt(at + 8) & 0xFF00_0000) == 0
                && (buf.getInt(at + 12) & 0xFF00_0000) == 0) {
            // perftest over iWARP: LID 0, a 24-bit QPN and PSN
            advert = new Advert(pdu.frameNumber(), buf.getInt(at + 16), buf.getLong(at + 24), -1, "perftest");
        }
        if (advert != null && advert.stag() != 0) {
            byHost.computeIfAbsent(host(pdu.source()), h -> new ArrayList<>()).add(advert);
        }
    }

    /** The latest advertisement of {@code stag} by {@code endpoint}'s host before {@code frame}, or {@code null}. */
    Advert find(String endpoint, int stag, int frame) {
        Advert found = null;
        for (Advert advert : byHost.getOrDefault(host(endpoint), List.of())) {
            if (advert.stag() == stag && advert.frame() < frame) {
                found = advert;
            }
        }
        return found;
    }

    /**
     * {@code true} for an RPC-over-RDMA connection: its MPA exchange carries RFC 8797 private data,
     * or, when the capture missed the exchange, a Send carries an RPC-over-RDMA header (RFC 8166).
     * Headers alone do not make one where the exchange is captured: a perftest or rping Send can
     * read as a header by chance.
     */
    boolean rpcOverRdma(int conversation) {
        return rfc8797.contains(conversation) || (!negotiated.contains(conversation) && rpcHeaders.contains(conversation));
    }

    /**
     * The latest chunk segment {@code endpoint} advertised before {@code frame} under {@code handle}
     * that holds {@code length} octets at {@code offset}, else the latest under {@code handle}, else
     * {@code null}.
     */
    Advert chunk(String endpoint, int handle, long offset, long length, int frame) {
        Advert covering = null;
        Advert any = null;
        for (Advert advert : chunksByEndpoint.getOrDefault(endpoint, List.of())) {
            if (advert.stag() == handle && advert.frame() < frame) {
                any = advert;
                if (advert.covers(offset, length)) {
                    covering = advert;
                }
            }
        }
        return covering != null ? covering : any;
    }

    /** Every advertisement by {@code endpoint}'s host before {@code frame}. */
    List<Advert> before(String endpoint, int frame) {
        List<Advert> adverts = new ArrayList<>();
        for (Advert advert : byHost.getOrDefault(host(endpoint), List.of())) {
            if (advert.frame() < frame) {
                adverts.add(advert);
            }
        }
        return adverts;
    }

    /** The address part of {@code address:port} (or {@code [v6]:port}). */
    private static String host(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        return colon < 0 ? endpoint : endpoint.substring(0, colon);
    }
}
