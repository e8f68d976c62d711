package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The RPC-over-RDMA version 1 transport header (RFC 8166 sections 4.2 and 4.3, {@code rdma_msg} in
 * section 4.1.2): the xid of the RPC message it carries, the protocol version (1), the credit
 * value (requested by a requester, granted by a responder), the procedure, and for RDMA_MSG and
 * RDMA_NOMSG the three chunk lists (Read list, Write list, Reply chunk); for RDMA_ERROR the error
 * (section 4.5).
 *
 * <p>On the wire: four words, then the Read list as an XDR optional-data list (each entry a 1,
 * then position, handle, length, offset; a 0 ends it), the Write list likewise with each entry an
 * array of segments, and the Reply chunk as an optional array of segments.
 *
 * @param writeList  the Write chunks, each a list of segments
 * @param replyChunk the Reply chunk's segments, or {@code null} when there is none
 * @param error      for RDMA_ERROR: {@link #ERR_VERS} or {@link #ERR_CHUNK}; else 0
 * @param versLow    for ERR_VERS: the lowest version the responder speaks
 * @param versHigh   for ERR_VERS: the highest
 */
public record RpcRdmaHeader(int xid, int version, int credits, int procedure, List<ReadSegment> readList,
        List<List<RdmaSegment>> writeList, List<RdmaSegment> replyChunk, int error, int versLow, int versHigh) {

    public static final int VERSION = 1;

    /** An RPC message follows the header inline (section 4.2.4). */
    public static final int RDMA_MSG = 0;
    /** No RPC message follows: it travels in a Position Zero Read chunk or a Reply chunk. */
    public static final int RDMA_NOMSG = 1;
    /**
     * The padded message of RFC 5666, no longer supported (section 4.6.1): a responder answers it
     * with ERR_CHUNK, a requester drops it.
     */
    public static final int RDMA_MSGP = 2;
    /** RFC 5666's, no longer supported (section 4.6.2: senders never send it, receivers drop it). */
    public static final int RDMA_DONE = 3;
    /** A transport error instead of an RPC message (section 4.5). */
    public static final int RDMA_ERROR = 4;

    /** The version is not supported (section 4.5). */
    public static final int ERR_VERS = 1;
    /** The header or its chunks could not be processed. */
    public static final int ERR_CHUNK = 2;

    /** The fixed part: xid, version, credits, procedure. */
    public static final int FIXED_LENGTH = 16;

    /**
     * The shortest header, the fixed part and three empty lists: a receiver drops anything shorter
     * unread, since it cannot trust its xid (section 4.5).
     */
    public static final int MIN_LENGTH = FIXED_LENGTH + 12;

    /** A limit on list lengths while decoding, far beyond any inline header. */
    private static final int MAX_SEGMENTS = 1024;

    public RpcRdmaHeader {
        readList = List.copyOf(readList);
        writeList = writeList.stream().map(List::copyOf).toList();
        replyChunk = replyChunk == null ? null : List.copyOf(replyChunk);
    }

    /** An RDMA_MSG or RDMA_NOMSG header. */
    public static RpcRdmaHeader message(int xid, int credits, int procedure, List<ReadSegment> readList,
            List<List<RdmaSegment>> writeList, List<RdmaSegment> replyChunk) {
        return new RpcRdmaHeader(xid, VERSION, credits, procedure, readList, writeList, replyChunk, 0, 0, 0);
    }

    /**
     * An RDMA_ERROR header (section 4.5) answering a call of {@code version}, which it carries as
     * section 4.5 requires; ERR_VERS names version 1 as both the lowest and the highest this
     * implementation speaks.
     */
    public static RpcRdmaHeader error(int xid, int version, int credits, int error) {
        return new RpcRdmaHeader(xid, version, credits, RDMA_ERROR, List.of(), List.of(), null, error, VERSION,
                VERSION);
    }

    /** The octets a chunk's segments cover together (a Write or Reply chunk's capacity, or what was written). */
    public static long chunkLength(List<RdmaSegment> chunk) {
        long length = 0;
        for (RdmaSegment segment : chunk) {
            length += Integer.toUnsignedLong(segment.length());
        }
        return length;
    }

    /**
     * The chunk as a responder returns it after writing {@code written} octets into it (section
     * 3.4.6: each segment's length says what it holds): the segments in order, filled up to their
     * lengths, the rest reporting 0.
     */
    public static List<RdmaSegment> written(List<RdmaSegment> chunk, long written) {
        List<RdmaSegment> result = new ArrayList<>(chunk.size());
        long left = written;
        for (RdmaSegment segment : chunk) {
            long used = Math.min(left, Integer.toUnsignedLong(segment.length()));
            result.add(new RdmaSegment(segment.handle(), (int) used, segment.offset()));
            left -= used;
        }
        return result;
    }

    public void encode(ByteBuf out) {
        Xdr.putInt(out, xid);
        Xdr.putInt(out, version);
        Xdr.putInt(out, credits);
        Xdr.putInt(out, procedure);
        if (procedure == RDMA_ERROR) {
            Xdr.putInt(out, error);
            if (error == ERR_VERS) {
                Xdr.putInt(out, versLow);
                Xdr.putInt(out, versHigh);
            }
            return;
        }
        for (ReadSegment read : readList) {
            Xdr.putBoolean(out, true);
            Xdr.putInt(out, read.position());
            putSegment(out, read.segment());
        }
        Xdr.putBoolean(out, false);
        for (List<RdmaSegment> chunk : writeList) {
            Xdr.putBoolean(out, true);
            putChunk(out, chunk);
        }
        Xdr.putBoolean(out, false);
        Xdr.putBoolean(out, replyChunk != null);
        if (replyChunk != null) {
            putChunk(out, replyChunk);
        }
    }

    /** Octets {@link #encode} writes. */
    public int encodedLength() {
        if (procedure == RDMA_ERROR) {
            return FIXED_LENGTH + (error == ERR_VERS ? 12 : 4);
        }
        int length = FIXED_LENGTH + 12 + readList.size() * 24;
        for (List<RdmaSegment> chunk : writeList) {
            length += 8 + chunk.size() * 16;
        }
        return length + (replyChunk == null ? 0 : 4 + replyChunk.size() * 16);
    }

    /**
     * Decodes a header; the reader index is left on the RPC message (for RDMA_MSG).
     *
     * @throws XdrException when it is short or malformed; a version other than 1 decodes (the
     *     fixed part only) so the caller can answer ERR_VERS, except RDMA_ERROR, whose body is read
     *     in any version (a responder answers ERR_VERS in the version of the call, section 4.5)
     */
    public static RpcRdmaHeader decode(ByteBuf in) {
        int xid = Xdr.getInt(in);
        int version = Xdr.getInt(in);
        int credits = Xdr.getInt(in);
        int procedure = Xdr.getInt(in);
        if (version != VERSION && procedure != RDMA_ERROR) {
            return new RpcRdmaHeader(xid, version, credits, procedure, List.of(), List.of(), null, 0, 0, 0);
        }
        switch (procedure) {
            case RDMA_ERROR: {
                int error = Xdr.getInt(in);
                if (error == ERR_VERS) {
                    return new RpcRdmaHeader(xid, version, credits, procedure, List.of(), List.of(), null, error,
                            Xdr.getInt(in), Xdr.getInt(in));
                }
                if (error != ERR_CHUNK) {
                    throw new XdrException("RDMA_ERROR with unknown error code " + error);
                }
                return new RpcRdmaHeader(xid, version, credits, procedure, List.of(), List.of(), null, error, 0, 0);
            }
            case RDMA_MSG:
            case RDMA_NOMSG:
            case RDMA_MSGP:
                break;
            case RDMA_DONE:
                return new RpcRdmaHeader(xid, version, credits, procedure, List.of(), List.of(), null, 0, 0, 0);
            default:
                throw new XdrException("unknown RPC-over-RDMA procedure " + procedure);
        }
        List<ReadSegment> reads = new ArrayList<>();
        while (Xdr.getBoolean(in)) {
            if (reads.size() == MAX_SEGMENTS) {
                throw new XdrException("a Read list of more than " + MAX_SEGMENTS + " segments");
            }
            reads.add(new ReadSegment(Xdr.getInt(in), getSegment(in)));
        }
        List<List<RdmaSegment>> writes = new ArrayList<>();
        while (Xdr.getBoolean(in)) {
            if (writes.size() == MAX_SEGMENTS) {
                throw new XdrException("a Write list of more than " + MAX_SEGMENTS + " chunks");
            }
            writes.add(getChunk(in));
        }
        List<RdmaSegment> reply = Xdr.getBoolean(in) ? getChunk(in) : null;
        if (procedure == RDMA_MSGP) {
            Xdr.getInt(in); // rdma_align
            Xdr.getInt(in); // rdma_thresh
        }
        return new RpcRdmaHeader(xid, version, credits, procedure, reads, writes, reply, 0, 0, 0);
    }

    private static void putSegment(ByteBuf out, RdmaSegment s) {
        Xdr.putInt(out, s.handle());
        Xdr.putInt(out, s.length());
        Xdr.putHyper(out, s.offset());
    }

    private static void putChunk(ByteBuf out, List<RdmaSegment> chunk) {
        Xdr.putInt(out, chunk.size());
        chunk.forEach(s -> putSegment(out, s));
    }

    private static RdmaSegment getSegment(ByteBuf in) {
        return new RdmaSegment(Xdr.getInt(in), Xdr.getInt(in), Xdr.getHyper(in));
    }

    private static List<RdmaSegment> getChunk(ByteBuf in) {
        int count = Xdr.getLength(in, MAX_SEGMENTS, "a Write or Reply chunk's segment count");
        List<RdmaSegment> chunk = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            chunk.add(getSegment(in));
        }
        return chunk;
    }

    /** The procedure's name as RFC 8166 spells it. */
    public static String procedureName(int procedure) {
        return switch (procedure) {
            case RDMA_MSG -> "RDMA_MSG";
            case RDMA_NOMSG -> "RDMA_NOMSG";
            case RDMA_MSGP -> "RDMA_MSGP";
            case RDMA_DONE -> "RDMA_DONE";
            case RDMA_ERROR -> "RDMA_ERROR";
            default -> "procedure " + procedure;
        };
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder().append(procedureName(procedure)).append(" xid=0x")
                .append(Integer.toHexString(xid)).append(" vers=").append(version).append(" credits=").append(credits);
        if (procedure == RDMA_ERROR) {
            return s.append(error == ERR_VERS ? " ERR_VERS " + versLow + "-" + versHigh : " ERR_CHUNK").toString();
        }
        return s.append(" read=").append(readList).append(" write=").append(writeList).append(" reply=")
                .append(replyChunk).toString();
    }
}
