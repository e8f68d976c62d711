package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;

/**
 * Where {@link FpduDeframer} hands every ULPDU of full operation, from the first FPDU on, once the
 * layer above has given it one ({@link FpduDeframer#deliverTo}): the ULP header as soon as the sink
 * can check it, then the payload, then the end (siw's receive path, {@code siw_qp_rx.c}, works the
 * same way). Called on the channel's event loop, one ULPDU at a time, in stream order.
 *
 * <p>For each ULPDU: {@link #begin} with its first {@link #headerLength} octets; then, when the
 * header did not take the whole ULPDU, the rest as payload, each piece either copied by the sink
 * ({@link #payload}) or already read into the memory the sink named ({@link #placementWindow},
 * {@link #placed}); then {@link #end}.
 *
 * <p>When the connection has CRC (RFC 5044 section 4.4), the deframer holds each FPDU until its CRC
 * is verified and only then calls the sink, all at once: a ULPDU whose CRC fails never reaches it
 * (RFC 5044 section 8), so a header damaged on the wire never decides where octets go. Without CRC
 * the sink is called as the octets arrive, and {@link #end} once the FPDU's trailer is in. A bad
 * marker stops the sequence where it is and the deframer raises its {@link MpaException} down the
 * pipeline.
 */
public interface UlpduSink {

    /**
     * How many octets of the ULPDU the sink needs before it can check it and say where the rest goes:
     * a DDP header (14 tagged, 18 untagged), or the whole ULPDU for a message that is only headers
     * (a Read Request, a Terminate). The deframer clamps the answer to {@code [0, ulpduLength]}.
     *
     * @param ddpControl   the ULPDU's first octet (DDP's control field)
     * @param rdmapControl its second octet (the ULP's, RDMAP's control field)
     * @param ulpduLength  the ULPDU's length
     */
    int headerLength(int ddpControl, int rdmapControl, int ulpduLength);

    /**
     * The ULPDU's first {@link #headerLength} octets (the buffer's readable bytes, valid until
     * {@link #end}; the sink does not release it); a ULPDU shorter than two octets comes whole.
     *
     * @param ulpduLength the ULPDU's length, header included
     */
    void begin(ByteBuf header, int ulpduLength);

    /** {@code length} octets of payload at {@code index} of {@code source}, in order (not to be kept). */
    void payload(ByteBuf source, int index, int length);

    /**
     * Direct placement (CRC off only): a buffer over the memory where the next {@code length} payload
     * octets go, for the socket to read into with no copy in between, or {@code null} when they
     * cannot go there straight (heap memory, a target that is no longer valid, nowhere to go). The
     * buffer is released by whoever reads into it; the sink learns what arrived through {@link
     * #placed}.
     */
    default ByteBuf placementWindow(int length) {
        return null;
    }

    /** {@code length} payload octets arrived straight in the last {@link #placementWindow}. */
    default void placed(int length) {
    }

    /** The ULPDU begun is complete (and, with CRC, verified). */
    void end();
}
